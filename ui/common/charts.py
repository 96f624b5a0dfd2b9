"""Altair charts shared by pages (data shaping lives in analysis/), and the one place that
makes charts fit their column from a phone (390 px) to a desktop (1400 px):

- a single view with a pixel width is drawn at most as wide as its column
  (``chart_cache.draw``: Streamlit fits the chart, axes and legend included, into
  ``min(width, column)``);
- :func:`fit_width`: a chart whose width follows its column while its plot keeps its own
  height (legends below it no longer squash the plot);
- :func:`side_by_side`: a comparison drawn as panels side by side (a facet in columns, an
  hconcat) on a wide screen, and the same panels one under the other below
  :data:`NARROW_PX` (where Streamlit stacks columns too), each at most :data:`PHONE_PANEL_PX`
  wide with its legends below, so both panels of a comparison stay on a phone's screen."""

from __future__ import annotations

import copy

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ui.common.chart_cache import BuiltChart, draw, vega_lite_spec
from ui.common.frame.state import fit_keys


NARROW_PX = 640       # Streamlit stacks st.columns below this viewport width; so do the panels
PHONE_PANEL_PX = 250  # a stacked panel's plot on a phone: 358 px of column, axis and legend
# The page's CSS (app.py): a side-by-side chart's wide version, or below NARROW_PX its stacked
# one (the containers of ui.common.frame.state.fit_keys).
FIT_CSS = (
    "[class*='st-key-fitnarrow-']{display:none}"
    f"@media (max-width:{NARROW_PX - 0.02}px){{[class*='st-key-fitwide-']{{display:none}}"
    "[class*='st-key-fitnarrow-']{display:flex}}"
)


def fit_width(chart):
    """``chart`` as wide as its column while its plot keeps its own height (Vega-Lite's
    "fit-x": title, axes and legends come on top of the height instead of out of it)."""
    return chart.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def _cap_panels(node, panel: int) -> None:
    """Every view of a spec at most ``panel`` px wide, its height scaled alike."""
    if isinstance(node, list):
        for item in node:
            _cap_panels(item, panel)
        return
    if not isinstance(node, dict):
        return
    width = node.get("width")
    if isinstance(width, (int, float)) and width > panel:
        if isinstance(node.get("height"), (int, float)):
            node["height"] = max(120, int(node["height"] * panel / width))
        node["width"] = panel
    for name in ("spec", "hconcat", "vconcat", "concat", "layer"):
        if name in node:
            _cap_panels(node[name], panel)


PHONE_TITLE_PX = 340  # a chart title's room on a phone (358 px of column)
PHONE_LABEL_PX = 140  # a legend label's room on a phone (the full text: in the tooltips)


def _narrow_legends(node) -> None:
    """Every legend a chart sets itself: its labels at most :data:`PHONE_LABEL_PX` wide (the
    full text stays in the tooltips), below the panels."""
    if isinstance(node, list):
        for item in node:
            _narrow_legends(item)
        return
    if not isinstance(node, dict):
        return
    for name, value in node.items():
        if name == "legend" and isinstance(value, dict):
            value["labelLimit"] = min(value.get("labelLimit", PHONE_LABEL_PX), PHONE_LABEL_PX)
            value.pop("orient", None)
        elif name not in ("datasets", "config"):
            _narrow_legends(value)


