"""Altair charts shared by pages (data shaping lives in analysis/)."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd


def label_expr(labels, offset: int = 0) -> str:
    """Vega label expression mapping an ordinal position to its label. JSON string literals
    are valid Vega expression literals, and Vega draws text, never HTML."""
    index = "datum.value" if not offset else f"datum.value - {int(offset)}"
    return f"{json.dumps([str(l) for l in labels])}[{index}]"


def map_frame(labels, matrix: np.ndarray, min_weight: float = 0.0) -> pd.DataFrame:
    """Long table of one attention map: from/to position and label, weight."""
    n = matrix.shape[0]
    i, j = np.meshgrid(np.arange(n), np.arange(matrix.shape[1]), indexing="ij")
    df = pd.DataFrame({
        "from_pos": i.ravel(), "to_pos": j.ravel(),
        "from": [labels[k] for k in i.ravel()], "to": [labels[k] for k in j.ravel()],
        "weight": matrix.ravel().astype(float),
    })
    if min_weight > 0:
        df = df[df["weight"] >= min_weight]
    return df.reset_index(drop=True)


def layer_frame(labels, maps: np.ndarray, layer_offset: int = 0) -> pd.DataFrame:
    """Long table of several heads' maps: [H, n, n] (one layer) or [L, H, n, n] (all layers).
    Layers and heads are 1-indexed, as in the UI."""
    maps = maps if maps.ndim == 4 else maps[None]
    L, H, n, _ = maps.shape
    l, h, i, j = np.meshgrid(np.arange(L), np.arange(H), np.arange(n), np.arange(n),
                             indexing="ij")
    labels = np.asarray(labels, dtype=object)
    return pd.DataFrame({
        "layer": l.ravel() + 1 + layer_offset, "head": h.ravel() + 1,
        "from_pos": i.ravel(), "to_pos": j.ravel(),
        "from": labels[i.ravel()], "to": labels[j.ravel()],
        "weight": maps.ravel().astype(float),
    })


def csv_download(df_fn, file_name: str, key: str, label: str = "CSV") -> None:
    """A CSV download whose table is built only when clicked."""
    import streamlit as st

    st.download_button(label, data=lambda: df_fn().to_csv(index=False).encode("utf-8"),
                       file_name=file_name, mime="text/csv", key=key,
                       icon=":material/table:", on_click="ignore")


def attention_heatmap(df: pd.DataFrame, labels, title: str, size: int | None = None,
                      scheme: str = "blues", domain=None) -> alt.Chart:
    """One head's map; colour runs from 0 to the map's largest weight (shown in the legend)."""
    n = len(labels)
    size = size or int(min(900, max(360, 22 * n)))
    if domain is None:
        domain = (0.0, float(df["weight"].max()) if len(df) else 1.0)
    return (
        alt.Chart(df, title=title)
        .mark_rect()
        .encode(
            x=alt.X("to_pos:O", title="to (key)", scale=alt.Scale(domain=list(range(n))),
                    axis=alt.Axis(labelExpr=label_expr(labels), labelAngle=-60,
                                  labelOverlap=False, labelLimit=120)),
            y=alt.Y("from_pos:O", title="from (query)", scale=alt.Scale(domain=list(range(n))),
                    axis=alt.Axis(labelExpr=label_expr(labels), labelOverlap=False,
                                  labelLimit=120)),
            color=alt.Color("weight:Q", scale=alt.Scale(scheme=scheme, domain=list(domain)),
                            title="weight"),
            tooltip=[alt.Tooltip("from:N"), alt.Tooltip("to:N"),
                     alt.Tooltip("weight:Q", format=".4f")],
        )
        .properties(width=size, height=size)
    )


def vector_frame(matrix: np.ndarray, row_labels) -> pd.DataFrame:
    """Rows x dimensions as a wide table (one column per dimension) for CSV export."""
    df = pd.DataFrame(np.asarray(matrix, dtype=float),
                      columns=[f"dim_{d}" for d in range(matrix.shape[1])])
    df.insert(0, "token", list(row_labels))
    return df


def vector_heatmap(matrix: np.ndarray, row_labels, title: str, diverging: bool = True,
                   height_per_row: int = 16) -> alt.Chart:
    """Rows x dimensions heatmap (neuron view: query, keys, products)."""
    rows, dims = matrix.shape
    r, d = np.meshgrid(np.arange(rows), np.arange(dims), indexing="ij")
    df = pd.DataFrame({"row": r.ravel(), "dim": d.ravel(), "value": matrix.ravel().astype(float),
                       "token": [row_labels[k] for k in r.ravel()]})
    lim = float(np.abs(matrix).max()) or 1.0
    dense = rows <= 60
    body = height_per_row * rows if dense else min(4 * rows, 1200)
    scale = (alt.Scale(scheme="redblue", domain=[-lim, lim], reverse=True) if diverging
             else alt.Scale(scheme="blues"))
    return (
        alt.Chart(df, title=title)
        .mark_rect()
        .encode(
            x=alt.X("dim:O", title="dimension", axis=alt.Axis(labels=dims <= 64, ticks=False)),
            y=alt.Y("row:O", title=None, axis=alt.Axis(labelExpr=label_expr(row_labels),
                                                       labelOverlap=not dense, labelLimit=140)),
            color=alt.Color("value:Q", scale=scale,
                            legend=alt.Legend(gradientLength=int(min(200, max(24, body))))),
            tooltip=["token:N", "dim:Q", alt.Tooltip("value:Q", format=".4f")],
        )
        # Streamlit fits the whole chart (title and axes too) into this height: leave them
        # room so that even a one-row chart (the query vector) keeps a visible body.
        .properties(width=min(12 * dims, 560), height=max(30, body) + 110)
    )
