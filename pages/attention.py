"""Attention page: head view, model view, neuron view and single-head heatmap."""

from __future__ import annotations

import numpy as np
import streamlit as st

from analysis.attention import AttentionResult, attention_for, level_view
from analysis.attention.views import heatmap_payload, views_payload
from analysis.errors import InputError
from ui.attention.blocks import EXPLAIN, attention_reading_block, attention_report, neuron_block
from ui.attention.component import (SEGMENTS, VIEW_NAMES, attention_views, set_param, url_heads,
                               url_pin, url_segment)
from ui.common.charts import attention_heatmap, csv_download, layer_frame, map_frame
from ui.common.errors import plain, show_error
from ui.common.export import EXPORT_MAX_ROWS, blocks_chart, map_downloads
from ui.common.html import token_chips
from ui.common.links import copy_link, folder_note
from ui.common.findings import explain
from ui.common.resources import token_capped
from ui.common.sidebar import context

VIEWS = ["Head view", "Model view", "Neuron view", "Heatmap"]
LONG_INPUT = 96  # above this many tokens, the heatmap is drawn on a canvas in the component
_LAST_GOOD = "_attention_last_good"
_VIEWS_KEY = "attention_views"
_DIMS = "_attention_dims"  # (layers, heads, labels) of the last run, to check reported state
_ASKED = "_attention_asked"  # the state the page last asked the component for


# cache_resource, not cache_data: a rerun gets the cached maps without unpickling a copy
# (72 MB for a 512-token pair: ~200 ms a rerun); they are shared, so made read-only
@st.cache_resource(max_entries=16, show_spinner="Running the model...")
def compute(spec: str, text: str, pair: str | None, max_length: int, _loaded) -> AttentionResult:
    result = attention_for(_loaded, text, pair)
    result.attentions.setflags(write=False)
    return result


@st.cache_resource(max_entries=8, show_spinner="Packing every layer for the browser...")
def views_data(spec: str, text: str, pair: str | None, max_length: int, level: str,
               hide_special: bool, _result: AttentionResult) -> dict:
    labels, maps, segments, special = level_view(_result, level, hide_special)
    return views_payload(labels, maps, segments, special, is_pair=_result.encoding.is_pair)


def follow_component() -> None:
    """The component reported its state: the widgets and the URL follow (runs before the
    script, so widget state is set before the widgets exist; nothing is recomputed)."""
    state = (st.session_state.get(_VIEWS_KEY) or {}).get("state")
    dims = st.session_state.get(_DIMS)
    if not isinstance(state, dict) or dims is None:
        return
    # only the keys the user changed in the view: a widget set meanwhile keeps its value
    changed = state.get("changed")
    if isinstance(changed, list):
        state = {k: v for k, v in state.items() if k in changed}
    else:
        asked = st.session_state.get(_ASKED, {})
        state = {k: v for k, v in state.items() if asked.get(k, "unset") != v}
    n_layers, n_heads, n = dims
    if state.get("view") in VIEW_NAMES:
        st.session_state["view"] = VIEW_NAMES[state["view"]]
    layer = state.get("layer")
    if isinstance(layer, int) and 0 <= layer < n_layers:
        st.session_state["layer"] = layer + 1
    if "heads" in state:
        heads = state["heads"]
        valid = isinstance(heads, list) and heads and all(
            isinstance(h, int) and 0 <= h < n_heads for h in heads)
        if valid and len(heads) == 1:
            st.session_state["head"] = heads[0] + 1
        set_param("heads", ",".join(str(h + 1) for h in sorted(heads)) if valid else None)
    if "pin" in state:
        pin = state["pin"]
        ok = (isinstance(pin, dict) and pin.get("side") in ("from", "to")
              and isinstance(pin.get("index"), int) and 0 <= pin["index"] < n)
        set_param("pin", (f"{pin['index'] + 1}" if pin["side"] == "from"
                          else f"to:{pin['index'] + 1}") if ok else None)
    if "segment" in state:
        seg = state["segment"]
        set_param("seg", seg if seg in SEGMENTS and seg != "All" else None)


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

copy_link("attention_copy", note=folder_note(ctx.spec))
enc = result.encoding
for notice in enc.notices:
    st.warning(plain(notice), icon=":material/info:")
st.markdown(token_chips(enc.tokens, enc.segments, enc.special), unsafe_allow_html=True)

