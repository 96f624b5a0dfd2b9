"""Attention page: head view, model view, neuron view and single-head heatmap."""

from __future__ import annotations

import numpy as np
import streamlit as st

from analysis.attention import level_view
from analysis.attention.views import heatmap_payload
from analysis.core.errors import InputError
from ui.attention import state
from ui.attention.blocks import EXPLAIN, attention_reading_block, attention_report, neuron_block
from ui.attention.component import compute, page_ui, show_views, views_data
from ui.common.attention.views import PAGE_VIEWS
from ui.common.chart_cache import show
from ui.common.charts import attention_heatmap, layer_frame, map_frame
from ui.common.errors import plain, show_error
from ui.common.exports.export import EXPORT_MAX_ROWS, blocks_chart, csv_download, map_downloads
from ui.common.frame.explain import explain
from ui.common.html import token_chips
from ui.common.frame.links import copy_link, folder_note
from ui.common.frame.resources import token_capped
from ui.common.frame.sidebar import context
from ui.search.state import find_similar_params


def render() -> None:
    """The page, top to bottom (pages/attention.py calls it on every run)."""
    LONG_INPUT = 96  # above this many tokens, the heatmap is drawn on a canvas in the component

    ctx = context()
    loaded = token_capped(ctx.loaded)  # demo mode: at most max_tokens per input
    L, H = loaded.n_layers, loaded.n_heads

    st.title("Attention")
    st.caption(f"{plain(loaded.name)}: {L} layers x {H} heads. Layers and heads are numbered "
               "from 1. Rows are queries (from), columns keys (to); every row sums to 1.")

    # Keep the last good view: bad input shows a message and the previous result stays.
    try:
        result = compute(ctx.spec, ctx.text, ctx.pair, loaded.max_length, loaded)
        state.set_last_good(ctx.spec, result)
    except InputError as exc:
        show_error(exc)
        result = state.last_good(ctx.spec)
        if result is None:
            st.stop()
        st.caption("Showing the last input that worked.")

    copy_link(state.COPY_LINK, note=folder_note(ctx.spec))
    enc = result.encoding
    for notice in enc.notices:
        st.warning(plain(notice), icon=":material/info:")
    st.markdown(token_chips(enc.tokens, enc.segments, enc.special), unsafe_allow_html=True)

    if not state.view_chosen():
        state.set_widgets(view="Head view")  # set before the widget (no default= with state)
    c1, c2, c3, c4, c5 = st.columns([4.2, 1, 1, 1.4, 1.6], vertical_alignment="bottom")
    view = c1.segmented_control("View", PAGE_VIEWS, key=state.VIEW, bind="query-params",
                                wrap=True) or "Head view"  # wraps on a phone instead of overflowing
    layer = c2.selectbox("Layer", list(range(1, L + 1)), key=state.LAYER, bind="query-params",
                         disabled=view == "Model view",
                         help="The model view shows every layer; click a map to open it.")
    head = c3.selectbox("Head", list(range(1, H + 1)), key=state.HEAD, bind="query-params",
                        disabled=view in ("Head view", "Model view"),
                        help="The head view shows every head of the layer; toggle them in its "
                             "legend.")
    level = c4.radio("Level", ["token", "word"], key=state.LEVEL, bind="query-params",
                     horizontal=True,
                     help="Word level (Clark et al. 2019): attention to a word is the sum over its "
                          "pieces, attention from a word the mean.")
    hide_special = c5.toggle("No specials", key=state.NO_SPECIAL, bind="query-params",
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

    dims = state.Dims(L, H, n)
    ui = page_ui(view, l0, dims)
    if view in ("Head view", "Model view"):
        payload = views_data(ctx.spec, loaded.max_length, level, hide_special, result)
        show_views(payload, ui, dims)
        if payload["encoding"] == "sparse":
            st.caption(f"Long input: the view holds each query's {payload['top_k']} strongest keys "
                       "per head (every layer, 8-bit weights); the CSV holds every weight.")
        st.caption("Switch layers, heads, segments and the pinned token in the view itself; "
                   "click a map in the model view to open that head.")
        csv_download(lambda: layer_frame(labels, maps), f"attention_all_layers_{level}.csv",
                     state.VIEWS_CSV, "CSV of every head")
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
            payload = views_data(ctx.spec, loaded.max_length, level, hide_special, result)
            small = {k: v for k, v in payload.items() if k not in ("layers", "thumbs")}
            small["heatmap"] = heatmap_payload(labels, matrix, layer=l0, head=h0)
            show_views(small, ui, dims)
        else:
            show(chart(), width="content")
        map_downloads(labels, matrix, title, f"attention_L{layer}_H{head}_{level}",
                      state.HEATMAP_DOWNLOADS)
        attention_report(view, result, int(layer), int(head), level, reading, ctx, loaded,
                         chart=chart if n * n <= EXPORT_MAX_ROWS else
                         blocks_chart(labels, matrix, title))
        top = np.argsort(-matrix, axis=None, kind="stable")[:10]
        st.caption(plain("Strongest links: " + "; ".join(
            f"{labels[k // n]} -> {labels[k % n]} ({matrix.flat[k]:.2f})" for k in top)))

    # Find similar (exBERT): the Search page on the pinned token (the first word piece when none is
    # pinned, or the pin is not a token of the input) at this layer
    pin = state.url_pin(n) if level == "token" and not hide_special else None
    token = pin["index"] if pin is not None and pin["side"] == "from" else \
        next((i for i, s in enumerate(enc.special) if not s), 0)
    st.page_link("pages/search.py", icon=":material/search:",
                 label=plain(f"Find similar tokens to «{enc.tokens[token]}» at layer {layer} in a "
                             "corpus"),
                 query_params=find_similar_params(ctx.spec, enc.text, enc.pair, token, int(layer)),
                 help="Opens the Search page on this token and layer (pin a token in the head "
                      "view to pick another).")
