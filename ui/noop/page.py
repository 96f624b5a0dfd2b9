"""No-op statistics: where each head puts its attention across a corpus (Clark et al. 2019),
and whether attention to [SEP]/[CLS] is a no-op (gradients; Kobayashi et al. 2020 norms).
docs/METHODS.md sections 3, 4 and 5."""

from __future__ import annotations

import json

import streamlit as st

from analysis.core.errors import DataError
from analysis.noop import reading
from analysis.core.models import ModelLoadError
from ui.common.chart_cache import cached_chart
from ui.common.frame.corpus import (cap_widget, corpus_name, corpus_picker,
                              fingerprint as corpus_fingerprint, session_only_note)
from ui.common.exports.download import download_button
from ui.common.errors import plain, show_error
from ui.common.exports.export import json_help, json_label
from ui.common.frame.links import copy_link
from ui.noop import state
from ui.noop.blocks import (EXPLAIN, PROPORTIONS, compute_stats, entropy_chart, figure2,
                            get_loss_head, gradients_block, heads_tables, heatmap_grid, layer_table,
                            norm_chart, show_chart, stats_key, token_limit)
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.server.settings import settings
from ui.common.frame.sidebar import page_header


def render() -> None:
    """The page, top to bottom (pages/noop.py calls it on every run)."""
    ctx = page_header("No-op statistics", (
        "Where does each head put its attention across a corpus, and is attention to [SEP]/[CLS] "
        "a no-op? Token-level statistics of Clark et al. (2019), averaged over examples (the "
        "share on each kind of token, and the attention's entropy in nats); attention norms of "
        "Kobayashi et al. (2020)."))
    loaded = ctx.loaded

    # -- corpus and settings (every control is in the URL: a copied link opens this view) ----------
    dataset = corpus_picker(state.CORPUS, default_cap=200)
    try:
        loss = get_loss_head(ctx.spec)
        no_loss = loss.note if loss.kind is None else None
    except ModelLoadError as exc:
        no_loss = str(exc)
    o0, o1, o2, o3 = st.columns([1.2, 1.2, 1.2, 1.6], vertical_alignment="bottom")
    batch_size = int(o0.selectbox("Batch size", [16, 32, 64, 128], index=2, key=state.BATCH,
                                  bind="query-params",
                                  help="At most this many examples per forward pass (sorted by "
                                       "length; long inputs get smaller batches)."))
    use_norms = o1.toggle("Attention norms", value=True, key=state.NORMS, bind="query-params",
                          help="Kobayashi et al. 2020: ||A[i,j] f(x_j)||, f = value projection "
                               "then "
                               "the attention output projection.")
    use_grads = o2.toggle("Gradient importance", value=no_loss is None, key=state.GRADIENTS,
                          bind="query-params", disabled=no_loss is not None,
                          help=("Clark et al. fig. 3: mean |dL/dA| per key category, with the "
                                "model's own loss." if no_loss is None else
                                "Not available for this model: it has no loss to take gradients "
                                "of (see the Gradients tab).")) and no_loss is None
    n_grad = cap_widget(o3, state.GRADIENT_EXAMPLES, "Examples for gradients", 32,
                        settings().cap("max_gradient_examples", 2000), 16, disabled=not use_grads,
                        bind=True)
    copy_link(state.COPY, note=session_only_note(state.CORPUS))
    if dataset is None:
        st.stop()

    # -- the statistics --------------------------------------------------------------------------
    fingerprint = corpus_fingerprint(dataset)
    try:
        result_key = stats_key(ctx.spec, fingerprint, len(dataset), batch_size, use_norms, loaded)
        stats = compute_stats(result_key, loaded, dataset)
    except DataError as exc:
        show_error(exc)
        st.stop()


    def chart(name: str, build):
        """A chart built once per result: keyed on what the statistics' own cache is keyed on."""
        return cached_chart(result_key.chart_key(name), build)


    for note in stats.notes + ([stats.norms_note] if stats.norms_note else []):
        st.warning(plain(note), icon=":material/info:")

    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Examples", stats.n_examples, help=f"{stats.n_pairs} of them sentence pairs")
    m2.metric("Tokens", f"{stats.n_tokens:,}")
    m3.metric("Truncated", stats.n_truncated, help=f"longer than {token_limit(loaded)} tokens")
    m4.metric("Examples / s", f"{stats.examples_per_second:.1f}")

    st.subheader("Reading")
    lines = reading(stats, loaded.name)  # the report's copy; the page shows the name as plain text
    st.markdown(glossed("\n".join(f"- {line}" for line in reading(stats, plain(loaded.name)))))
    source = dict(loaded=loaded, data=corpus_name(state.CORPUS, dataset), page="No-op statistics",
                  url_path="noop", settings={"batch size": batch_size,
                                             "attention norms": use_norms})
    numbers = {"Examples": str(stats.n_examples), "Tokens": f"{stats.n_tokens:,}"}
    add_button("No-op statistics: the reading", state.ADD_READING, reading=lines, numbers=numbers,
               **source)
    layer_table(stats)

    tab_fig, tab_maps, tab_ent, tab_grad, tab_norm, tab_heads = st.tabs(
        ["Special tokens (fig. 2)", "Heatmaps", "Entropy", "Gradients", "Weight vs norm",
         "No-op and positional heads"], key=state.TAB, bind="query-params")

    with tab_fig:
        explain(EXPLAIN["fig2"])
        show_chart(chart("fig2", lambda: figure2(stats)), "noop_fig2", state.CHART_FIG2,
                   stretch=True,
                   report=source)

    with tab_maps:
        explain(EXPLAIN["maps"])
        show_chart(chart("maps", lambda: heatmap_grid(stats, PROPORTIONS, "Share of attention per "
                                                      "head (each map: 0 to its largest)")),
                   "noop_heatmaps", state.CHART_MAPS, report=source)
        show_chart(chart("entropy maps", lambda: heatmap_grid(
            stats, ["entropy", "entropy_cls"], "Entropy per head (nats)", scheme="purples")),
            "noop_entropy_heatmaps", state.CHART_ENTROPY_MAPS, report=source)
        if "norm_sep" in stats.metrics:
            show_chart(chart("norm maps", lambda: heatmap_grid(
                stats, ["norm_cls", "norm_sep", "norm_punct"],
                "Norm share per head (Kobayashi et al.)", scheme="oranges")),
                "noop_norm_heatmaps", state.CHART_NORM_MAPS, report=source)

    with tab_ent:
        explain(EXPLAIN["entropy"])
        show_chart(chart("entropy", lambda: entropy_chart(stats)), "noop_entropy",
                   state.CHART_ENTROPY,
                   stretch=True, report=source)
        st.caption("Entropy per query row, averaged over rows and examples. Uniform attention over "
                   "an example's n tokens has entropy log n; the dashed line is its mean over the "
                   "corpus. Heads far below it focus on few tokens; heads near it attend broadly.")

    with tab_grad:
        explain(EXPLAIN["gradients"])
        if no_loss is not None:
            st.info(plain(no_loss), icon=":material/info:")
        elif not use_grads:
            st.info("Gradient importance is switched off above.", icon=":material/info:")
        else:
            gradients_block(ctx.spec, fingerprint, min(n_grad, len(dataset)), loaded, dataset,
                            report=source)

    with tab_norm:
        if "norm_sep" not in stats.metrics:
            st.info(plain(stats.norms_note or "Attention norms are switched off above."),
                    icon=":material/info:")
        else:
            explain(EXPLAIN["norms"])
            show_chart(chart("norms", lambda: norm_chart(stats)), "noop_weight_vs_norm",
                       state.CHART_NORMS, report=source)
            st.caption("Each point is a head. x: share of attention weight on [CLS]+[SEP]; y: "
                       "share "
                       "of ||A[i,j] f(x_j)|| (f = value projection then the attention output "
                       "projection) on them. A head far below the diagonal puts weight there but "
                       "moves almost nothing: its attention to [CLS]/[SEP] is a no-op.")

    with tab_heads:
        first = dataset[0]
        explain(EXPLAIN["heads"])
        heads_tables(stats, ctx.spec, first["text"], first["text_pair"], report=source)

    download_button(json_label("all statistics"),
                    lambda: json.dumps(stats.to_json(), indent=1),
                    "noop_stats.json", "application/json", state.JSON,
                    help=json_help("python -m analysis noop"))
