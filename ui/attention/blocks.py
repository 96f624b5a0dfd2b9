"""Attention page blocks: the neuron view (query token picker bound to the URL, the captured
queries and keys cached per input, the charts of query, keys, products, dot products and
softmax with their downloads)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis.attention.neuron import NeuronViewUnavailable, QueryKeys, query_keys, view_of
from ui.attention import state
from ui.common.chart_cache import show
from ui.common.charts import position_labels, side_by_side, vector_frame, vector_heatmap
from ui.common.errors import plain, show_error
from ui.common.exports.export import chart_downloads
from analysis.attention.reading import attention_reading, heads_table, layer_reading, model_reading
from ui.common.exports.findings import add_button


@st.cache_resource(max_entries=4, show_spinner="Capturing the queries and keys...")
def cached_query_keys(spec: str, text: str, pair: str | None, max_length: int, _loaded,
                      _enc) -> QueryKeys:
    """Every layer's q and k of one input (one forward per input; read-only). Keyed like the
    page's attention result: (model spec, text, pair, token cap)."""
    return query_keys(_loaded, _enc)


def query_picker(enc) -> int:
    """The query token, 1-based in the widget and in the URL (``q=3``). A URL value that is not
    a position of this input is ignored and removed from the URL; a position left over from a
    longer input falls back to the first token after [CLS]. Returns the 0-based index."""
    n = enc.n_tokens
    options = list(range(1, n + 1))
    state.query_token_from_url(n)
    q = st.selectbox("Query token", options, key=state.QUERY, on_change=state.query_token_to_url,
                     format_func=lambda i: f"{i}: {enc.tokens[i - 1]}",
                     help="The token whose query vector is compared with every key; the "
                          "page's URL keeps it (q=position, from 1).")
    return int(q) - 1


def neuron_block(ctx, loaded, enc, layer: int, head: int) -> None:
    """The neuron view of the page's input for ``layer`` and ``head`` (1-indexed): the query
    token changes without running the model again."""
    qi = query_picker(enc)
    # cached under the text the shown result came from (the page's last good one when the box
    # is empty or refused), never the box's: another visitor's empty box is the same key
    try:
        qk = cached_query_keys(ctx.spec, enc.text, enc.pair, loaded.max_length, loaded, enc)
        nv = view_of(qk, layer - 1, head - 1, qi)
    except NeuronViewUnavailable as exc:
        show_error(exc)
        return
    charts = cached_charts(ctx.spec, enc.text, enc.pair, loaded.max_length, layer, head, qi,
                           nv, enc.tokens)
    neuron_section(nv, enc, layer, head, charts)


@st.cache_resource(max_entries=32, show_spinner=False)
def cached_charts(spec: str, text: str, pair: str | None, max_length: int, layer: int,
                  head: int, query: int, _nv, _tokens) -> dict:
    """The neuron view's charts of one (input, layer, head, query): a rerun that changes
    nothing (or comes back to a query seen before) rebuilds none of them."""
    return neuron_charts(_nv, _tokens)


def neuron_charts(nv, tokens) -> dict:
    """name -> (chart, table for the CSV) of a neuron view: query, keys, products, scores."""
    tok_labels = position_labels(tokens)
    q_row, q_label = nv.query[None, :], [tok_labels[nv.query_index]]
    out = {"query": (vector_heatmap(q_row, q_label, "query vector q"),
                     vector_frame(q_row, q_label))}
    for matrix, title, part in ((nv.keys, "key vectors k_j", "keys"),
                                (nv.products, "q x k_j (elementwise)", "products")):
        out[part] = (vector_heatmap(matrix, tok_labels, title), vector_frame(matrix, tok_labels))
    df = pd.DataFrame({"position": np.arange(1, len(tokens) + 1), "token": list(tokens),
                       "label": tok_labels, "score": nv.scores, "softmax": nv.softmax,
                       "model_attention": nv.returned})
    bars = alt.Chart(df).encode(
        y=alt.Y("label:O", title=None, scale=alt.Scale(domain=tok_labels),
                axis=alt.Axis(labelOverlap=len(tok_labels) > 60, labelLimit=140)))
    score = bars.mark_bar(color="#8a8a8a").encode(
        x=alt.X("score:Q", title="q . k / sqrt(d)"), tooltip=["token", "score"])
    soft = bars.mark_bar(color="#3b6fd8").encode(
        x=alt.X("softmax:Q", scale=alt.Scale(domain=[0, 1])), tooltip=["token", "softmax"])
    out["scores"] = (alt.hconcat(score.properties(title="dot product", width=260),
                                 soft.properties(title="softmax", width=260)),
                     df.drop(columns="label"))
    return out


