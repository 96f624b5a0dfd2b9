"""The benchmarks' one harness (bench/harness.py): the busy-machine warning, the ratio row, the
percentile, the clock and the repeats, the shared options and the JSON of a run."""

import json
import math

import numpy as np
import pytest

from bench import harness


def _facts(load: float, cores: int = 2) -> dict:
    return {"date": "2026-12-08 10:00 UTC", "cores": cores, "load": [load, 0.5, 0.25],
            "torch_threads": None}


def test_a_busy_machine_is_said_and_a_quiet_one_is_not():
    assert harness.busy_warning(_facts(1.0)) is None  # 0.5 x 2 cores: still quiet
    warning = harness.busy_warning(_facts(1.1))
    assert warning.startswith("WARNING: the machine is not quiet (1-min load 1.1 > 0.5 x 2")
    line = harness.facts_line(_facts(1.1))
    assert line == ("machine: 2 cores, load average 1.10 0.50 0.25 (1/5/15 min); "
                    "2026-12-08 10:00 UTC")
    assert "torch threads 3" in harness.facts_line({**_facts(0.0), "torch_threads": 3})


def test_ratio_line_and_percentile():
    assert harness.ratio_line("study", 12.34, 8.69) == "study: 12.3 s, 1.42x the floor"
    assert harness.ratio_line("loop", 3.0, 1.5, "the batched pass", digits=2) == \
        "loop: 3.00 s, 2.00x the batched pass"
    xs = [0.3, 0.1, 0.7, 0.2, 0.9]
    for q in (0, 50, 90, 95, 100):
        assert harness.percentile(xs, q) == pytest.approx(np.percentile(xs, q))
    assert math.isnan(harness.percentile([], 95))


def test_timer_and_repeats():
    with harness.Timer() as t:
        sum(range(10_000))
    assert t.wall > 0 and t.cpu >= 0
    assert str(t).endswith(" s CPU") and " s wall, " in f"{t:.1f}"
    calls = []
    r = harness.repeat(lambda: calls.append(1) or len(calls), 3, warmup=2)
    assert len(calls) == 5 and r.last == 5 and len(r.walls) == len(r.cpus) == 3
    assert r.best <= r.median <= r.worst


def test_options_and_the_run_json(tmp_path, capsys):
    ap = harness.parser("A bench.\n\nMore.", threads=2)
    ap.add_argument("--n", type=int, default=3)
    args = ap.parse_args(["--json", str(tmp_path / "out.json")])
    assert (args.threads, args.n) == (2, 3) and ap.description == "A bench."
    assert not hasattr(harness.parser(None, torch=False).parse_args([]), "threads")
    run = harness.Run(args, "bench.studies.demo")
    assert run.ratio("study", 3.0, 2.0) == 1.5
    run.row("extra", bytes=10)
    run.done(note="x")
    out = capsys.readouterr().out
    assert "study: 3.0 s, 1.50x the floor" in out and "load average at the end" in out
    got = json.loads((tmp_path / "out.json").read_text())
    assert got["bench"] == "bench.studies.demo" and got["note"] == "x"
    assert got["rows"] == [{"what": "study", "seconds": 3.0, "baseline": "the floor",
                            "baseline_seconds": 2.0, "ratio": 1.5},
                           {"what": "extra", "bytes": 10}]
    assert got["facts"]["cores"] >= 1 and got["facts_after"]["load"]
