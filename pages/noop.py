"""No-op statistics: where each head puts its attention across a corpus (Clark et al. 2019),
and whether attention to [SEP]/[CLS] is a no-op (gradients; Kobayashi et al. 2020 norms).
docs/METHODS.md sections 3, 4 and 5."""

from __future__ import annotations

import json

import streamlit as st

from analysis.corpus import corpus_fingerprint
from analysis.errors import DataError
from analysis.noop import CLI_METRICS, reading
from ui.corpus import cap_widget, corpus_picker
from ui.errors import plain, show_error
from ui.noop import (PROPORTIONS, compute_stats, entropy_chart, figure2, gradients_block,
                     heads_tables, heatmap_grid, norm_chart, show_chart, token_limit)
from ui.settings import settings
from ui.sidebar import context

ctx = context()
loaded = ctx.loaded
L, H = loaded.n_layers, loaded.n_heads

st.title("No-op statistics")
st.caption(
    f"{plain(loaded.name)}: {L} layers x {H} heads, numbered from 1. Where does each head put "
    "its attention across a corpus, and is attention to [SEP]/[CLS] a no-op? Token-level "
    "statistics of Clark et al. (2019), averaged over examples; attention norms of Kobayashi "
    "et al. (2020)."
)

# -- corpus and settings ---------------------------------------------------------------------
dataset = corpus_picker("noop", default_cap=200)
o0, o1, o2, o3 = st.columns([1.2, 1.2, 1.2, 1.6], vertical_alignment="bottom")
batch_size = int(o0.selectbox("Batch size", [16, 32, 64, 128], index=2, key="noop_batch",
                              help="At most this many examples per forward pass (sorted by "
                                   "length; long inputs get smaller batches)."))
use_norms = o1.toggle("Attention norms", value=True, key="noop_norms",
                      help="Kobayashi et al. 2020: ||A[i,j] f(x_j)||, f = value projection then "
                           "the attention output projection.")
use_grads = o2.toggle("Gradient importance", value=True, key="noop_grads",
                      help="Clark et al. fig. 3: mean |dL/dA| per key category, with the "
                           "model's own loss.")
n_grad = cap_widget(o3, "noop_ngrad", "Examples for gradients", 32,
                    settings().cap("max_gradient_examples", 2000), 16, disabled=not use_grads)
if dataset is None:
    st.stop()

# -- the statistics --------------------------------------------------------------------------
fingerprint = corpus_fingerprint(dataset)
try:
    stats = compute_stats(ctx.spec, fingerprint, len(dataset), batch_size, use_norms, loaded,
                          dataset)
except DataError as exc:
    show_error(exc)
    st.stop()
for note in stats.notes + ([stats.norms_note] if stats.norms_note else []):
    st.warning(plain(note), icon=":material/info:")

m1, m2, m3, m4 = st.columns(4)
m1.metric("Examples", stats.n_examples, help=f"{stats.n_pairs} of them sentence pairs")
m2.metric("Tokens", f"{stats.n_tokens:,}")
m3.metric("Truncated", stats.n_truncated, help=f"longer than {token_limit(loaded)} tokens")
m4.metric("Examples / s", f"{stats.examples_per_second:.1f}")

st.subheader("Reading")
st.markdown("\n".join(f"- {line}" for line in reading(stats, plain(loaded.name))))

tab_fig, tab_maps, tab_ent, tab_grad, tab_norm, tab_heads = st.tabs(
    ["Special tokens (fig. 2)", "Heatmaps", "Entropy", "Gradients", "Weight vs norm",
     "No-op and positional heads"])

with tab_fig:
    show_chart(*figure2(stats), "noop_fig2", "noop-fig2", stretch=True)

with tab_maps:
    show_chart(*heatmap_grid(stats, PROPORTIONS, "Share of attention per head", domain=[0, 1]),
               "noop_heatmaps", "noop-maps")
    show_chart(*heatmap_grid(stats, ["entropy", "entropy_cls"], "Entropy per head (nats)",
                             scheme="purples"), "noop_entropy_heatmaps", "noop-ent-maps")
    if "norm_sep" in stats.metrics:
        show_chart(*heatmap_grid(stats, ["norm_cls", "norm_sep", "norm_punct"],
                                 "Norm share per head (Kobayashi et al.)", domain=[0, 1],
                                 scheme="oranges"), "noop_norm_heatmaps", "noop-norm-maps")

with tab_ent:
    show_chart(*entropy_chart(stats), "noop_entropy", "noop-ent", stretch=True)
    st.caption("Entropy per query row, averaged over rows and examples. Uniform attention over "
               "an example's n tokens has entropy log n; the dashed line is its mean over the "
               "corpus. Heads far below it focus on few tokens; heads near it attend broadly.")

with tab_grad:
    if not use_grads:
        st.info("Gradient importance is switched off above.", icon=":material/info:")
    else:
        gradients_block(ctx.spec, fingerprint, min(n_grad, len(dataset)), loaded, dataset)

with tab_norm:
    if "norm_sep" not in stats.metrics:
        st.info(plain(stats.norms_note or "Attention norms are switched off above."),
                icon=":material/info:")
    else:
        show_chart(*norm_chart(stats), "noop_weight_vs_norm", "noop-norm")
        st.caption("Each point is a head. x: share of attention weight on [CLS]+[SEP]; y: share "
                   "of ||A[i,j] f(x_j)|| (f = value projection then the attention output "
                   "projection) on them. A head far below the diagonal puts weight there but "
                   "moves almost nothing: its attention to [CLS]/[SEP] is a no-op.")

with tab_heads:
    first = dataset[0]
    heads_tables(stats, ctx.spec, first["text"], first["text_pair"])

st.download_button(
    "Download all statistics (JSON, same schema as `python -m analysis noop`)",
    data=json.dumps(stats.to_json_dict(CLI_METRICS), indent=1),
    file_name="noop_stats.json", mime="application/json", key="noop_json",
    icon=":material/download:", on_click="ignore",
)
