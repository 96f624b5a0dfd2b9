"""Attention page blocks: the neuron view's charts (query, keys, products, dot products and
softmax) with their downloads."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ui.charts import label_expr, vector_frame, vector_heatmap
from ui.errors import plain
from ui.export import chart_downloads


def neuron_section(nv, enc, layer: int, head: int) -> None:
    """Draw a computed neuron view (``analysis.attention.neuron.NeuronView``) of the encoding
    ``enc``; ``layer`` and ``head`` are 1-indexed."""
    st.subheader(plain(f"Neuron view, layer {layer}, head {head}, query "
                       f"'{enc.tokens[nv.query_index]}'"))
    st.caption(f"score_j = q . k_j / sqrt({nv.query.shape[0]}); attention = softmax(score). "
               f"The softmax matches the attention the model returned to within "
               f"{nv.max_abs_diff:.1e}.")
    tok_labels = [f"{i + 1}: {t}" for i, t in enumerate(enc.tokens)]
    q_row, q_label = nv.query[None, :], [enc.tokens[nv.query_index]]
    q_chart = vector_heatmap(q_row, q_label, "query vector q")
    st.altair_chart(q_chart, width="content")
    name = f"neuron_L{layer}_H{head}_q{nv.query_index + 1}"
    chart_downloads(q_chart, f"{name}_query", "neuron-q-dl", vector_frame(q_row, q_label))
    ka, kb = st.columns(2)
    for col, matrix, title, part in ((ka, nv.keys, "key vectors k_j", "keys"),
                                     (kb, nv.products, "q x k_j (elementwise)", "products")):
        with col:
            chart = vector_heatmap(matrix, tok_labels, title)
            st.altair_chart(chart)
            chart_downloads(chart, f"{name}_{part}", f"neuron-{part}-dl",
                            vector_frame(matrix, tok_labels))
    df = pd.DataFrame({"position": np.arange(1, enc.n_tokens + 1), "token": enc.tokens,
                       "score": nv.scores, "softmax": nv.softmax,
                       "model_attention": nv.returned})
    bars = alt.Chart(df).encode(
        y=alt.Y("position:O", title=None,
                axis=alt.Axis(labelExpr=label_expr(tok_labels, offset=1))))
    score = bars.mark_bar(color="#8a8a8a").encode(
        x=alt.X("score:Q", title="q . k / sqrt(d)"), tooltip=["token", "score"])
    soft = bars.mark_bar(color="#3b6fd8").encode(
        x=alt.X("softmax:Q", scale=alt.Scale(domain=[0, 1])), tooltip=["token", "softmax"])
    chart = alt.hconcat(score.properties(title="dot product", width=260),
                        soft.properties(title="softmax", width=260))
    st.altair_chart(chart)
    chart_downloads(chart, name, "neuron-dl", df)