def stacked_spec(spec: dict, panel: int = PHONE_PANEL_PX) -> dict:
    """A side-by-side chart's Vega-Lite spec for a narrow screen: a facet's columns become
    rows, a wrapped facet or concat gets one panel per row, an hconcat becomes a vconcat;
    every panel at most ``panel`` px wide; legends below the panels."""
    out = copy.deepcopy({k: v for k, v in spec.items() if k != "datasets"})
    if "datasets" in spec:
        out["datasets"] = dict(spec["datasets"])  # the tables themselves are not copied
    facet = out.get("facet")
    if isinstance(facet, dict) and "column" in facet and "row" not in facet:
        facet["row"] = facet.pop("column")
    if "columns" in out:
        out["columns"] = 1
    if "hconcat" in out:
        out["vconcat"] = out.pop("hconcat")
    _cap_panels(out, panel)
    legend = out.setdefault("config", {}).setdefault("legend", {})
    # below the panels, one entry a row (a long list of groups grows down, not sideways)
    legend.update(orient="bottom", direction="horizontal", columns=1, labelLimit=PHONE_LABEL_PX)
    _narrow_legends(out)
    title = out.get("title")  # a title longer than the screen: cut with "…", not clipped
    if isinstance(title, (str, list)):
        out["title"] = {"text": title, "limit": PHONE_TITLE_PX}
    elif isinstance(title, dict):
        title.setdefault("limit", PHONE_TITLE_PX)
    return out


def has_panels(spec: dict) -> bool:
    """Whether a Vega-Lite spec draws panels side by side (a facet, a concatenation)."""
    return any(k in spec for k in ("facet", "hconcat", "concat"))


def side_by_side(chart, key: str, narrow=None, **kw):
    """Draw a comparison (``chart``: a facet in columns or an hconcat, or a
    ``chart_cache.BuiltChart`` of one) side by side on a wide screen and stacked on a phone
    (see the module's text); ``narrow``: the phone's chart when it is not just the panels
    stacked (e.g. shorter labels); ``key``: the chart's (named in a state module); ``kw``:
    ``st.altair_chart``'s. Returns what the wide one returns."""
    built = chart if isinstance(chart, BuiltChart) else BuiltChart(
        chart=chart, df=None, spec=vega_lite_spec(chart), title="")
    wide, narrow_key = fit_keys(key)
    with st.container(key=wide):
        out = draw(built, key=key, **kw)
    with st.container(key=narrow_key):
        if narrow is not None:
            draw(BuiltChart(chart=narrow, df=None, spec=vega_lite_spec(narrow), title=""),
                 key=narrow_key, **kw)
        else:
            spec = built.spec if built.spec is not None else built.chart.to_dict()
            draw(BuiltChart(chart=built.chart, df=None, spec=stacked_spec(spec), title=""),
                 key=narrow_key, **kw)
    return out


def position_labels(labels) -> list[str]:
    """One unique axis label per position, "12: token" (1-based), so that repeated tokens keep
    their own row. Token text only ever travels as data (a field value or a scale's domain
    entry), never inside a Vega expression: a token such as ``if`` or ``datum`` stays text."""
    return [f"{i + 1}: {l}" for i, l in enumerate(labels)]


def _token_axis(n: int, size: int, **kw) -> alt.Axis:
    """An axis of ``n`` token labels over ``size`` pixels: the font follows the room of a row
    (7 to 11 px); every label while they fit, else thinned to what fits (Vega's parity
    thinning). The full label is in every cell's tooltip."""
    room = size / max(n, 1)
    return alt.Axis(labelOverlap=room < 8, labelLimit=120,
                    labelFontSize=max(7, min(11, int(room) - 1)), **kw)


