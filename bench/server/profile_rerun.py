"""Profile: what a page rerun costs once its results are cached (issue #13, "rerun cost").

    nice python -m bench.server.profile_rerun [--runs 12] [--pages attention,noop] [--top 12]

Each page (and each view of the Attention page) opens once in Streamlit's AppTest (the model
loads, the results are computed and cached), then reruns ``--runs`` times with nothing changed,
as a widget click that hits every cache does. Every rerun runs the whole script: app.py, the
sidebar, the page, its cache look-ups (hashing the cache keys) and the building of its charts
and payloads. Printed per page: p50/p95 of the rerun's wall time, the ratio to a bare
one-line script's rerun measured in the same run (the floor: AppTest's own work), and the
functions of the project (and the Streamlit caching calls) that cost the most, from cProfile
over all reruns. AppTest's script runner leaves out the full garbage collection the server
runs after every rerun (``runner.postScriptGC``: ``gc.collect(2)``), which was most of a real
rerun's cost (bench/server/cpu.py; the dashboard freezes its long-lived heap out of it,
``ui.server.housekeeping.freeze_long_lived``), so it is timed here on its own, in this process
with the heap as the app left it, and printed beside the rerun.
"""

from __future__ import annotations

import cProfile
import gc
import os
import pstats
import tempfile
from pathlib import Path

import numpy as np

from bench import harness

ROOT = harness.ROOT
os.environ.setdefault("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PAIR_A = ("The pasta was superb, but the waiter ignored us for twenty minutes and the wine "
          "list was short.")
# (name, page file, query parameters)
PAGES = [
    ("attention: head view", "pages/attention.py", {"view": "Head view"}),
    ("attention: model view", "pages/attention.py", {"view": "Model view"}),
    ("attention: heatmap", "pages/attention.py", {"view": "Heatmap", "layer": "3", "head": "4"}),
    ("attention: neuron view", "pages/attention.py", {"view": "Neuron view", "layer": "2"}),
    ("attention: long pair, head view", "pages/attention.py",
     {"view": "Head view", "mode": "Pair", "a": " ".join([PAIR_A] * 20), "b": PAIR_A}),
    ("noop", "pages/noop.py", {}),
    ("aspects", "pages/aspects.py", {}),
    ("drift", "pages/drift.py", {}),
    ("syntax", "pages/syntax.py", {}),
    ("report", "pages/report.py", {}),
]
OURS = ("/ui/", "/pages/", "/analysis/", "app.py")
CACHING = ("caching/hashing", "cache_utils", "cache_data_api", "cache_resource_api")


class ScriptProfile:
    """cProfile of the script thread: AppTest runs each rerun in its own thread, which the
    caller's profiler does not see, so the script runner's run is wrapped while active."""

    def __init__(self):
        from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

        self.prof, self.active, self._cls = cProfile.Profile(), False, ScriptRunner
        real = ScriptRunner._run_script
        owner = self

        def run(runner, *a, **kw):
            if not owner.active:
                return real(runner, *a, **kw)
            owner.prof.enable()
            try:
                return real(runner, *a, **kw)
            finally:
                owner.prof.disable()

        ScriptRunner._run_script = run


def _app(page: str, params: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    if page != "pages/attention.py":
        at.switch_page(page).run()
    return at


def _floor(runs: int) -> list[float]:
    from streamlit.testing.v1 import AppTest

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bare.py"
        script.write_text("import streamlit as st\nst.write('bare')\n", encoding="utf-8")
        at = AppTest.from_file(str(script)).run()
        return harness.repeat(at.run, runs).walls


def _top(prof: cProfile.Profile, runs: int, top: int, everything: bool = False) -> list[str]:
    """The costliest functions per rerun: the project's and Streamlit's caching calls by
    cumulative time, or (``everything``) any function by its own time."""
    stats = pstats.Stats(prof)
    rows = []
    for (file, line, name), (_, ncalls, tt, ct, _) in stats.stats.items():
        mine = any(p in file for p in OURS) and str(ROOT) in file
        if everything or mine or any(p in file for p in CACHING):
            where = file.replace(str(ROOT) + "/", "") if mine else \
                file.split("site-packages/")[-1]
            key = tt if everything else ct
            rows.append((key / runs, ct / runs, tt / runs, ncalls / runs,
                         f"{where}:{line} {name}"))
    rows = [r[1:] for r in sorted(rows, reverse=True)]
    return [f"    {ct * 1e3:8.1f} ms cum {tt * 1e3:7.1f} ms own {n:7.0f} calls  {what}"
            for ct, tt, n, what in rows[:top]]


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--pages", default="", help="comma-separated name prefixes (default: all)")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--everything", action="store_true",
                    help="rank every function (libraries too) by its own time")
    args = ap.parse_args()
    run = harness.start(args)
    wanted = [p.strip() for p in args.pages.split(",") if p.strip()]
    floor = float(np.median(_floor(args.runs)))
    profile = ScriptProfile()
    print(f"floor (a bare one-line script's rerun in AppTest): p50 {floor * 1e3:.1f} ms\n")
    summary = []
    for name, page, params in PAGES:
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        at, t = harness.timed(lambda: _app(page, params))
        first = t.wall
        if at.exception:
            print(f"{name}: the page raised {at.exception[0].value[:200]}\n")
            continue
        # one untimed rerun first (warmup=1): whatever the first run set up
        times = harness.repeat(at.run, args.runs, warmup=1).walls
        n_prof = max(3, args.runs // 2)
        profile.prof, profile.active = cProfile.Profile(), True
        for _ in range(n_prof):
            at.run()
        profile.active = False
        prof = profile.prof
        p50, p95 = np.percentile(times, 50), np.percentile(times, 95)
        # what the server adds after each rerun (AppTest does not run it)
        collect = harness.repeat(lambda: gc.collect(2), 3).cpus
        summary.append((name, p50, p95))
        run.row(name, p50_seconds=float(p50), p95_seconds=float(p95), floor_seconds=floor,
                ratio=float(p50 / floor), first_seconds=first,
                gc_collect_cpu_seconds=float(np.median(collect)))
        print(f"{name}: first run {first:.1f} s; rerun p50 {p50 * 1e3:.0f} ms, p95 "
              f"{p95 * 1e3:.0f} ms ({p50 / floor:.1f}x the floor); the server's post-rerun "
              f"gc.collect(2) adds {np.median(collect) * 1e3:.0f} ms CPU ({len(gc.get_objects())} "
              f"objects tracked, {gc.get_freeze_count()} frozen); per profiled rerun:")
        print("\n".join(_top(prof, n_prof, args.top, args.everything)) + "\n")
    print("page rerun with cached results (unprofiled times above):")
    for name, p50, p95 in summary:
        print(f"  {name:34s} p50 {p50 * 1e3:7.0f} ms  p95 {p95 * 1e3:7.0f} ms  "
              f"{p50 / floor:5.1f}x floor")
    run.done()


if __name__ == "__main__":
    main()
