"""Attention page: head view, model view, neuron view and single-head heatmap."""

from __future__ import annotations

import streamlit as st

from analysis.attention import AttentionResult, attention_for, level_view
from analysis.attention.neuron import NeuronViewUnavailable, neuron_view
from analysis.attention.views import head_view_payload, model_view_payload
from analysis.errors import InputError
from ui.attention import neuron_section
from ui.attention_view import head_view, model_view
from ui.charts import attention_heatmap, csv_download, layer_frame, map_frame
from ui.errors import plain, show_error
from ui.export import chart_downloads
from ui.html import token_chips
from ui.resources import token_capped
from ui.sidebar import context

VIEWS = ["Head view", "Model view", "Neuron view", "Heatmap"]
LONG_INPUT = 96  # above this many tokens, views thin out weak edges / cells
_LAST_GOOD = "_attention_last_good"
_PENDING = "_attention_pending_head"


@st.cache_data(max_entries=16, show_spinner="Running the model...")
def compute(spec: str, text: str, pair: str | None, max_length: int, _loaded) -> AttentionResult:
    return attention_for(_loaded, text, pair)


ctx = context()
loaded = token_capped(ctx.loaded)  # demo mode: at most max_tokens per input
L, H = loaded.n_layers, loaded.n_heads

st.title("Attention")
st.caption(f"{plain(loaded.name)}: {L} layers x {H} heads. Layers and heads are numbered "
           "from 1. Rows are queries (from), columns keys (to); every row sums to 1.")

# Keep the last good view: bad input shows a message and the previous result stays.
try:
    result = compute(ctx.spec, ctx.text, ctx.pair, loaded.max_length, loaded)
    st.session_state[_LAST_GOOD] = (ctx.spec, result)
except InputError as exc:
    show_error(exc)
    last = st.session_state.get(_LAST_GOOD)
    if last is None or last[0] != ctx.spec:
        st.stop()
    result = last[1]
    st.caption("Showing the last input that worked.")

enc = result.encoding
for notice in enc.notices:
    st.warning(plain(notice), icon=":material/info:")
st.markdown(token_chips(enc.tokens, enc.segments, enc.special), unsafe_allow_html=True)

# A head clicked in the model view opens in the head view / heatmap.
pending = st.session_state.pop(_PENDING, None)
if pending is not None:
    st.session_state["layer"], st.session_state["head"] = pending[0] + 1, pending[1] + 1
    st.session_state["view"] = "Heatmap"

c1, c2, c3, c4, c5 = st.columns([4.2, 1, 1, 1.4, 1.6], vertical_alignment="bottom")
view = c1.segmented_control("View", VIEWS, default="Head view", key="view",
                            bind="query-params") or "Head view"
layer = c2.selectbox("Layer", list(range(1, L + 1)), key="layer", bind="query-params")
head = c3.selectbox("Head", list(range(1, H + 1)), key="head", bind="query-params",
                    disabled=view in ("Head view", "Model view"),
                    help="The head view shows every head of the layer; toggle them in its legend.")
level = c4.radio("Level", ["token", "word"], key="level", bind="query-params", horizontal=True,
                 help="Word level (Clark et al. 2019): attention to a word is the sum over its "
                      "pieces, attention from a word the mean.")
hide_special = c5.toggle("Hide [CLS]/[SEP]", key="nospecial", bind="query-params",
                         help="Drop special tokens and renormalise each row to sum to 1.")
l0, h0 = int(layer) - 1, int(head) - 1

labels, maps, segments, special = level_view(result, level, hide_special)
if not labels:
    st.error("Nothing is left to show once the special tokens are hidden.")
    st.stop()
n = len(labels)

if view == "Head view":
    top_k = None
    if n > LONG_INPUT:
        top_k = st.slider("Strongest keys per query (long input)", 1, 20, 5, key="topk",
                          help="Long inputs show only each query's strongest links.")
    payload = head_view_payload(labels, maps[l0], segments, special, layer=l0,
                                is_pair=enc.is_pair, top_k=top_k)
    st.subheader(f"Head view, layer {layer}")
    head_view(payload, key="head_view")
    csv_download(lambda: layer_frame(labels, maps[l0], layer_offset=l0),
                 f"attention_L{layer}_all_heads_{level}.csv", "headview-csv",
                 "CSV of this layer")
elif view == "Model view":
    st.subheader("Model view: every layer and head")
    st.caption("Click a map to open that head in the heatmap.")
    clicked = model_view(model_view_payload(maps), key="model_view")
    csv_download(lambda: layer_frame(labels, maps), f"attention_all_layers_{level}.csv",
                 "modelview-csv", "CSV of every head")
    if clicked is not None:
        st.session_state[_PENDING] = clicked
        st.rerun()
elif view == "Neuron view":
    if level != "token" or hide_special:
        st.info("The neuron view works on tokens with [CLS]/[SEP] kept: it shows the model's "
                "own query and key vectors.")
    options = list(range(enc.n_tokens))
    q = st.selectbox("Query token", options, index=min(1, enc.n_tokens - 1), key="q",
                     format_func=lambda i: f"{i + 1}: {enc.tokens[i]}")
    try:
        nv = neuron_view(loaded, enc, l0, h0, int(q))
    except NeuronViewUnavailable as exc:
        show_error(exc)
    else:
        neuron_section(nv, enc, layer, head)
else:  # Heatmap
    min_weight = 0.0
    if n > LONG_INPUT:
        min_weight = st.slider("Hide cells below", 0.0, 0.2, 0.01, 0.005, key="minw",
                               help="Long inputs draw only cells at or above this weight.")
    matrix = maps[l0, h0]
    df = map_frame(labels, matrix, min_weight)
    chart = attention_heatmap(df, labels, f"Layer {layer}, head {head} ({level} level)")
    st.altair_chart(chart, width="content")
    full = map_frame(labels, matrix)
    chart_downloads(chart, f"attention_L{layer}_H{head}_{level}", "heatmap-dl", full)
    top = full.sort_values("weight", ascending=False).head(10)
    st.caption(plain("Strongest links: " + "; ".join(
        f"{r['from']} -> {r['to']} ({r['weight']:.2f})" for _, r in top.iterrows())))
