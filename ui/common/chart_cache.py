"""Charts built once per result (issue #13, "rerun cost"): a rerun with cached results should not
rebuild and re-validate its Altair charts.

:func:`cached_chart` builds a chart and its table once per ``key`` (the identity of the cached
result it draws, and the settings: what the result's own cache is keyed on) and keeps, with
them, the Vega-Lite spec Streamlit draws (converted once, the data as Arrow, exactly as
``st.altair_chart`` converts it). :func:`draw` sends that spec as it is; the Altair chart stays
for the exports and the report, built only when clicked."""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import streamlit as st

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


def _convert(chart) -> dict | None:
    """The spec ``st.altair_chart`` would send, or None when this Streamlit cannot give it (the
    chart is then drawn by ``st.altair_chart``, rebuilt on each rerun: slower, same view)."""
    try:
        from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec
    except ImportError:  # pragma: no cover - depends on the Streamlit release
        return None
    try:
        return _convert_altair_to_vega_lite_spec(chart)
    except Exception as exc:  # pragma: no cover - a chart Streamlit cannot convert either
        _LOG.warning("chart spec not cached: %s", exc)
        return None


@st.cache_resource(max_entries=64, ttl=3600, show_spinner=False)
def _built(key: tuple, _build: Callable) -> BuiltChart:
    chart, df = _build()
    spec = _convert(chart)
    return BuiltChart(chart=chart, df=df, spec=spec, title=_title(spec, chart, str(key[0])))


def cached_chart(key: tuple, build: Callable[[], tuple[Any, Any]]) -> BuiltChart:
    """The chart ``build()`` returns (``(chart, table)``), built once per ``key``: a tuple of
    plain values (the chart's name first, then what the drawn result is keyed on)."""
    return _built(tuple(key), build)


def draw(built: BuiltChart, stretch: bool = False, **kw):
    """Draw a built chart as ``st.altair_chart(chart, width="stretch" if stretch, **kw)`` would
    (``kw``: key, on_select, selection_mode, width...); returns what Streamlit returns."""
    kw.setdefault("width", "stretch" if stretch else None)
    if built.spec is None:
        return st.altair_chart(built.chart, **kw)
    spec = dict(built.spec)  # Streamlit moves the datasets out of the dict it is given
    if "datasets" in spec:
        spec["datasets"] = dict(spec["datasets"])
    return st.vega_lite_chart(spec, **kw)


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
        spec = _convert(chart)
        return BuiltChart(chart=chart, df=df, spec=spec, title=_title(spec, chart, name))

    return owned(owner, name, make)