def map_frame(labels, matrix: np.ndarray, min_weight: float = 0.0,
              axis_labels=None) -> pd.DataFrame:
    """Long table of one attention map: from/to position, token, axis label (``axis_labels``,
    unique; "position: token" by default) and weight."""
    n, m = matrix.shape
    i, j = np.repeat(np.arange(n), m), np.tile(np.arange(m), n)
    text = np.asarray([str(l) for l in labels], dtype=object)
    axis = list(axis_labels) if axis_labels is not None else position_labels(text)
    # categorical columns: one string per distinct label, not one per cell (a 512 x 512 map
    # builds in milliseconds); Arrow, Vega and the CSV see plain strings
    uniq, inv = np.unique(text, return_inverse=True)
    df = pd.DataFrame({
        "from_pos": i, "to_pos": j,
        "from": pd.Categorical.from_codes(inv[i], categories=uniq),
        "to": pd.Categorical.from_codes(inv[j], categories=uniq),
        "from_label": pd.Categorical.from_codes(i, categories=axis),
        "to_label": pd.Categorical.from_codes(j, categories=axis),
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
    text = np.asarray([str(t) for t in labels], dtype=object)
    uniq, inv = np.unique(text, return_inverse=True)
    i, j = i.ravel(), j.ravel()
    return pd.DataFrame({
        "layer": l.ravel() + 1 + layer_offset, "head": h.ravel() + 1,
        "from_pos": i, "to_pos": j,
        "from": pd.Categorical.from_codes(inv[i], categories=uniq),
        "to": pd.Categorical.from_codes(inv[j], categories=uniq),
        "weight": maps.ravel().astype(float),
    })


def attention_heatmap(df: pd.DataFrame, labels, title: str, size: int | None = None,
                      scheme: str = "blues", domain=None, axis_labels=None) -> alt.Chart:
    """One head's map (``df`` from :func:`map_frame`); colour runs from 0 to the map's largest
    weight (shown in the legend). Axes run over the "position: token" label fields, in
    position order; long inputs thin their labels to what fits."""
    n = len(labels)
    size = size or int(min(900, max(360, 22 * n)))
    if domain is None:
        domain = (0.0, float(df["weight"].max()) if len(df) else 1.0)
    order = list(axis_labels) if axis_labels is not None else position_labels(labels)
    return (
        alt.Chart(df, title=title)
        .mark_rect()
        .encode(
            x=alt.X("to_label:O", title="to (key)", scale=alt.Scale(domain=order),
                    axis=_token_axis(n, size, labelAngle=-60)),
            y=alt.Y("from_label:O", title="from (query)", scale=alt.Scale(domain=order),
                    axis=_token_axis(n, size)),
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
    row_labels = [str(l) for l in row_labels]
    if len(set(row_labels)) < rows:
        row_labels = position_labels(row_labels)
    df = pd.DataFrame({"row": r.ravel(), "dim": d.ravel(), "value": matrix.ravel().astype(float),
                       "token": np.asarray(row_labels, dtype=object)[r.ravel()]})
    lim = float(np.abs(matrix).max()) or 1.0
    dense = rows <= 60
    body = height_per_row * rows if dense else min(4 * rows, 1200)
    scale = (alt.Scale(scheme="redblue", domain=[-lim, lim], reverse=True) if diverging
             else alt.Scale(scheme="blues"))
    chart = (
        alt.Chart(df, title=title)
        .mark_rect()
        .encode(
            x=alt.X("dim:O", title="dimension", axis=alt.Axis(labels=dims <= 64, ticks=False)),
            y=alt.Y("token:O", title=None, scale=alt.Scale(domain=row_labels),
                    axis=alt.Axis(labelOverlap=not dense, labelLimit=140)),
            # a legend of readable length even beside a one-row chart (the query vector)
            color=alt.Color("value:Q", scale=scale,
                            legend=alt.Legend(gradientLength=int(min(200, max(160, body))),
                                              orient="right" if rows > 4 else "bottom",
                                              direction="vertical" if rows > 4
                                              else "horizontal")),
            tooltip=["token:N", "dim:Q", alt.Tooltip("value:Q", format=".4f")],
        )
    )
    if rows > 4:
        # Streamlit fits the whole chart (title, axes, legend) into the column and this height
        return chart.properties(width=min(12 * dims, 560), height=body + 110)
    # a few rows (the query vector): "fit-x" keeps the body's own height (title, axes and the
    # horizontal legend come on top of it), so its cells and legend never get squashed, and
    # its width (labels included) is at most the column's, a phone's too
    return fit_width(chart.properties(width=min(12 * dims, 560) + 120, height=max(24, body)))
