"""Every CSV download neutralises formula cells (issue 50): a text cell or column name that
starts with = + - @ (or a tab / carriage return) is written with a quote before it, numbers stay
numbers, and no module of ui/ writes a CSV but through ui.common.exports.csvsafe."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import altair as alt
import pandas as pd

import ui.common.exports.export as export
from ui.common.exports.csvsafe import csv_text, neutralise

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ["@SUM(1+1)", "=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3", "\tTAB", "\rCR",
           "plain", "a=b", ""]


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_neutralise_quotes_only_text_that_starts_a_formula():
    assert [neutralise(v) for v in HOSTILE] == [
        "'@SUM(1+1)", "'=HYPERLINK(\"http://x\",\"y\")", "'+1+2", "'-2+3", "'\tTAB", "'\rCR",
        "plain", "a=b", ""]
    assert neutralise(-0.5) == -0.5 and neutralise(None) is None and neutralise(3) == 3


def test_csv_text_quotes_text_cells_and_headers_and_keeps_numbers():
    df = pd.DataFrame({"token": HOSTILE, "score": [-0.5] * len(HOSTILE),
                       "=label": pd.Categorical(["-x"] * len(HOSTILE)),
                       "flag": [True] * len(HOSTILE)})
    out = rows(csv_text(df))
    assert out[0] == ["token", "score", "'=label", "flag"]
    assert [r[0] for r in out[1:]] == [neutralise(v) for v in HOSTILE]
    assert {r[1] for r in out[1:]} == {"-0.5"}          # a number cell, not text
    assert {r[2] for r in out[1:]} == {"'-x"}           # categorical text too
    assert {r[3] for r in out[1:]} == {"True"}
    assert df["token"].tolist() == HOSTILE              # the caller's table is not changed


def test_every_csv_download_path_writes_neutralised_cells(monkeypatch):
    """chart_downloads' CSV button and csv_download both hand the browser neutralised text."""
    made = {}
    monkeypatch.setattr(export, "download_row",
                        lambda row, note=None: made.update({d.label: d.make for d in row}))
    monkeypatch.setattr(export, "download_button",
                        lambda label, make, *a, **k: made.update({label: make}))
    df = pd.DataFrame({"label": ["@SUM(1+1)", "ok"], "n": [1, 2]})
    chart = alt.Chart(df).mark_bar().encode(x="n:Q", y="label:N")
    export.chart_downloads(chart, "x", key="k", df=df)
    export.csv_download(lambda: df, "x.csv", key="k2", label="Table CSV")
    for label in ("CSV", "Table CSV"):
        assert rows(made[label]())[1:] == [["'@SUM(1+1)", "1"], ["ok", "2"]]


def test_no_module_of_the_ui_writes_a_csv_but_the_safe_one():
    own = {ROOT / "ui/common/exports/csvsafe.py"}
    found = []
    for path in list((ROOT / "ui").rglob("*.py")) + list((ROOT / "pages").rglob("*.py")) + \
            [ROOT / "app.py"]:
        if path in own:
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"\.to_csv\(|csv\.writer\(", text):
            found.append(str(path.relative_to(ROOT)))
    assert found == []
