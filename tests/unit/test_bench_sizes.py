"""bench/sizes/run.py on a tiny stand-in (issue 30): inputs of the asked token count, each
row's study and floor timed, the markdown table's numbers those of the rows."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.sizes import inputs
from bench.sizes import run as bench_sizes
from bench.sizes import standins


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    base, clf = standins.build("bert-base-uncased", tmp_path_factory.mktemp("standins"),
                               tiny=True)
    return SimpleNamespace(size="tiny", base=str(base), clf=str(clf), n=bench_sizes.QUICK,
                           quick=True, work=str(tmp_path_factory.mktemp("work")),
                           methods=["attention", "value_zeroing"])


def test_pair_of_length_hits_the_token_count(tiny):
    from analysis.core.models import load_model

    tok = load_model(tiny.base, device="cpu").tokenizer
    for n in (40, 128):
        text, pair = inputs.pair_of_length(tok, n)
        got = len(tok(text, pair)["input_ids"])
        assert n - 4 <= got <= n  # the most whole words that fit
        assert pair == inputs.AUX


def test_attribution_rows_time_study_and_floor(tiny):
    rows = bench_sizes.run_row("tiny", "attribution128", tiny)
    assert [r["what"] for r in rows] == ["attention", "value_zeroing"]
    for r in rows:
        assert "error" not in r, r
        assert r["seconds"] > 0 and r["floor_seconds"] > 0
        assert r["ratio"] == pytest.approx(r["seconds"] / r["floor_seconds"])
        assert 120 <= int(r["n"].split()[0]) <= 128
    table = bench_sizes.markdown(rows)
    line = [x for x in table.splitlines() if "value_zeroing" in x][0]
    vz = rows[1]
    assert f"| {vz['seconds']:.2f} | {vz['floor_seconds']:.2f} | {vz['ratio']:.2f}x |" in line


def test_a_failing_row_is_reported_not_raised(tiny):
    bad = SimpleNamespace(**{**vars(tiny), "clf": "/nonexistent/folder"})
    rows = bench_sizes.run_row("tiny", "attribution128", bad)
    assert len(rows) == 1 and "does not exist" in rows[0]["error"]
    assert "**" in bench_sizes.markdown(rows)
