"""Helpers shared by the pages' AppTests."""

from __future__ import annotations

from pathlib import Path

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def local_app(monkeypatch, cache: Path) -> None:
    """The app as a person runs it locally (not the demo, the host's default settings), on the
    cache folder ``cache``, with the example checkpoint neither built nor built on a first visit
    (``host_settings.cache_clear()`` once the test ends: the caller's fixture does it)."""
    import ui.common.frame.models
    from ui.server.settings import settings as host_settings

    monkeypatch.delenv("DASHBOARD_MODE", raising=False)
    monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    monkeypatch.setenv("DASHBOARD_CACHE", str(cache))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    monkeypatch.setattr(ui.common.frame.models, "example_ready", lambda: False)
    host_settings.cache_clear()


def open_app_page(page: str, **params):
    """``pages/<page>.py`` opened from the app with ``params`` in its URL, without an
    exception."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, at.exception
    return at


def chart_frames(at) -> list:
    """The data frames behind the page's Altair charts (Arrow IPC streams in the protos)."""
    import pyarrow as pa

    out = []
    for chart in wide_charts(at):
        for ds in chart.proto.datasets:
            out.append(pa.ipc.open_stream(ds.data.data).read_all().to_pandas())
    return out


def wide_charts(at) -> list:
    """The page's charts in order, without the phone's copy of a side-by-side comparison
    (``ui.common.charts.side_by_side``: the same data, stacked, in a ``fitnarrow-`` block)."""
    from ui.common.frame.state import fit_keys

    phone = fit_keys("")[1]
    out = []

    def walk(node, hidden: bool) -> None:
        hidden = hidden or str(getattr(node, "key", None) or "").startswith(phone)
        if getattr(node, "type", None) == "vega_lite_chart" and not hidden:
            out.append(node)
        for child in getattr(node, "children", {}).values():
            walk(child, hidden)

    walk(at._tree, False)
    return out
