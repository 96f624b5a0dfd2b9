"""ui.server.caches: the host's cache_mb / visitor_cache_mb split among the byte-bounded caches
(charts, search indexes, searchers), and the chart cache keeping built charts by their bytes,
oldest first out, each visitor's within their own share."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import pytest

from analysis.search import index as search_index
from ui.common import chart_cache
from ui.server import caches
from ui.server.settings import SettingsError, load_settings, settings


@pytest.fixture
def host(monkeypatch, tmp_path):
    def use(text: str):
        path = tmp_path / "s.toml"
        path.write_text(text)
        monkeypatch.setenv("DASHBOARD_SETTINGS", str(path))
        settings.cache_clear()
        caches._caches.cache_clear()

    yield use
    monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    settings.cache_clear()
    caches._caches.cache_clear()
    search_index.searchers.max_bytes = search_index.SEARCHER_BYTES


def test_the_budgets_follow_the_settings(host):
    assert (load_settings({}).cache_mb, load_settings({}).visitor_cache_mb) == (512, 128)
    host("cache_mb = 100\nvisitor_cache_mb = 8\n")
    mb = 2**20
    assert caches.charts().max_bytes == 30 * mb and caches.charts().owner_bytes == 8 * mb
    assert caches.results().max_bytes == 30 * mb and caches.indexes().max_bytes == 15 * mb
    assert search_index.searchers.max_bytes == 25 * mb
    with pytest.raises(SettingsError, match="cache_mb"):
        load_settings({"DASHBOARD_SETTINGS": str(_file(host, "cache_mb = 2\n"))})


def _file(host, text):
    host(text)
    import os

    return os.environ["DASHBOARD_SETTINGS"]


def _frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(rows, dtype=np.float64), "y": np.ones(rows)})


def test_built_charts_are_kept_by_their_bytes_oldest_first(host, monkeypatch):
    host("cache_mb = 16\nvisitor_cache_mb = 16\n")
    monkeypatch.setattr(caches.charts(), "max_bytes", 2_000_000)
    builds = []

    def build(rows):
        def make():
            builds.append(rows)
            df = _frame(rows)
            return alt.Chart(df).mark_point().encode(x="x:Q", y="y:Q"), df
        return make

    # a 5,000-row chart: its table (80 KB) and its spec's data (its rows again): ~165 KB
    for name in ("a", "b", "c"):
        chart_cache.cached_chart((name, 1), build(5_000))
    held = caches.charts().total
    assert len(builds) == 3 and 3 * 150_000 < held <= 3 * 200_000
    chart_cache.cached_chart(("a", 1), build(5_000))
    assert len(builds) == 3  # kept: not built again
    caches.charts().max_bytes = held + 10_000  # room for these three, not a fourth
    for name in ("d", "e", "f", "g"):
        chart_cache.cached_chart((name, 1), build(5_000))
    assert len(builds) == 7 and caches.charts().total <= held + 10_000
    assert ("chart", ("b", 1)) not in caches.charts()  # the oldest unused went first
    assert ("chart", ("g", 1)) in caches.charts()


def test_one_visitor_makes_way_for_their_own_charts(host, monkeypatch):
    host("cache_mb = 64\nvisitor_cache_mb = 1\n")
    who = {"owner": "address:10.0.0.1"}
    monkeypatch.setattr(caches, "owner", lambda: who["owner"])
    chart_cache.cached_chart(("theirs", 1), lambda: (alt.Chart(_frame(10)).mark_point(),
                                                      _frame(10)))
    who["owner"] = "address:10.0.0.2"
    for k in range(10):  # ~165 KB each: 1 MiB holds six
        chart_cache.cached_chart(("mine", k), lambda: (
            alt.Chart(_frame(5_000)).mark_point().encode(x="x:Q"), _frame(5_000)))
    assert 5 * 150_000 < caches.charts().owner_total("address:10.0.0.2") <= 2**20
    assert ("chart", ("theirs", 1)) in caches.charts()  # another visitor's stays
    assert ("chart", ("mine", 9)) in caches.charts() and ("chart", ("mine", 0)) not in \
        caches.charts()


def test_byte_cached_keeps_results_by_their_bytes_keyed_without_underscored_arguments(host):
    host("cache_mb = 16\n")
    made = []

    @caches.byte_cached()
    def maps(spec: str, n: int, _model=None):
        made.append((spec, n))
        return np.zeros((n, 1000), np.float32)  # n x 4 KB

    a = maps("m", 100, _model=object())
    assert maps("m", 100, _model=object()) is a and made == [("m", 100)]  # one result
    maps("m", 200)
    assert caches.results().total == pytest.approx(300 * 4000, rel=0.01)
    caches.results().max_bytes = 350 * 4000
    maps("m", 150)                      # passes the budget: the oldest (100) goes
    assert maps("m", 200) is not None and made[-1] == ("m", 150)
    maps("m", 100)
    assert made[-1] == ("m", 100)       # made again
    maps.clear()
    assert caches.results().total == 0