if "view" not in st.session_state and "view" not in st.query_params:
    st.session_state["view"] = "Head view"  # set before the widget (no default= with state)
c1, c2, c3, c4, c5 = st.columns([4.2, 1, 1, 1.4, 1.6], vertical_alignment="bottom")
view = c1.segmented_control("View", VIEWS, key="view", bind="query-params",
                            wrap=True) or "Head view"  # wraps on a phone instead of overflowing
layer = c2.selectbox("Layer", list(range(1, L + 1)), key="layer", bind="query-params",
                     disabled=view == "Model view",
                     help="The model view shows every layer; click a map to open it.")
head = c3.selectbox("Head", list(range(1, H + 1)), key="head", bind="query-params",
                    disabled=view in ("Head view", "Model view"),
                    help="The head view shows every head of the layer; toggle them in its legend.")
level = c4.radio("Level", ["token", "word"], key="level", bind="query-params", horizontal=True,
                 help="Word level (Clark et al. 2019): attention to a word is the sum over its "
                      "pieces, attention from a word the mean.")
hide_special = c5.toggle("No specials", key="nospecial", bind="query-params",
                         help="Hide [CLS]/[SEP]: drop the special tokens and renormalise each "
                              "row to sum to 1.")
l0, h0 = int(layer) - 1, int(head) - 1
reading = attention_reading_block(view, result, int(layer), int(head), ctx)
explain(EXPLAIN[view])

labels, maps, segments, special = level_view(result, level, hide_special)
if not labels:
    st.error("Nothing is left to show once the special tokens are hidden.")
    st.stop()
n = len(labels)

st.session_state[_DIMS] = (L, H, n)
ui = {"view": "model" if view == "Model view" else "heatmap" if view == "Heatmap" else "head",
      "layer": l0, "heads": url_heads(H), "pin": url_pin(n), "segment": url_segment()}
st.session_state[_ASKED] = ui
if view in ("Head view", "Model view"):
    payload = views_data(ctx.spec, ctx.text, ctx.pair, loaded.max_length, level, hide_special,
                         result)
    attention_views(payload, key=_VIEWS_KEY, ui=ui, on_change=follow_component)
    if payload["encoding"] == "sparse":
        st.caption(f"Long input: the view holds each query's {payload['top_k']} strongest keys "
                   "per head (every layer, 8-bit weights); the CSV holds every weight.")
    st.caption("Switch layers, heads, segments and the pinned token in the view itself; "
               "click a map in the model view to open that head.")
    csv_download(lambda: layer_frame(labels, maps), f"attention_all_layers_{level}.csv",
                 "views-csv", "CSV of every head")
    attention_report(view, result, int(layer), int(head), level, reading, ctx, loaded)
elif view == "Neuron view":
    if level != "token" or hide_special:
        st.info("The neuron view works on tokens with [CLS]/[SEP] kept: it shows the model's "
                "own query and key vectors.")
    neuron_block(ctx, loaded, enc, int(layer), int(head))
    attention_report(view, result, int(layer), int(head), level, reading, ctx, loaded)
else:  # Heatmap
    matrix = maps[l0, h0]
    title = f"Layer {layer}, head {head} ({level} level)"
    chart = lambda: attention_heatmap(map_frame(labels, matrix), labels, title)  # noqa: E731
    if n > LONG_INPUT:  # a canvas in the component: every cell, zoom, thinned labels
        payload = views_data(ctx.spec, ctx.text, ctx.pair, loaded.max_length, level,
                             hide_special, result)
        small = {k: v for k, v in payload.items() if k not in ("layers", "thumbs")}
        small["heatmap"] = heatmap_payload(labels, matrix, layer=l0, head=h0)
        attention_views(small, key=_VIEWS_KEY, ui=ui, on_change=follow_component)
    else:
        st.altair_chart(chart(), width="content")
    map_downloads(labels, matrix, title, f"attention_L{layer}_H{head}_{level}", "heatmap-dl")
    attention_report(view, result, int(layer), int(head), level, reading, ctx, loaded,
                     chart=chart if n * n <= EXPORT_MAX_ROWS else
                     blocks_chart(labels, matrix, title))
    top = np.argsort(-matrix, axis=None, kind="stable")[:10]
    st.caption(plain("Strongest links: " + "; ".join(
        f"{labels[k // n]} -> {labels[k % n]} ({matrix.flat[k]:.2f})" for k in top)))
