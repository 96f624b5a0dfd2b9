"""Download buttons for charts (PNG/SVG rendered server-side with vl-convert) and their data.

Every export works at every size. Vega-Lite data go inline with Altair's 5,000-row limit off
(the limit guards notebooks, not files). A chart with more than ``EXPORT_MAX_ROWS`` marks (an
SVG of a 512 x 512 map holds 262,144 rects: 63 MB, 7 s; its PNG 10 s) exports a smaller chart
given by the caller instead (a map: in blocks of tokens), and the UI says so beside the
buttons. A render that fails falls back to that smaller chart; failing that it raises
``ExportError``, whose words the button shows beside it (``ui.common.exports.download``: the
file is made when clicked and handed to the browser, which saves it; a click during a rerun
still gets it). The CSV always holds every row, its formula cells neutralised
(:mod:`ui.common.exports.csvsafe`).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Callable

import altair as alt
import numpy as np
import pandas as pd
import vl_convert as vlc

from analysis.report.raster import svg_png
from ui.common.charts import attention_heatmap, map_frame
from ui.common.exports.csvsafe import csv_text
from ui.common.exports.download import Download, ExportError, download_button, download_row
from ui.common.exports.state import download_keys
from ui.server.settings import settings

EXPORT_MAX_ROWS = 40_000
MAP_EXPORT_CELLS = 128  # a large map exports as at most 128 x 128 blocks
_LOG = logging.getLogger(__name__)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "chart"


def chart_json(chart) -> str:
    """The chart's Vega-Lite JSON with its data inline, at any number of rows."""
    with alt.data_transformers.disable_max_rows():
        return chart.to_json()


def chart_png(chart, scale: float = 2.0) -> bytes:
    """The chart's SVG drawn as a PNG by the server's one bounded drawing path (pixels,
    memory and time; a child process: ``analysis.report.raster``)."""
    return svg_png(chart_svg(chart), scale=scale)


def chart_svg(chart) -> str:
    return vlc.vegalite_to_svg(chart_json(chart))


def chart_rows(chart) -> int:
    """Rows of inline data in a chart and its sub-charts (layers, concatenations)."""
    rows = len(chart.data) if isinstance(getattr(chart, "data", None), pd.DataFrame) else 0
    for part in ("layer", "hconcat", "vconcat", "concat"):
        for sub in getattr(chart, part, None) or []:
            if not isinstance(sub, dict):
                rows += chart_rows(sub)
    return rows


def render_export(fmt: str, chart, smaller: Callable | None = None):
    """PNG bytes or SVG text of ``chart``, or of ``smaller()`` when the chart is too large or
    its render fails."""
    draw = chart_png if fmt == "png" else chart_svg
    chart = chart if hasattr(chart, "to_json") else chart()
    if smaller is not None and chart_rows(chart) > EXPORT_MAX_ROWS:
        return draw(smaller())
    try:
        return draw(chart)
    except Exception as exc:  # vl-convert raises its own types
        _LOG.warning("%s export failed: %s", fmt.upper(), exc)
        if smaller is not None:
            return draw(smaller())
        raise ExportError(f"The {fmt.upper()} could not be drawn ({type(exc).__name__}); "
                          "the CSV holds the data.") from exc


def _is_map(chart) -> bool:
    data = getattr(chart, "data", None)
    return isinstance(data, pd.DataFrame) and {"from_pos", "to_pos", "from", "weight"} <= set(
        data.columns)


def _map_of_chart(chart):
    """(labels, matrix, title, colour scheme) of a chart drawn by attention_heatmap."""
    df = chart.data
    n = int(max(df["from_pos"].max(), df["to_pos"].max())) + 1
    matrix = np.zeros((n, n))
    matrix[df["from_pos"].to_numpy(), df["to_pos"].to_numpy()] = df["weight"].to_numpy()
    labels = [""] * n
    for pos_col, tok_col in (("to_pos", "to"), ("from_pos", "from")):
        firsts = df[[pos_col, tok_col]].drop_duplicates(pos_col)
        for pos, tok in zip(firsts[pos_col], firsts[tok_col]):
            labels[int(pos)] = str(tok)
    title = chart.title if isinstance(chart.title, str) else "attention map"
    scale = chart.encoding.color.scale
    scheme = getattr(scale, "scheme", None)
    return labels, matrix, title, scheme if isinstance(scheme, str) else "blues"


