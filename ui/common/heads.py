"""The layers x heads heatmap and its long-form table: one helper for every per-head figure
(Clark's statistics, aspect-head scores, drift cosine...). Layers and heads are 1-indexed, as
everywhere in the UI."""

from __future__ import annotations

from typing import Mapping

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st


def heads_frame(matrices: Mapping[str, np.ndarray] | np.ndarray, value: str = "value",
                column: str = "map", labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Long table of one or more [L, H] matrices: ``column`` (the matrix's name; left out for a
    single bare matrix), ``label`` (when ``labels`` names them), ``layer``, ``head``, ``value``."""
    single = not isinstance(matrices, Mapping)
    items = {"": matrices}.items() if single else matrices.items()
    frames = []
    for name, m in items:
        m = np.asarray(m, dtype=float)
        layers, heads = np.meshgrid(np.arange(m.shape[0]), np.arange(m.shape[1]), indexing="ij")
        df = pd.DataFrame({"layer": layers.ravel() + 1, "head": heads.ravel() + 1,
                           value: m.ravel()})
        if not single:
            df.insert(0, column, name)
            if labels is not None:
                df.insert(1, "label", labels.get(name, name))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def head_marks(df: pd.DataFrame, aspect, sep) -> list[str]:
    """Per row of a :func:`heads_frame` table, its head's mark: "A" for an aspect head, "S" for
    a [SEP] head, "AS" for both, "" otherwise (``aspect``, ``sep``: 0-indexed (layer, head))."""
    tags: dict = {}
    for (l, h) in aspect:
        tags[(l + 1, h + 1)] = "A"
    for (l, h) in sep:
        tags[(l + 1, h + 1)] = tags.get((l + 1, h + 1), "") + "S"
    return [tags.get((l, h), "") for l, h in zip(df["layer"], df["head"])]


def heads_heatmap(df: pd.DataFrame, value: str = "value", *, title: str = "",
                  scale: alt.Scale | None = None, scheme: str = "blues", domain=None,
                  legend: str | None = None, fmt: str = ".3f", facet: str | None = None,
                  facet_sort=None, columns: int = 3, cell: tuple[int, int] | None = None,
                  select: str | None = None, domain_min: float | None = None) -> alt.Chart:
    """Heatmap of a :func:`heads_frame` table: head on x, layer on y, ``value`` as colour;
    one panel per value of ``facet`` (``columns`` per row). ``select`` names a point
    selection on (layer, head) for click events; ``domain_min``: where the colours start (the
    largest value ends them)."""
    n_layers, n_heads = int(df["layer"].max()), int(df["head"].max())
    if scale is None:
        scale = alt.Scale(scheme=scheme, domain=domain) if domain else \
            alt.Scale(scheme=scheme, domainMin=domain_min) if domain_min is not None else \
            alt.Scale(scheme=scheme)
    tips = ([facet] if facet else []) + ["layer:O", "head:O",
                                         alt.Tooltip(f"{value}:Q", format=fmt)]
    w, h = cell or ((190 // n_heads or 12, 130 // n_layers or 12) if facet else (40, 34))
    chart = alt.Chart(df).mark_rect().encode(
        x=alt.X("head:O", title="head"), y=alt.Y("layer:O", title="layer"),
        color=alt.Color(f"{value}:Q", scale=scale, title=legend if legend is not None else value),
        tooltip=tips,
    )
    if select:
        chart = chart.add_params(alt.selection_point(name=select, fields=["layer", "head"]))
    if facet:
        chart = chart.properties(width=w * n_heads, height=h * n_layers).facet(
            facet=alt.Facet(f"{facet}:N", title=None, sort=facet_sort), columns=columns)
        return chart.properties(title=title) if title else chart
    return chart.properties(title=title, width=w * n_heads + 130, height=h * n_layers + 90)


DECIMALS = 3  # every table of per-head numbers shows this many decimals


def decimals(df: pd.DataFrame, places: int = DECIMALS) -> dict:
    """``st.dataframe`` column_config giving every float column of ``df`` ``places`` decimals
    (one number of decimals across a page's tables)."""
    return {c: st.column_config.NumberColumn(format=f"%.{places}f")
            for c in df.columns if pd.api.types.is_float_dtype(df[c])}
