"""Charts built once per result (issue #13, "rerun cost"): a rerun with cached results should not
rebuild and re-validate its Altair charts.

:func:`cached_chart` builds a chart and its table once per ``key`` (the identity of the cached
result it draws, and the settings: what the result's own cache is keyed on) and keeps (in the
server's byte-bounded chart cache, :mod:`ui.server.caches`), with them, the Vega-Lite spec
Streamlit draws (converted once through Altair's public ``to_dict``, its data as tables, as
``st.altair_chart`` draws it: :func:`vega_lite_spec`). :func:`draw`
sends that spec as it is; the Altair chart stays for the exports and the report, built only
when clicked."""

from __future__ import annotations

import logging
import threading
import weakref
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

import altair as alt
import pandas as pd
import streamlit as st

from ui.server import caches

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuiltChart:
    chart: Any  # the Altair chart (exports, report)
    df: Any  # its table (CSV)
    spec: dict | None  # Streamlit's Vega-Lite spec of the chart; None: draw the chart itself
    title: str  # the chart's title (the report's finding title)


def _title(spec: dict | None, chart, default: str) -> str:
    title = (spec if spec is not None else chart.to_dict()).get("title", default)
    return str(title.get("text", default) if isinstance(title, dict) else title)


_ALTAIR_LOCK = threading.Lock()  # Altair's theme and data transformer are process-wide


