"""The readings of No-op statistics, Fine-tuning drift and Syntax beside their numbers, in Debian
Chromium (Playwright), one server for the module: each reading's number is read next to the
table beside it, in the same unit and rounding, with its 95% interval (issue 35, part 4).
Drift compares the tiny stand-in example checkpoint with a copy whose weights were shaken, so
that something changed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from importance_util import stand_in_example
from browser_util import _wait_idle
from test_readings_browser import _frame_with, _items, _open, _table
from test_readings_browser import browser  # noqa: F401  (the module's Chromium, one per module)


def _shaken_copy(folder: Path, out: Path) -> Path:
    """``folder``'s checkpoint with every weight moved by seeded noise (the same shape: a pair
    the Drift page can compare)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(folder)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(folder).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def server(example_server, tmp_path_factory):
    """The tier's app server with the stand-in example (conftest.py), and a pair of folders for
    the Drift page: the same stand-in checkpoint and a shaken copy of it."""
    before = stand_in_example(tmp_path_factory.mktemp("readings-more"))
    after = _shaken_copy(before, tmp_path_factory.mktemp("shaken") / "after")
    return example_server, str(before), str(after)


def _reading(page, starts: str) -> str:
    lines = [t for t in _items(page) if t.startswith(starts)]
    assert lines, (starts, _items(page))
    return lines[0]


def test_noop_reading_beside_its_layer_table(server, browser):  # noqa: F811
    """The peak layer's [CLS]+[SEP] share and interval, the punctuation peak's and the last
    layer's [CLS] entropy are the per-layer table's, in percent and nats."""
    url = server[0]
    page, errors = _open(browser, url + "/noop?noop_max=12")
    try:
        page.get_by_text("Reading", exact=True).wait_for(timeout=300_000)
        _wait_idle(page, timeout=300_000)
        rows = {r["layer"]: r for r in _table(_frame_with(page, "[CLS]+[SEP] %"))}
        lines = [t for t in _items(page) if "the peak is layer" in t or "the most is layer" in t]
        assert lines, _items(page)
        special = lines[0]
        m = re.search(r"(?:peak is|most is) layer (\d+) \((\d+)%, 95% ([\d.]+)% to ([\d.]+)%\)",
                      special)
        assert m, special
        row = rows[m.group(1)]
        assert round(float(row["[CLS]+[SEP] %"])) == int(m.group(2))
        assert row["[CLS]+[SEP] 95%"] == f"{m.group(3)} to {m.group(4)}"
        pun = _reading(page, "Punctuation")
        m = re.search(r"in layer (\d+) \((\d+)% on average, 95% ([\d.]+)% to ([\d.]+)%\)", pun)
        assert m, pun
        row = rows[m.group(1)]
        assert round(float(row["punctuation %"])) == int(m.group(2))
        assert row["punctuation 95%"] == f"{m.group(3)} to {m.group(4)}"
        top2 = sorted(rows.values(), key=lambda r: -float(r["punctuation %"]))[:2]
        lo_top, _ = (float(x) for x in top2[0]["punctuation 95%"].split(" to "))
        _, hi_second = (float(x) for x in top2[1]["punctuation 95%"].split(" to "))
        assert ("within noise of layer" in pun) == (lo_top <= hi_second)
        ent = _reading(page, "The [CLS] token's attention")
        m = re.search(r"entropy ([\d.]+) nats \(95% ([\d.]+) to ([\d.]+)\)", ent)
        last = rows[str(max(int(k) for k in rows))]
        assert m and float(last["[CLS] entropy (nats)"]) == float(m.group(1)), (ent, last)
        assert last["[CLS] entropy 95%"] == f"{m.group(2)} to {m.group(3)}"
        sink = _reading(page, "In ")
        assert re.search(r"\d+% of attention goes to \[(CLS|SEP)\] \(95% [\d.]+% to [\d.]+%\)",
                         sink), sink
        assert not errors, errors
    finally:
        page.close()


def test_drift_reading_beside_its_layer_table(server, browser):  # noqa: F811
    """The most and least changed layers' mean head cosines and intervals are the per-layer
    table's (three decimals); 'within noise' exactly when the two lowest intervals overlap."""
    url, before, after = server
    from urllib.parse import quote

    page, errors = _open(browser, f"{url}/drift?drift_before={quote(before)}"
                                  f"&drift_after={quote(after)}&drift_max=12")
    try:
        page.get_by_text("Reading", exact=True).wait_for(timeout=300_000)
        _wait_idle(page, timeout=300_000)
        rows = {r["layer"]: r for r in _table(_frame_with(page, "mean head cosine"))}
        line = _reading(page, "Layer ")
        m = re.match(r"Layer (\d+) changed most \(mean head cosine ([\d.]+), 95% ([\d.]+) to "
                     r"([\d.]+)\)", line)
        assert m, line
        row = rows[m.group(1)]
        assert float(row["mean head cosine"]) == float(m.group(2))
        assert row["95% interval"] == f"{m.group(3)} to {m.group(4)}"
        m2 = re.search(r"and layer (\d+) least \(([\d.]+), 95% ([\d.]+) to ([\d.]+)\)", line)
        assert m2 and rows[m2.group(1)]["95% interval"] == f"{m2.group(3)} to {m2.group(4)}"
        low2 = sorted(rows.values(), key=lambda r: float(r["mean head cosine"]))[:2]
        _, hi_top = (float(x) for x in low2[0]["95% interval"].split(" to "))
        lo_next, _ = (float(x) for x in low2[1]["95% interval"].split(" to "))
        assert ("within noise of layer" in line) == (hi_top >= lo_next), line
        assert "the later half's mean cosine minus the earlier half's is" in line
        assert not errors, errors
    finally:
        page.close()


def test_syntax_reading_beside_its_relation_table(server, browser):  # noqa: F811
    """A relation's lead over the fixed-offset baseline: the reading's points and interval are
    the table's 'gain (points)' and 'gain 95% (points)', and 'within noise' goes with it."""
    url = server[0]
    page, errors = _open(browser, url + "/syntax?syntax_max=60&syntax_min=5")
    try:
        page.get_by_text("Reading", exact=True).wait_for(timeout=300_000)
        _wait_idle(page, timeout=300_000)
        rows = {r["relation"]: r for r in _table(_frame_with(page, "gain 95% (points)"))}
        checked = 0
        for line in _items(page):
            m = re.match(r"(?:The largest gap is for )?([a-z:]+) \(.*\((\d+) points(?: less)?"
                         r"(, within noise)?; 95% (-?[\d.]+) to (-?[\d.]+) points\)\.$", line)
            if not m or m.group(1) not in rows:
                continue
            row = rows[m.group(1)]
            assert round(float(row["gain (points)"])) == int(m.group(2)), (line, row)
            band = f"{m.group(4)} to {m.group(5)}"
            noisy = float(m.group(4)) <= 0 <= float(m.group(5))
            assert row["gain 95% (points)"] == band + (" (within noise)" if noisy else "")
            assert bool(m.group(3)) == noisy
            checked += 1
        assert checked, _items(page)
        assert not errors, errors
    finally:
        page.close()
