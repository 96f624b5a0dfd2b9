"""Download buttons for charts (PNG/SVG rendered server-side with vl-convert) and their data."""

from __future__ import annotations

import re

import streamlit as st


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "chart"


def chart_png(chart, scale: float = 2.0) -> bytes:
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart.to_json(), scale=scale)


def chart_svg(chart) -> str:
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart.to_json())


def chart_downloads(chart, basename: str, key: str, df=None) -> None:
    """PNG + SVG of ``chart`` and CSV of ``df`` (rendered only when clicked)."""
    name = _safe(basename)
    cols = st.columns([1, 1, 1, 5] if df is not None else [1, 1, 6], gap="small")
    cols[0].download_button("PNG", data=lambda: chart_png(chart), file_name=f"{name}.png",
                            mime="image/png", key=f"{key}-png", icon=":material/image:",
                            on_click="ignore")
    cols[1].download_button("SVG", data=lambda: chart_svg(chart), file_name=f"{name}.svg",
                            mime="image/svg+xml", key=f"{key}-svg", icon=":material/draw:",
                            on_click="ignore")
    if df is not None:
        cols[2].download_button("CSV", data=lambda: df.to_csv(index=False).encode("utf-8"),
                                file_name=f"{name}.csv", mime="text/csv", key=f"{key}-csv",
                                icon=":material/table:", on_click="ignore")