def _blocks_note(n: int) -> str:
    k = -(-n // MAP_EXPORT_CELLS)
    return (f"This map has {n * n:,} cells: the PNG and SVG show the mean of each {k} x {k} "
            f"block of tokens ({-(-n // k)} x {-(-n // k)} blocks); the CSV holds every cell.")


def export_plan(chart, smaller: Callable | None = None, note: str | None = None):
    """(smaller chart builder, note) for a chart: an attention heatmap with more than
    ``EXPORT_MAX_ROWS`` cells and no ``smaller`` of its own exports in token blocks."""
    if smaller is None and _is_map(chart) and len(chart.data) > EXPORT_MAX_ROWS:
        n = int(max(chart.data["from_pos"].max(), chart.data["to_pos"].max())) + 1

        def blocks():  # built only when a PNG or SVG is asked for
            labels, matrix, title, scheme = _map_of_chart(chart)
            return blocks_chart(labels, matrix, title, scheme=scheme)()

        return blocks, note or _blocks_note(n)
    return smaller, note


def chart_downloads(chart, basename: str, key: str, df=None, smaller: Callable | None = None,
                    note: str | None = None) -> None:
    """PNG + SVG of ``chart`` (a chart, or a callable returning one) and CSV of ``df`` (a
    table, or a callable returning one), each rendered only when clicked, side by side with
    their text labels. ``smaller`` returns the chart to export instead when ``chart`` has
    more than ``EXPORT_MAX_ROWS`` rows; ``note`` (shown beside the buttons) says what."""
    name = _safe(basename)
    png_key, svg_key, csv_key = download_keys(key)
    smaller, note = export_plan(chart, smaller, note)
    row = [Download("PNG", lambda: render_export("png", chart, smaller), f"{name}.png",
                    "image/png", png_key),
           Download("SVG", lambda: render_export("svg", chart, smaller), f"{name}.svg",
                    "image/svg+xml", svg_key)]
    if df is not None:
        table = df if callable(df) else (lambda: df)
        row.append(Download("CSV", lambda: csv_text(table()), f"{name}.csv",
                            "text/csv", csv_key))
    download_row(row, note)


def block_map(labels, matrix: np.ndarray, cells: int = MAP_EXPORT_CELLS):
    """(block labels, block-mean matrix, block size) of a map with at most ``cells`` blocks
    per side: block ``b`` covers tokens ``b*k .. b*k+k-1`` and is labelled by its range and
    first token."""
    n = matrix.shape[0]
    k = max(1, -(-n // cells))
    if k == 1:
        return list(labels), matrix, 1
    m = -(-n // k)
    pad = np.full((m * k, m * k), np.nan)
    pad[:n, :n] = matrix
    blocks = np.nanmean(pad.reshape(m, k, m, k), axis=(1, 3))
    names = [f"{b * k + 1}-{min(n, b * k + k)}: {labels[b * k]}" for b in range(m)]
    return names, blocks, k


def map_downloads(labels, matrix: np.ndarray, title: str, basename: str, key: str,
                  chart=None, **heatmap_kw) -> None:
    """PNG/SVG/CSV of one attention map at any size. Up to ``EXPORT_MAX_ROWS`` cells the
    images hold every cell (``chart`` when given, else :func:`ui.common.charts.attention_heatmap`);
    above it they show the map in blocks of tokens (block means, at most 128 x 128) and the
    UI says so. The CSV always holds every cell."""
    n = matrix.shape[0]

    def full():
        return chart if chart is not None else attention_heatmap(
            map_frame(labels, matrix), labels, title, **heatmap_kw)

    blocks = blocks_chart(labels, matrix, title, **heatmap_kw)
    if n * n <= EXPORT_MAX_ROWS:
        chart_downloads(full, basename, key, df=lambda: map_frame(labels, matrix),
                        smaller=blocks)
        return
    chart_downloads(blocks, basename, key, df=lambda: map_frame(labels, matrix),
                    note=_blocks_note(n))


def blocks_chart(labels, matrix: np.ndarray, title: str, **heatmap_kw) -> Callable:
    """A callable building the block-mean heatmap of a map (see :func:`block_map`)."""

    def build():
        names, mat, k = block_map(labels, matrix)
        return attention_heatmap(map_frame(names, mat, axis_labels=names), names,
                                 f"{title} (mean of {k} x {k} token blocks)",
                                 axis_labels=names, **heatmap_kw)

    return build


def csv_download(df_fn, file_name: str, key: str, label: str = "CSV") -> None:
    """A CSV download whose table is built only when clicked (formula cells neutralised:
    :mod:`ui.common.exports.csvsafe`)."""
    download_button(label, lambda: csv_text(df_fn()), file_name, "text/csv", key)


def json_label(what: str) -> str:
    """A JSON download's label, in a visitor's words (no command line: issue 49)."""
    return f"Download {what} (JSON)"


def json_help(command: str = "the command line") -> str | None:
    """The JSON download's tooltip outside demo mode: the ``command`` whose JSON has the same
    keys, for command-line users (a demo's visitors have no command line)."""
    return settings().for_local(f"For command-line users: the same schema as {command}.") \
        or None


def json_download(data, name: str, key: str, what: str) -> None:
    """A JSON download of ``data`` (a dict, or a callable returning one: built when clicked)."""
    make = data if callable(data) else (lambda: data)
    download_button(json_label(what), lambda: json.dumps(make(), indent=1), name,
                    "application/json", key, help=json_help())
