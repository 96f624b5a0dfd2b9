"""No-op statistics: where each head puts its attention across a corpus (Clark et al. 2019),
and whether attention to [SEP]/[CLS] is a no-op (gradients; Kobayashi et al. 2020 norms)."""

from __future__ import annotations

import json

import altair as alt
import pandas as pd
import streamlit as st

from analysis.data import (MAX_MB, corpus_fingerprint, corpus_notes, csv_columns, read_corpus,
                           read_hf_dataset, read_pasted, sample_corpus)
from analysis.errors import DataError
from analysis.models import ModelLoadError
from analysis.stats import (CLI_METRICS, LABELS, corpus_stats, encode_corpus,
                            gradient_importance, loss_head, noop_heads, positional_heads,
                            reading)
from ui.export import chart_downloads
from ui.links import attention_link
from ui.sidebar import context

SOURCES = ["Sample corpus", "Paste", "Upload", "Hugging Face dataset"]
NONE = "(none)"
DEFAULT_CAP = 200
PROPORTIONS = ["cls", "sep", "punct", "self", "prev", "next"]
CAT_LABEL = {"cls": "[CLS]", "sep": "[SEP]", "punct": ". and ,", "other": "other tokens"}
CAT_COLORS = alt.Scale(domain=["[CLS]", "[SEP]", ". and ,", "other tokens"],
                       range=["#d62728", "#1f77b4", "#2ca02c", "#7f7f7f"])
FIG2_COLORS = alt.Scale(domain=["[CLS]", "[SEP]", ". and ,"],
                        range=["#d62728", "#1f77b4", "#2ca02c"])


# ---------------------------------------------------------------------------------------------
# Cached computations


@st.cache_data(max_entries=16, show_spinner=False)
def compute_stats(spec: str, fingerprint: str, n_examples: int, batch_size: int, norms: bool,
                  _loaded, _dataset):
    """Corpus statistics, cached per (model, corpus, settings); shows a progress bar with
    examples/s while it runs (replayed, finished, on a cache hit)."""
    import time

    bar = st.progress(0.0, text=f"Running {n_examples} examples through the model...")
    t0 = time.perf_counter()

    def progress(done, total):
        rate = done / max(time.perf_counter() - t0, 1e-9)
        bar.progress(done / total, text=f"{done} / {total} examples, {rate:.1f} examples/s")

    stats = corpus_stats(_loaded, _dataset, batch_size=batch_size, progress=progress,
                         norms=norms)
    bar.progress(1.0, text=f"{stats.n_examples} examples in {stats.seconds:.1f} s "
                           f"({stats.examples_per_second:.1f} examples/s)")
    return stats


@st.cache_resource(max_entries=2, show_spinner="Looking for the model's loss head...")
def get_loss_head(spec: str):
    return loss_head(spec)


@st.cache_data(max_entries=8, show_spinner=False)
def compute_gradients(spec: str, fingerprint: str, n_examples: int, _loaded, _dataset):
    head = get_loss_head(spec)
    if head.kind is None:
        return None
    bar = st.progress(0.0, text="Back-propagating the loss to every attention weight...")

    def progress(done, total):
        bar.progress(done / total, text=f"Gradients: {done} / {total} examples")

    encs, _ = encode_corpus(_loaded, _dataset, n_examples)
    grads = gradient_importance(head, encs, batch_size=8, progress=progress)
    bar.empty()
    return grads


@st.cache_data(max_entries=4, show_spinner="Loading the dataset...")
def load_hf(name: str, split: str, column: str, pair: str | None, cap: int):
    return read_hf_dataset(name, split, column, pair, max_examples=cap)


# ---------------------------------------------------------------------------------------------
# Frames and charts


def head_frame(stats, names) -> pd.DataFrame:
    rows = []
    for name in names:
        m = stats.metrics[name]
        for l in range(m.shape[0]):
            for h in range(m.shape[1]):
                rows.append({"statistic": name, "label": LABELS.get(name, name),
                             "layer": l + 1, "head": h + 1, "value": float(m[l, h])})
    return pd.DataFrame(rows)