def _data_names(node) -> set[str]:
    """Every named dataset a spec refers to (``{"data": {"name": ...}}``, at any depth)."""
    if isinstance(node, dict):
        names = {node["data"]["name"]} if isinstance(node.get("data"), dict) \
            and "name" in node["data"] else set()
        return names.union(*(_data_names(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_data_names(v) for v in node))
    return set()


def vega_lite_spec(chart) -> dict | None:
    """The Vega-Lite spec of an Altair chart through Altair's public ``to_dict`` (no theme, as
    Streamlit draws it; every row kept), its datasets as tables; None when it cannot be made
    (the chart is then drawn by ``st.altair_chart``, rebuilt on each rerun: slower, same view).
    Altair's data transformer is process-wide and ``st.altair_chart`` switches it too (under
    its own lock), so a spec whose named data did not all land in ``datasets`` is made again."""
    for _ in range(3):
        try:
            with _ALTAIR_LOCK:
                theme = alt.theme.enable("none") if alt.theme.active == "default" \
                    else nullcontext()
                with theme, alt.data_transformers.enable("default", max_rows=None):
                    spec = chart.to_dict()
        except Exception as exc:  # noqa: BLE001 - a chart Altair cannot convert: drawn as is
            _LOG.warning("chart spec not cached: %s", exc)
            return None
        datasets = spec.get("datasets") or {}
        if _data_names(spec) <= set(datasets):
            spec["datasets"] = {name: pd.DataFrame.from_records(rows)
                                for name, rows in datasets.items()}
            return spec
    return None


class _Built:
    """The server's built charts (:func:`ui.server.caches.charts`: bounded by bytes, server-wide
    and per visitor, oldest first out; ``clear()`` empties it)."""

    @staticmethod
    def clear() -> None:
        caches.charts().clear()


_built = _Built()


def cached_chart(key: tuple, build: Callable[[], tuple[Any, Any]]) -> BuiltChart:
    """The chart ``build()`` returns (``(chart, table)``), built once per ``key``: a tuple of
    plain values (the chart's name first, then what the drawn result is keyed on). Kept in
    :func:`ui.server.caches.charts` while its bytes fit (its table and the spec's data)."""
    key = caches.hashable(key)

    def make() -> BuiltChart:
        chart, df = build()
        spec = vega_lite_spec(chart)
        return BuiltChart(chart=chart, df=df, spec=spec, title=_title(spec, chart, str(key[0])))

    return caches.charts().get_or_make(("chart", key), make, owner=caches.owner())


_COLOUR_CHANNELS = ("color", "fill", "stroke")


def has_gradient_legend(spec) -> bool:
    """Whether a Vega-Lite spec (any layer, facet or concatenation) colours by a quantitative
    field with a legend: Vega draws that legend as a gradient."""
    if isinstance(spec, list):
        return any(has_gradient_legend(s) for s in spec)
    if not isinstance(spec, dict):
        return False
    enc = spec.get("encoding")
    if isinstance(enc, dict):
        for channel in _COLOUR_CHANNELS:
            c = enc.get(channel)
            if isinstance(c, dict) and c.get("type") == "quantitative" \
                    and c.get("legend", {}) is not None:
                return True
    return any(has_gradient_legend(spec[k]) for k in ("layer", "concat", "hconcat", "vconcat",
                                                      "spec") if k in spec)


def with_renderer(spec: dict) -> dict:
    """``spec`` drawn on a canvas when it has a gradient legend (a copy; a renderer the spec
    names itself is kept). Vega's SVG renderer fills a gradient with ``url(<page URL>#gradient_0)``,
    the page's address when it was drawn: once the page's URL changes in place (a tab, any
    widget bound to the URL) that points at another document and the colour bar vanishes
    (issue 22). The canvas renderer paints the gradient itself."""
    if not has_gradient_legend(spec):
        return spec
    meta = spec.get("usermeta") if isinstance(spec.get("usermeta"), dict) else {}
    opts = meta.get("embedOptions") if isinstance(meta.get("embedOptions"), dict) else {}
    if "renderer" in opts:
        return spec
    return {**spec, "usermeta": {**meta, "embedOptions": {**opts, "renderer": "canvas"}}}


def pixel_width(spec: dict, default=None):
    """The width to ask Streamlit for: a single (or layered) view's own pixel width, which
    Streamlit draws at ``min(width, column)`` (the whole chart fitted into it), so that no chart
    passes its column on a phone; ``default`` for a facet or concatenation (they keep their
    panels' sizes: ``ui.common.charts.side_by_side`` stacks those on a phone) or a chart that
    sizes itself (its own autosize, but for ``charts.fit_width``'s "fit-x": a width that is
    the whole chart's, as Streamlit's own)."""
    width, autosize = spec.get("width"), spec.get("autosize")
    fit_x = isinstance(autosize, dict) and autosize.get("type") == "fit-x"  # charts.fit_width
    if isinstance(width, bool) or not isinstance(width, (int, float)) or (
            autosize is not None and not fit_x):
        return default
    if any(k in spec for k in ("facet", "hconcat", "vconcat", "concat", "repeat")):
        return default
    return int(width)


def draw(built: BuiltChart, stretch: bool = False, **kw):
    """Draw a built chart as ``st.altair_chart(chart, width="stretch" if stretch, **kw)`` would
    (``kw``: key, on_select, selection_mode, width...), on a canvas when it has a gradient legend
    (:func:`with_renderer`); returns what Streamlit returns."""
    kw.setdefault("width", "stretch" if stretch else None)
    if kw["width"] in (None, "content"):
        kw["width"] = pixel_width(built.spec if built.spec is not None else built.chart.to_dict(),
                                  kw["width"])
    if built.spec is None:
        return st.altair_chart(built.chart, **kw)
    # Streamlit moves the datasets out of the dict it is given
    spec = with_renderer(dict(built.spec))
    if "datasets" in spec:
        spec["datasets"] = dict(spec["datasets"])
    return st.vega_lite_chart(spec, **kw)


def show(chart, **kw):
    """``st.altair_chart(chart, **kw)`` for a chart built on this rerun, through :func:`draw`
    (a gradient legend keeps its colour bar when the page's URL changes)."""
    return draw(BuiltChart(chart=chart, df=None, spec=vega_lite_spec(chart), title=""), **kw)


_OWNED: dict[int, dict] = {}  # id of a live result object -> {name: BuiltChart or value}


def owned(owner, name: str, build: Callable[[], Any]) -> Any:
    """``build()`` once per live ``owner`` object (a result kept in the session, e.g. the Aspect
    heads page's discovery) and ``name``; forgotten with the owner."""
    key = id(owner)
    memo = _OWNED.get(key)
    if memo is None:
        memo = _OWNED[key] = {}
        weakref.finalize(owner, _OWNED.pop, key, None)
    if name not in memo:
        memo[name] = build()
    return memo[name]


def owned_chart(owner, name: str, build: Callable[[], tuple[Any, Any]]) -> BuiltChart:
    """:func:`cached_chart` for a chart of a result that lives in the session (``owner``)."""

    def make() -> BuiltChart:
        chart, df = build()
        spec = vega_lite_spec(chart)
        return BuiltChart(chart=chart, df=df, spec=spec, title=_title(spec, chart, name))

    return owned(owner, name, make)