def neuron_section(nv, enc, layer: int, head: int, charts: dict | None = None) -> None:
    """Draw a computed neuron view (``analysis.attention.neuron.NeuronView``) of the encoding
    ``enc``; ``layer`` and ``head`` are 1-indexed; ``charts`` from :func:`neuron_charts`."""
    charts = charts or neuron_charts(nv, enc.tokens)
    st.subheader(plain(f"Neuron view, layer {layer}, head {head}, query "
                       f"'{enc.tokens[nv.query_index]}'"))
    top = int(np.argmax(nv.softmax))
    st.caption(plain(
        f"score_j = q . k_j / sqrt({nv.query.shape[0]}); attention = softmax(score). "
        f"The softmax matches the attention the model returned to within "
        f"{nv.max_abs_diff:.1e}. Reading: query {nv.query_index + 1} "
        f"'{enc.tokens[nv.query_index]}' attends most to {top + 1} '{enc.tokens[top]}' "
        f"({nv.softmax[top]:.2f} of its attention)."))
    name = f"neuron_L{layer}_H{head}_q{nv.query_index + 1}"
    chart, df = charts["query"]
    show(chart, width="content")
    chart_downloads(chart, f"{name}_query", "neuron-q-dl", df)
    for col, part in zip(st.columns(2), ("keys", "products")):
        with col:
            chart, df = charts[part]
            show(chart)
            chart_downloads(chart, f"{name}_{part}", f"neuron-{part}-dl", df)
    chart, df = charts["scores"]
    side_by_side(chart, state.NEURON_SCORES)  # dot product | softmax; stacked on a phone
    chart_downloads(chart, name, "neuron-dl", df)


# ---------------------------------------------------------------------------------------------
# The page's plain reading, explanations and report buttons (issue #14)

EXPLAIN = {
    "Head view": "Each colour is one attention head of the chosen layer. A line joins a word on "
                 "the left (the one that is reading) to a word on the right (the one it reads); "
                 "the stronger the line, the more attention. Hover a word to see only its "
                 "lines, click a colour to hide or show that head.",
    "Model view": "Every attention head of the model at once: one small picture per head, "
                  "rows are layers, columns heads. A diagonal stripe means 'look at the "
                  "previous or next word'; a dark column means every word looks at the same "
                  "token, often [CLS] or [SEP]. Click a picture to open that head.",
    "Neuron view": "How one head decides where to look: the query vector of the chosen word is "
                   "multiplied with the key vector of every word; the larger the product, the "
                   "more attention after the softmax.",
    "Heatmap": "One head as a grid: each row is a word that reads, each column a word it reads; "
               "the darker the cell, the more attention. Every row adds up to 1.",
}


@st.cache_resource(max_entries=64, show_spinner=False)
def _reading_lines(spec: str, tokens: tuple, segments: tuple, view: str, layer: int, head: int,
                   _result) -> list[str]:
    """The reading's sentences, once per (model, tokens, view, layer, head): a rerun computes
    nothing."""
    if view == "Model view":
        return [model_reading(_result)]
    if view == "Head view":
        return layer_reading(_result, layer)
    return [attention_reading(_result, layer, head).sentence]


def attention_reading_block(view: str, result, layer: int, head: int, ctx) -> list[str]:
    """The plain reading of what the page shows (computed from the maps at token level:
    ``layer`` and ``head`` 1-indexed), shown as plain text; returns its lines for a report."""
    enc = result.encoding
    lines = _reading_lines(ctx.spec, tuple(enc.tokens), tuple(int(x) for x in enc.segments), view,
                           layer if view != "Model view" else 0,
                           head if view not in ("Head view", "Model view") else 0, result)
    st.info(plain(" ".join(lines)), icon=":material/lightbulb:")
    return list(lines)


def attention_report(view: str, result, layer: int, head: int, level: str, lines: list[str],
                     ctx, loaded, chart=None) -> None:
    """"Add to report" for the current view: the heatmap's chart (``chart``: a callable, built
    only on a click) or, for the other views, every head's habit on this input as a table."""
    enc = result.encoding
    numbers = {"Tokens": str(enc.n_tokens), "Layer": str(layer)}
    if view not in ("Head view", "Model view"):
        numbers["Head"] = str(head)
    settings = {"view": view, "level": level}
    source = dict(page="Attention", url_path="attention", loaded=loaded, settings=settings,
                  data=f"{'a sentence pair' if enc.is_pair else 'one text'} of {enc.n_tokens} "
                       "tokens")
    title = (f"Attention: {view.lower()}" + (f", layer {layer}" if view != "Model view" else "")
             + (f", head {head}" if view not in ("Head view", "Model view") else ""))
    if chart is not None:
        add_button(title, state.REPORT_ADD, chart=chart, numbers=numbers, reading=lines, **source)
        return
    def table() -> pd.DataFrame:  # built only on a click
        rows = heads_table(result, None if view == "Model view" else layer)
        return pd.DataFrame(rows).drop(columns=["kind"])

    add_button(title, state.REPORT_ADD, df=table, numbers=numbers, reading=lines, **source)