def figure2(stats) -> tuple[alt.Chart, pd.DataFrame]:
    """Clark et al. fig. 2: per-layer mean attention to [CLS], [SEP], punctuation (lines) with
    every head as a point."""
    df = head_frame(stats, ["cls", "sep", "punct"])
    df["to"] = df["statistic"].map(CAT_LABEL)
    base = alt.Chart(df).encode(
        x=alt.X("layer:O", title="layer"),
        color=alt.Color("to:N", title="attention to", scale=FIG2_COLORS),
    )
    points = base.mark_circle(size=28, opacity=0.45).encode(
        y=alt.Y("value:Q", title="average attention", scale=alt.Scale(domain=[0, 1])),
        xOffset=alt.XOffset("to:N"),
        tooltip=["to", "layer", "head", alt.Tooltip("value:Q", format=".3f")],
    )
    lines = base.mark_line(point=True, strokeWidth=2.5).encode(y="mean(value):Q")
    chart = (points + lines).properties(height=320, title="Attention to special tokens and "
                                        "punctuation per layer (points: heads)")
    return chart, df


def heatmap_grid(stats, names, title: str, domain=None, scheme="blues") -> tuple[alt.Chart, pd.DataFrame]:
    df = head_frame(stats, names)
    color = alt.Color("value:Q", title=None,
                      scale=alt.Scale(scheme=scheme, domain=domain) if domain else
                      alt.Scale(scheme=scheme))
    chart = alt.Chart(df).mark_rect().encode(
        x=alt.X("head:O", title="head"),
        y=alt.Y("layer:O", title="layer"),
        color=color,
        tooltip=["label", "layer", "head", alt.Tooltip("value:Q", format=".3f")],
    ).properties(width=190, height=130).facet(
        facet=alt.Facet("label:N", title=None, sort=[LABELS[n] for n in names]), columns=3,
    ).properties(title=title)
    return chart, df


def entropy_chart(stats) -> tuple[alt.Chart, pd.DataFrame]:
    df = head_frame(stats, ["entropy", "entropy_cls"])
    df["rows"] = df["statistic"].map({"entropy": "all tokens", "entropy_cls": "[CLS] only"})
    base = alt.Chart(df).encode(x=alt.X("layer:O"), color=alt.Color("rows:N", title="rows"))
    pts = base.mark_circle(size=28, opacity=0.4).encode(
        y=alt.Y("value:Q", title="entropy (nats)"), xOffset="rows:N",
        tooltip=["rows", "layer", "head", alt.Tooltip("value:Q", format=".3f")])
    lines = base.mark_line(point=True, strokeWidth=2.5).encode(y="mean(value):Q")
    ref = alt.Chart(pd.DataFrame({"uniform": [stats.uniform_entropy]})).mark_rule(
        strokeDash=[6, 4], color="black").encode(y="uniform:Q", tooltip=[
            alt.Tooltip("uniform:Q", title="uniform attention", format=".3f")])
    chart = (pts + lines + ref).properties(
        height=300, title=f"Attention entropy per layer (dashed: uniform attention, "
                          f"{stats.uniform_entropy:.2f} nats)")
    out = df.copy()
    out["uniform_reference"] = stats.uniform_entropy
    return chart, out


def gradient_chart(grads) -> tuple[alt.Chart, pd.DataFrame]:
    rows = []
    for cat, m in grads.per_head.items():
        for l, v in enumerate(m.mean(axis=1)):
            rows.append({"to": CAT_LABEL[cat], "layer": l + 1, "mean_abs_grad": float(v)})
    df = pd.DataFrame(rows)
    chart = alt.Chart(df).mark_line(point=True, strokeWidth=2.5).encode(
        x="layer:O", y=alt.Y("mean_abs_grad:Q", title="mean |dL/dA|"),
        color=alt.Color("to:N", title="attention to", scale=CAT_COLORS),
        tooltip=["to", "layer", alt.Tooltip("mean_abs_grad:Q", title="mean |dL/dA|", format=".3e")],
    ).properties(height=300, title="Gradient of the loss with respect to attention weights")
    return chart, df


