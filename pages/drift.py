"""Fine-tuning drift: what fine-tuning changed in each head and layer, over a corpus."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis import compare as C
from analysis.attention import InputError
from analysis.data import corpus_fingerprint, corpus_notes, read_corpus, read_pasted, sample_corpus
from analysis.errors import DataError
from analysis.models import ModelLoadError, normalise_spec
from ui.charts import attention_heatmap, map_frame
from ui.export import chart_downloads
from ui.links import attention_link
from ui.resources import get_model
from ui.sidebar import context

CORPUS_SOURCES = ["Sample corpus", "Upload a file", "Paste sentences"]
KINDS = {"cls": "attention to [CLS]", "sep": "attention to [SEP]",
         "punct": "attention to . and ,"}
BATCH_SIZE = 32


@st.cache_resource(max_entries=2, show_spinner="Loading the fine-tuned model...")
def after_model(spec: str):
    """The after-checkpoint, with its classification head when it has one (read-only)."""
    return C.load_after(spec, get_model)


@st.cache_data(max_entries=8, show_spinner=False)
def run_compare(before_spec: str, after_spec: str, stamps: tuple, corpus_key: str,
                max_examples: int, _before, _after, _dataset):
    corpus = C.corpus_from_dataset(_before.tokenizer, _dataset, max_length=_before.max_length,
                                   max_examples=max_examples)
    return C.compare_models(_before, _after, corpus, batch_size=BATCH_SIZE)


@st.cache_data(max_entries=32, show_spinner=False)
def maps_of(before_spec: str, after_spec: str, text: str, pair: str | None, _before, _after):
    return C.example_maps(_before, _after, text, pair)


def grid_frame(matrix: np.ndarray, value: str) -> pd.DataFrame:
    layers, heads = np.meshgrid(np.arange(matrix.shape[0]), np.arange(matrix.shape[1]),
                                indexing="ij")
    return pd.DataFrame({"layer": layers.ravel() + 1, "head": heads.ravel() + 1,
                         value: matrix.ravel().astype(float)})


def grid_chart(df: pd.DataFrame, value: str, title: str, scale: alt.Scale, fmt: str = ".3f",
               select: bool = False) -> alt.Chart:
    chart = alt.Chart(df, title=title).mark_rect().encode(
        x=alt.X("head:O", title="head"), y=alt.Y("layer:O", title="layer"),
        color=alt.Color(f"{value}:Q", scale=scale, title=value),
        tooltip=["layer:O", "head:O", alt.Tooltip(f"{value}:Q", format=fmt)],
    ).properties(width=40 * df["head"].nunique() + 130, height=34 * df["layer"].nunique() + 90)
    if select:
        chart = chart.add_params(alt.selection_point(name="pick", fields=["layer", "head"]))
    return chart


def map_chart(labels, matrix: np.ndarray, title: str, size: int, **kw) -> alt.Chart:
    """Token-level heatmap of one map; the chart's box leaves room for labels and legend
    (Streamlit fits the whole chart, axes included, into the given size)."""
    width = max(len(str(l)) for l in labels) * 6 + 90
    return attention_heatmap(map_frame(labels, matrix), labels, title, size=size, **kw
                             ).properties(width=size + width, height=size + width - 50)


def diverging(values: np.ndarray) -> alt.Scale:
    lim = float(np.nanmax(np.abs(values))) or 1e-6
    return alt.Scale(scheme="redblue", domain=[-lim, lim], reverse=True)


def on_pick() -> None:
    """A click on the cosine heatmap picks that head in the selectors below it."""
    event = st.session_state.get("drift_cos_chart")
    points = (event or {}).get("selection", {}).get("pick", []) if event else []
    if points:
        st.session_state["drift_layer"] = int(points[0]["layer"])
        st.session_state["drift_head"] = int(points[0]["head"])


# ---------------------------------------------------------------------------------------------
# Inputs

st.title("Fine-tuning drift")
st.caption(
    "What fine-tuning changed, head by head and layer by layer, over a corpus: cosine "
    "similarity of each head's attention maps before vs after (Kovaleva et al. 2019), "
    "layerwise RSA (Merchant et al. 2020) and linear CKA (Kornblith et al. 2019), the drift of "
    "attention to [CLS]/[SEP]/punctuation, and Kovaleva's pattern types."
)
ctx = context()

c1, c2 = st.columns(2)
with c1:
    before_in = st.text_input(
        "Before (hub id or folder)", key="drift_before", placeholder=f"sidebar model: {ctx.spec}",
        help="Leave empty to use the model chosen in the sidebar.")
with c2:
    after_in = st.text_input(
        "After: the fine-tuned checkpoint (hub id or folder)", key="drift_after",
        bind="query-params", placeholder="/path/to/fine-tuned-checkpoint",
        help="A checkpoint of the same architecture and tokenizer as the before model.")
before_spec = normalise_spec(before_in) if before_in.strip() else ctx.spec
after_spec = after_in.strip()

c3, c4 = st.columns([2, 1])
with c3:
    source = st.radio("Corpus", CORPUS_SOURCES, key="drift_source", horizontal=True)
with c4:
    max_examples = int(st.number_input("Max examples", min_value=1, max_value=20000, value=200,
                                       step=50, key="drift_max"))

dataset, labels_note, upload = None, "", None
try:
    if source == CORPUS_SOURCES[0]:
        dataset = sample_corpus(max_examples=max_examples)
    elif source == CORPUS_SOURCES[1]:
        upload = st.file_uploader(
            "Corpus file (.txt one example per line, a tab before a second text; .jsonl with "
            "text / text_pair / label; .csv; SemEval .xml)",
            type=["txt", "tsv", "jsonl", "json", "csv", "xml"], key="drift_upload")
        if upload is not None:
            dataset = read_corpus(upload, max_examples=max_examples, name=upload.name)
            labels, labels_note = C.read_labels(upload, dataset, name=upload.name)
            if labels is not None:
                dataset = dataset.add_column("label", labels)
    else:
        pasted = st.text_area("Sentences, one per line (a tab separates a pair)",
                              key="drift_pasted", height=120)
        if pasted.strip():
            dataset = read_pasted(pasted, max_examples=max_examples)
except (DataError, InputError, UnicodeDecodeError) as exc:
    st.error(str(exc).splitlines()[0], icon=":material/error:")
    st.stop()

if not after_spec:
    st.info(
        "Enter the fine-tuned checkpoint to compare with: a local folder (with config.json and "
        "weights) or a hub id. To get one, fine-tune on the **Aspect heads** page and save it, "
        "or run `python -m analysis finetune --data FILE --task qa_m --out DIR` and paste "
        "DIR here. The before model is the sidebar's model unless you enter another.",
        icon=":material/info:")
    st.stop()
if dataset is None:
    st.info("Choose a corpus: upload a file or paste sentences.", icon=":material/info:")
    st.stop()

try:
    before = get_model(before_spec)
except ModelLoadError as exc:
    st.error(f"Before model: {exc}", icon=":material/error:")
    st.stop()
try:
    after = after_model(normalise_spec(after_spec))
except ModelLoadError as exc:
    st.error(f"After model: {exc}", icon=":material/error:")
    st.stop()
try:
    compat_notes = C.check_compatible(before, after)
except C.CompareError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

for note in corpus_notes(dataset):
    st.caption(note)
key = corpus_fingerprint(dataset) + ("-labels" if "label" in dataset.column_names else "")
try:
    with st.spinner(f"Running both models on {min(len(dataset), max_examples)} examples..."):
        result = run_compare(before.spec, after.spec,
                             (C.checkpoint_stamp(before.spec), C.checkpoint_stamp(after.spec)),
                             key, max_examples, before, after, dataset)
except (DataError, InputError) as exc:
    st.error(str(exc).splitlines()[0], icon=":material/error:")
    st.stop()

# ---------------------------------------------------------------------------------------------
# Summary

L, H = result.n_layers, result.n_heads
cos = result.cosine
if result.identical or result.all_ones:
    st.info(result.summary(), icon=":material/info:")
else:
    st.success(result.summary(), icon=":material/compare_arrows:")
for note in compat_notes + result.notices:
    st.caption(note)
m = st.columns(5)
m[0].metric("Examples", result.n_examples)
m[1].metric("Tokens", int(result.n_tokens.sum()))
m[2].metric("Mean head cosine", f"{cos.mean():.3f}")
lo = np.unravel_index(int(np.argmin(cos)), cos.shape)
m[3].metric("Most changed head", f"{lo[0] + 1}-{lo[1] + 1}", f"cosine {cos[lo]:.3f}",
            delta_color="off", delta_arrow="off")
m[4].metric("RSA / CKA, last layer", f"{result.rsa[-1]:.3f} / {result.cka[-1]:.3f}")

tab_heads, tab_layers, tab_noop, tab_patterns, tab_labels = st.tabs(
    ["Heads: cosine", "Layers: RSA and CKA", "No-op drift", "Pattern types", "By label"])

# ---------------------------------------------------------------------------------------------
with tab_heads:
    st.subheader("Per-head cosine similarity, before vs after")
    st.caption("Mean over examples of cos(flatten(A_before), flatten(A_after)) on each example's "
               "real tokens. 1 = unchanged; low = the head changed most. Click a cell to pick "
               "that head.")
    df_cos = grid_frame(cos, "cosine")
    lo_val = float(min(cos.min(), 0.999))
    chart_cos = grid_chart(df_cos, "cosine", "Cosine similarity per head",
                           alt.Scale(scheme="viridis", domain=[lo_val, 1.0]), select=True)
    st.altair_chart(chart_cos, key="drift_cos_chart", on_select=on_pick,
                    selection_mode="pick", width="content")
    chart_downloads(chart_cos, "drift_cosine", key="dl-drift-cos", df=df_cos)

    df_layer = pd.DataFrame({"layer": np.arange(1, L + 1), "mean cosine": cos.mean(1),
                             "min cosine": cos.min(1)})
    chart_layer = alt.Chart(df_layer, title="Per-layer mean cosine").mark_bar().encode(
        x=alt.X("layer:O"), y=alt.Y("mean cosine:Q", scale=alt.Scale(zero=False)),
        tooltip=["layer:O", alt.Tooltip("mean cosine:Q", format=".4f"),
                 alt.Tooltip("min cosine:Q", format=".4f")],
    ).properties(width=34 * H, height=200)
    st.altair_chart(chart_layer)
    chart_downloads(chart_layer, "drift_cosine_per_layer", key="dl-drift-layer", df=df_layer)

    st.subheader("One head")
    p1, p2 = st.columns(2)
    if st.session_state.get("drift_layer") not in range(1, L + 1):
        st.session_state["drift_layer"] = int(lo[0]) + 1
    if st.session_state.get("drift_head") not in range(1, H + 1):
        st.session_state["drift_head"] = int(lo[1]) + 1
    layer = int(p1.selectbox("Layer", list(range(1, L + 1)), key="drift_layer"))
    head = int(p2.selectbox("Head", list(range(1, H + 1)), key="drift_head"))
    per_ex = result.cosine_examples[:, layer - 1, head - 1]
    st.caption(f"Head {layer}-{head}: mean cosine {per_ex.mean():.3f}, median "
               f"{np.median(per_ex):.3f}, min {per_ex.min():.3f} over {len(per_ex)} examples.")
    df_dist = pd.DataFrame({"example": np.arange(len(per_ex)), "cosine": per_ex.astype(float)})
    chart_dist = alt.Chart(df_dist, title=f"Cosine over examples, head {layer}-{head}").mark_bar(
    ).encode(x=alt.X("cosine:Q", bin=alt.Bin(maxbins=30), title="cosine"),
             y=alt.Y("count():Q", title="examples")).properties(height=200, width=420)
    st.altair_chart(chart_dist)
    chart_downloads(chart_dist, f"drift_head_{layer}_{head}_distribution", key="dl-drift-dist",
                    df=df_dist)

    order = np.argsort(per_ex, kind="stable")
    df_low = pd.DataFrame({
        "example": order[:10],
        "cosine": per_ex[order[:10]].astype(float),
        "text": [result.texts[i] + (f"  |  {result.pairs[i]}" if result.pairs[i] else "")
                 for i in order[:10]],
        "attention page (before)": [attention_link(before.spec, result.texts[i], result.pairs[i],
                                                   layer, head) for i in order[:10]],
    })
    st.dataframe(df_low, hide_index=True, column_config={
        "attention page (before)": st.column_config.LinkColumn(display_text="open head"),
        "cosine": st.column_config.NumberColumn(format="%.4f")}, key="drift_low_table")

    choice = st.selectbox(
        "Example (most changed first)", order[: min(len(order), 200)].tolist(),
        format_func=lambda i: f"{per_ex[i]:.3f}  {result.texts[i][:90]}",
        key=f"drift_example_{layer}_{head}")
    enc, mb, ma = maps_of(before.spec, after.spec, result.texts[choice], result.pairs[choice],
                          before, after)
    labels = list(enc.tokens)
    a_b, a_a = mb[layer - 1, head - 1], ma[layer - 1, head - 1]
    size = int(min(280, max(180, 10 * len(labels))))
    lim = float(np.abs(a_a - a_b).max() or 1e-6)
    charts = [
        map_chart(labels, a_b, "before", size),
        map_chart(labels, a_a, "after", size),
        map_chart(labels, a_a - a_b, "after - before", size, scheme="redblue",
                  domain=(-lim, lim)),
    ]
    st.caption(f"Example {choice}, head {layer}-{head}: cosine "
               f"{C.head_cosine(a_b[None, None], a_a[None, None])[0, 0]:.4f}.")
    cols = st.columns(3)
    for col, chart, name in zip(cols, charts, ("before", "after", "difference")):
        with col:
            st.altair_chart(chart, width="content")
            chart_downloads(chart, f"drift_{name}_{layer}_{head}", key=f"dl-drift-map-{name}")

# ---------------------------------------------------------------------------------------------
with tab_layers:
    st.subheader("Layerwise representation similarity")
    st.caption("Layer 0 is the embeddings. RSA: Pearson correlation of the token-by-token "
               "cosine-similarity triangles of both models' hidden states, per example, averaged "
               "over examples. Linear CKA: over all tokens of the corpus, centred. 1 = the same "
               "geometry; lower = the layer changed more.")
    df_rep = pd.DataFrame({"layer": np.arange(L + 1), "RSA": result.rsa, "CKA": result.cka})
    long = df_rep.melt("layer", var_name="measure", value_name="similarity")
    chart_rep = alt.Chart(long, title="RSA and linear CKA per layer").mark_line(point=True).encode(
        x=alt.X("layer:O", title="layer (0 = embeddings)"),
        y=alt.Y("similarity:Q", scale=alt.Scale(zero=False)), color="measure:N",
        tooltip=["layer:O", "measure:N", alt.Tooltip("similarity:Q", format=".4f")],
    ).properties(width=420, height=260)
    st.altair_chart(chart_rep)
    chart_downloads(chart_rep, "drift_rsa_cka", key="dl-drift-rep", df=df_rep)
    st.dataframe(df_rep, hide_index=True, key="drift_rep_table", column_config={
        "RSA": st.column_config.NumberColumn(format="%.4f"),
        "CKA": st.column_config.NumberColumn(format="%.4f")})

# ---------------------------------------------------------------------------------------------
with tab_noop:
    st.subheader("No-op drift")
    st.caption("Change (after - before) in the mean share of attention each head puts on "
               "[CLS], [SEP] and punctuation (Clark et al. 2019 statistics). Red = more after "
               "fine-tuning, i.e. a move towards the vertical pattern.")
    kind = st.radio("Statistic", list(KINDS), format_func=KINDS.get, key="drift_noop_kind",
                    horizontal=True)
    delta = result.noop_delta[kind]
    df_delta = grid_frame(delta, "change")
    df_delta["before"] = result.noop_before[kind].ravel()
    df_delta["after"] = result.noop_after[kind].ravel()
    chart_delta = grid_chart(df_delta, "change", f"Change in {KINDS[kind]}", diverging(delta))
    st.altair_chart(chart_delta, width="content")
    chart_downloads(chart_delta, f"drift_noop_{kind}", key="dl-drift-noop", df=df_delta)
    df_nl = pd.DataFrame({
        "layer": np.tile(np.arange(1, L + 1), 2),
        "model": ["before"] * L + ["after"] * L,
        "share": np.concatenate([result.noop_before[kind].mean(1),
                                 result.noop_after[kind].mean(1)]),
    })
    chart_nl = alt.Chart(df_nl, title=f"Per-layer mean {KINDS[kind]}").mark_line(
        point=True).encode(x="layer:O", y=alt.Y("share:Q"), color="model:N",
                           tooltip=["layer:O", "model:N", alt.Tooltip("share:Q", format=".4f")]
                           ).properties(width=420, height=220)
    st.altair_chart(chart_nl)
    chart_downloads(chart_nl, f"drift_noop_{kind}_layers", key="dl-drift-noop-layers", df=df_nl)

# ---------------------------------------------------------------------------------------------
with tab_patterns:
    st.subheader("Pattern types (Kovaleva et al. 2019)")
    st.caption("Every (example, head) map gets three transparent features: **vertical** = mean "
               "mass on [CLS]/[SEP] columns; **diagonal** = mean mass on i-1, i, i+1; **block** = "
               "1 - mean total-variation distance from uniform attention over the own segment's "
               "tokens. The rules below turn them into a type; move the thresholds to see how "
               "the shares respond.")
    s = st.columns(4)
    thr = C.PatternThresholds(
        vertical=s[0].slider("vertical >=", 0.0, 1.0, 0.5, 0.05, key="drift_t_vertical"),
        diagonal=s[1].slider("diagonal >=", 0.0, 1.0, 0.5, 0.05, key="drift_t_diagonal"),
        mixed=s[2].slider("both (vertical+diagonal) >=", 0.0, 1.0, 0.3, 0.05, key="drift_t_mixed"),
        block=s[3].slider("block >=", 0.0, 1.0, 0.6, 0.05, key="drift_t_block"),
    )
    st.markdown("\n".join(f"{k + 1}. {line}" for k, line in enumerate(thr.describe())))
    tb, ta = result.pattern_types(thr)
    sb, sa = C.pattern_shares(tb), C.pattern_shares(ta)
    df_share = pd.DataFrame({"type": list(C.PATTERN_TYPES) * 2,
                             "model": ["before"] * 5 + ["after"] * 5,
                             "share": [sb[t] for t in C.PATTERN_TYPES] + [sa[t] for t in
                                                                          C.PATTERN_TYPES]})
    chart_share = alt.Chart(df_share, title="Share of maps per type").mark_bar().encode(
        x=alt.X("type:N", sort=list(C.PATTERN_TYPES), title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("model:N", sort=["before", "after"]),
        y=alt.Y("share:Q", axis=alt.Axis(format="%")), color=alt.Color("model:N",
                                                                        sort=["before", "after"]),
        tooltip=["type:N", "model:N", alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=460, height=240)
    st.altair_chart(chart_share)
    chart_downloads(chart_share, "drift_pattern_shares", key="dl-drift-share", df=df_share)
    moves = pd.DataFrame(C.pattern_transitions(tb, ta), columns=list(C.PATTERN_TYPES))
    moves.insert(0, "before / after", list(C.PATTERN_TYPES))
    st.caption("How maps moved between types (rows: before, columns: after; counts of "
               "example-head maps).")
    st.dataframe(moves, hide_index=True, key="drift_moves_table")

    g1, g2 = st.columns(2)
    pattern = g1.selectbox("Gallery: type", list(C.PATTERN_TYPES), key="drift_gallery_type")
    which = g2.radio("Maps of", ["before", "after"], key="drift_gallery_model", horizontal=True)
    picks = C.gallery(result, which, pattern, thr, k=6)
    if not picks:
        st.info(f"No {which} map is of type {pattern} with these thresholds.",
                icon=":material/info:")
    else:
        feats = result.features_before if which == "before" else result.features_after
        cols = st.columns(3)
        for k, (ex, li, hi) in enumerate(picks):
            enc_g, gb, ga = maps_of(before.spec, after.spec, result.texts[ex], result.pairs[ex],
                                    before, after)
            mat = (gb if which == "before" else ga)[li, hi]
            v, d, b = feats[ex, li, hi]
            with cols[k % 3]:
                st.altair_chart(map_chart(enc_g.tokens, mat, f"ex {ex}, head {li + 1}-{hi + 1}",
                                          200), width="content")
                st.caption(f"vertical {v:.2f} · diagonal {d:.2f} · block {b:.2f}")

# ---------------------------------------------------------------------------------------------
with tab_labels:
    st.subheader("Split by label and by prediction")
    groups = result.groups()
    note = labels_note or result.label_note
    if note:
        st.info(note, icon=":material/info:")
    for name, title in (("label", "gold label"), ("prediction", "after-model's prediction")):
        if name not in groups:
            continue
        grp = groups[name]
        if name == "label":
            labs = np.array([str(x) for x in result.labels])
            counts = {g: int((labs == g).sum()) for g in grp}
        else:
            correct = result.correct
            counts = {"correct": int(correct.sum()), "wrong": int((~correct).sum())}
        df_g = pd.DataFrame({
            "group": list(grp), "examples": [counts[g] for g in grp],
            "mean cosine": [float(v.mean()) for v in grp.values()],
            "last layer mean cosine": [float(v[-1].mean()) for v in grp.values()],
        })
        st.markdown(f"**By {title}**")
        st.dataframe(df_g, hide_index=True, key=f"drift_group_{name}")
        df_gl = pd.DataFrame([{"group": g, "layer": li + 1, "mean cosine": float(v[li].mean())}
                              for g, v in grp.items() for li in range(L)])
        chart_g = alt.Chart(df_gl, title=f"Per-layer mean cosine by {title}").mark_line(
            point=True).encode(x="layer:O", y=alt.Y("mean cosine:Q", scale=alt.Scale(zero=False)),
                               color="group:N",
                               tooltip=["group:N", "layer:O",
                                        alt.Tooltip("mean cosine:Q", format=".4f")]
                               ).properties(width=420, height=220)
        st.altair_chart(chart_g)
        chart_downloads(chart_g, f"drift_by_{name}", key=f"dl-drift-group-{name}", df=df_gl)