def norm_chart(stats) -> tuple[alt.Chart, pd.DataFrame]:
    w = stats.metrics["cls"] + stats.metrics["sep"]
    n = stats.metrics["norm_cls"] + stats.metrics["norm_sep"]
    # field names without brackets: Vega-Lite reads "[...]" in a field name as a nested access
    rows = [{"layer": l + 1, "head": h + 1, "weight": float(w[l, h]), "norm_share": float(n[l, h])}
            for l in range(w.shape[0]) for h in range(w.shape[1])]
    df = pd.DataFrame(rows)
    diag = alt.Chart(pd.DataFrame({"x": [0, 1], "y": [0, 1]})).mark_line(
        strokeDash=[4, 4], color="#999").encode(x="x:Q", y="y:Q")
    pts = alt.Chart(df).mark_circle(size=60, opacity=0.75).encode(
        x=alt.X("weight:Q", title="attention weight on [CLS]+[SEP]",
                scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("norm_share:Q", title="share of ||A f(x)|| on [CLS]+[SEP]",
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("layer:O", scale=alt.Scale(scheme="viridis")),
        tooltip=["layer", "head", alt.Tooltip("weight:Q", title="weight", format=".3f"),
                 alt.Tooltip("norm_share:Q", title="norm share", format=".3f")],
    )
    chart = (diag + pts).properties(
        height=360, width=420,
        title="Weight vs norm share on [CLS]+[SEP] per head (below the diagonal: no-op)")
    return chart, df


# ---------------------------------------------------------------------------------------------
# Page


ctx = context()
loaded = ctx.loaded
L, H = loaded.n_layers, loaded.n_heads

st.title("No-op statistics")
st.caption(
    f"{loaded.name}: {L} layers x {H} heads, numbered from 1. Where does each head put its "
    "attention across a corpus, and is attention to [SEP]/[CLS] a no-op? Token-level statistics "
    "of Clark et al. (2019), averaged over examples; attention norms of Kobayashi et al. (2020)."
)

# -- corpus ----------------------------------------------------------------------------------
c1, c2, c3 = st.columns([3, 1.2, 1.2], vertical_alignment="bottom")
source = c1.segmented_control("Corpus", SOURCES, default=SOURCES[0], key="noop_source") \
    or SOURCES[0]
st.session_state.setdefault("noop_max", DEFAULT_CAP)
cap = int(c2.number_input("Examples (at most)", min_value=1, max_value=20000, step=50,
                          key="noop_max",
                          help="Only the first N examples are used; more takes longer."))
batch_size = int(c3.selectbox("Batch size", [16, 32, 64, 128], index=2, key="noop_batch",
                              help="At most this many examples per forward pass (sorted by "
                                   "length; long inputs get smaller batches)."))
o1, o2, o3 = st.columns([1.2, 1.2, 1.6], vertical_alignment="bottom")
use_norms = o1.toggle("Attention norms", value=True, key="noop_norms",
                      help="Kobayashi et al. 2020: ||A[i,j] f(x_j)||, f = value projection then "
                           "the attention output projection.")
use_grads = o2.toggle("Gradient importance", value=True, key="noop_grads",
                      help="Clark et al. fig. 3: mean |dL/dA| per key category, with the "
                           "model's own loss.")
st.session_state.setdefault("noop_ngrad", 32)
n_grad = int(o3.number_input("Examples for gradients", min_value=1, max_value=2000, step=16,
                             key="noop_ngrad", disabled=not use_grads))

dataset = None
try:
    if source == "Sample corpus":
        dataset = sample_corpus(max_examples=cap)
        st.caption("The bundled sample corpus: 292 English sentences and sentence pairs written "
                   "for this project (data/sample_corpus).")
    elif source == "Paste":
        pasted = st.text_area("One example per line (a tab separates a sentence pair)",
                              key="noop_paste", height=160,
                              placeholder="The soup was cold.\nThe staff were kind.\tWe stayed.")
        if pasted.strip():
            dataset = read_pasted(pasted, max_examples=cap)
        else:
            st.info("Paste some sentences to analyse, one per line.", icon=":material/info:")
    elif source == "Upload":
        up = st.file_uploader(
            f"A .txt (one example per line, tab for pairs), .jsonl (text, text_pair), .csv or "
            f"SemEval .xml file, up to {MAX_MB} MB", type=["txt", "jsonl", "csv", "xml"],
            key="noop_upload")
        if up is not None:
            text_col, pair_col = "text", None
            if up.name.lower().endswith(".csv"):
                cols = csv_columns(up, name=up.name)
                k1, k2 = st.columns(2)
                text_col = k1.selectbox("Text column", cols, key="noop_csv_text",
                                        index=cols.index("text") if "text" in cols else 0)
                pair_col = k2.selectbox("Pair column (optional)", [NONE] + cols,
                                        key="noop_csv_pair")
                pair_col = None if pair_col == NONE else pair_col
            dataset = read_corpus(up, name=up.name, text_column=text_col, pair_column=pair_col,
                                  max_examples=cap)
        else:
            st.info("Upload a corpus file to analyse.", icon=":material/upload_file:")
    else:
        h1, h2, h3, h4 = st.columns(4)
        hf_name = h1.text_input("Dataset id or folder", key="noop_hf_name", placeholder="imdb")
        hf_split = h2.text_input("Split", value="train", key="noop_hf_split")
        hf_col = h3.text_input("Text column", value="text", key="noop_hf_col")
        hf_pair = h4.text_input("Pair column (optional)", key="noop_hf_pair")
        if hf_name.strip():
            dataset = load_hf(hf_name.strip(), hf_split, hf_col.strip(),
                              hf_pair.strip() or None, cap)
        else:
            st.info("Give a Hugging Face dataset id that is in the local cache (or reachable "
                    "online), its split and its text column.", icon=":material/info:")
except DataError as exc:
    st.error(str(exc), icon=":material/error:")
    dataset = None

if dataset is None:
    st.stop()

for note in corpus_notes(dataset):
    st.caption(note)

fingerprint = corpus_fingerprint(dataset)
try:
    stats = compute_stats(ctx.spec, fingerprint, len(dataset), batch_size, use_norms, loaded,
                          dataset)
except DataError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()
for note in stats.notes + ([stats.norms_note] if stats.norms_note else []):
    st.warning(note, icon=":material/info:")

m1, m2, m3, m4 = st.columns(4)
m1.metric("Examples", stats.n_examples, help=f"{stats.n_pairs} of them sentence pairs")
m2.metric("Tokens", f"{stats.n_tokens:,}")
m3.metric("Truncated", stats.n_truncated, help=f"longer than {loaded.max_length} tokens")
m4.metric("Examples / s", f"{stats.examples_per_second:.1f}")

st.subheader("Reading")
st.markdown("\n".join(f"- {line}" for line in reading(stats, loaded.name)))

first = dataset[0]
example_text, example_pair = first["text"], first["text_pair"]


def with_links(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if not df.empty:
        df["open"] = [attention_link(ctx.spec, example_text, example_pair, layer=r["layer"],
                                     head=r["head"]) for r in rows]
    return df


link_col = st.column_config.LinkColumn(
    "Attention page", display_text="open head",
    help=f"Opens the head on the corpus's first example: {example_text[:60]}")

tab_fig, tab_maps, tab_ent, tab_grad, tab_norm, tab_heads = st.tabs(
    ["Special tokens (fig. 2)", "Heatmaps", "Entropy", "Gradients", "Weight vs norm",
     "No-op and positional heads"])

with tab_fig:
    chart, df = figure2(stats)
    st.altair_chart(chart, width="stretch")
    chart_downloads(chart, "noop_fig2", key="noop-fig2", df=df)

with tab_maps:
    chart, df = heatmap_grid(stats, PROPORTIONS, "Share of attention per head", domain=[0, 1])
    st.altair_chart(chart)
    chart_downloads(chart, "noop_heatmaps", key="noop-maps", df=df)
    chart, df = heatmap_grid(stats, ["entropy", "entropy_cls"], "Entropy per head (nats)",
                             scheme="purples")
    st.altair_chart(chart)
    chart_downloads(chart, "noop_entropy_heatmaps", key="noop-ent-maps", df=df)
    if "norm_sep" in stats.metrics:
        chart, df = heatmap_grid(stats, ["norm_cls", "norm_sep", "norm_punct"],
                                 "Norm share per head (Kobayashi et al.)", domain=[0, 1],
                                 scheme="oranges")
        st.altair_chart(chart)
        chart_downloads(chart, "noop_norm_heatmaps", key="noop-norm-maps", df=df)

with tab_ent:
    chart, df = entropy_chart(stats)
    st.altair_chart(chart, width="stretch")
    chart_downloads(chart, "noop_entropy", key="noop-ent", df=df)
    st.caption("Entropy per query row, averaged over rows and examples. Uniform attention over "
               "an example's n tokens has entropy log n; the dashed line is its mean over the "
               "corpus. Heads far below it focus on few tokens; heads near it attend broadly.")

with tab_grad:
    if not use_grads:
        st.info("Gradient importance is switched off above.", icon=":material/info:")
    else:
        try:
            head = get_loss_head(ctx.spec)
        except ModelLoadError as exc:
            head = None
            st.error(str(exc), icon=":material/error:")
        if head is not None and head.kind is None:
            st.info(head.note, icon=":material/info:")
        elif head is not None:
            st.caption(head.note)
            grads = compute_gradients(ctx.spec, fingerprint, min(n_grad, len(dataset)), loaded,
                                      dataset)
            chart, df = gradient_chart(grads)
            st.altair_chart(chart, width="stretch")
            chart_downloads(chart, "noop_gradients", key="noop-grad", df=df)
            st.caption(f"Mean |dL/dA[i,j]| over the cells whose key j is in each category, per "
                       f"layer, over {grads.n_examples} examples. Where the [SEP] line is low, "
                       "changing attention to [SEP] barely changes the loss: a no-op.")

with tab_norm:
    if "norm_sep" not in stats.metrics:
        st.info(stats.norms_note or "Attention norms are switched off above.",
                icon=":material/info:")
    else:
        chart, df = norm_chart(stats)
        st.altair_chart(chart)
        chart_downloads(chart, "noop_weight_vs_norm", key="noop-norm", df=df)
        st.caption("Each point is a head. x: share of attention weight on [CLS]+[SEP]; y: share "
                   "of ||A[i,j] f(x_j)|| (f = value projection then the attention output "
                   "projection) on them. A head far below the diagonal puts weight there but "
                   "moves almost nothing: its attention to [CLS]/[SEP] is a no-op.")

with tab_heads:
    st.markdown("**No-op heads**: most weight on [SEP]/[CLS]")
    noop = with_links(noop_heads(stats, top=10))
    st.dataframe(noop, hide_index=True, column_config={"open": link_col},
                 key="noop_table_noop")
    st.markdown("**Positional heads**: more than 50% on the previous or next token")
    pos = positional_heads(stats, threshold=0.5)
    if pos:
        st.dataframe(with_links(pos), hide_index=True, column_config={"open": link_col},
                     key="noop_table_pos")
    else:
        best = max(((k, float(stats.metrics[k].max())) for k in ("prev", "next")),
                   key=lambda kv: kv[1])
        st.info(f"No head puts more than 50% on the previous or next token; the most is "
                f"{100 * best[1]:.0f}% on the {'previous' if best[0] == 'prev' else 'next'} "
                "token.", icon=":material/info:")

st.download_button(
    "Download all statistics (JSON, same schema as `python -m analysis stats`)",
    data=json.dumps(stats.to_json_dict(CLI_METRICS), indent=1),
    file_name="noop_stats.json", mime="application/json", key="noop_json",
    icon=":material/download:", on_click="ignore",
)
