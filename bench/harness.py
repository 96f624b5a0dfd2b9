"""The one harness every benchmark uses (bench/README.md, "The harness"): the machine's facts
and a warning when it is not quiet, a clock of wall and process CPU seconds, repeats with their
median, ratio rows, and the options every benchmark shares (``--threads``, ``--json PATH``).

    from bench import harness

    ap = harness.parser(__doc__)           # --threads and --json, then the bench's own options
    args = ap.parse_args(argv)
    run = harness.start(args)              # the machine's facts (a warning when it is busy)
    with harness.Timer() as t:             # wall seconds and this process's CPU seconds
        work()
    run.ratio("study", t.wall, floor)      # prints "study: 12.3 s, 1.42x the floor"
    run.done()                             # the load after; --json PATH writes every row

Nothing here imports torch: a benchmark that runs no model in its own process (the server's)
pays nothing for it, and one that must set the OpenMP environment before torch loads still can.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"  # the data the benchmarks read, beside the checkout
SEMEVAL = SHARED / "semeval2014" / "Restaurants_Train.xml"
EWT_DEV = SHARED / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
QUIET = 0.5  # a quiet machine: its 1-min load average at most this share of its cores


# -- the machine ------------------------------------------------------------------------------

def cores() -> int:
    return os.cpu_count() or 1


def load() -> float:
    """The 1-min load average."""
    return os.getloadavg()[0]


def facts() -> dict:
    """The date, the cores, the load averages (1, 5, 15 min) and torch's threads (None where
    this process has not imported torch)."""
    torch = sys.modules.get("torch")
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cores": cores(),
            "load": [round(x, 2) for x in os.getloadavg()],
            "torch_threads": torch.get_num_threads() if torch is not None else None}


def facts_line(f: dict) -> str:
    threads = "" if f["torch_threads"] is None else f"; torch threads {f['torch_threads']}"
    one, five, fifteen = f["load"]
    return (f"machine: {f['cores']} cores, load average {one:.2f} {five:.2f} {fifteen:.2f} "
            f"(1/5/15 min){threads}; {f['date']}")


def busy_warning(f: dict) -> str | None:
    """A line saying the machine is not quiet (1-min load above :data:`QUIET` x cores), else
    None."""
    if f["load"][0] <= QUIET * f["cores"]:
        return None
    return (f"WARNING: the machine is not quiet (1-min load {f['load'][0]:.1f} > {QUIET:g} x "
            f"{f['cores']} cores): its times are inflated; read the ratios measured side by "
            "side in this run, and measure on a quiet machine for the numbers")


# -- the clock ----------------------------------------------------------------------------------

def cuda_sync() -> None:
    """Wait for the GPU's queued work (nothing where torch is not loaded or has no CUDA)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()


class Timer:
    """Wall seconds (``wall``, perf_counter) and this process's CPU seconds (``cpu``,
    process_time: every thread's user + system time, child processes not counted) of a
    ``with`` block; ``cuda=True`` waits for the GPU's queued work at both ends. Formats as
    ``"  1.23 s wall,   2.34 s CPU"`` (``f"{t:.1f}"`` for another precision)."""

    def __init__(self, cuda: bool = False):
        self.cuda = cuda
        self.wall = self.cpu = 0.0

    def __enter__(self) -> Timer:
        if self.cuda:
            cuda_sync()
        self._t, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> bool:
        if self.cuda:
            cuda_sync()
        self.wall = time.perf_counter() - self._t
        self.cpu = time.process_time() - self._c
        return False

    def __format__(self, spec: str) -> str:
        spec = spec or ".2f"
        return f"{self.wall:7{spec}} s wall, {self.cpu:7{spec}} s CPU"

    def __str__(self) -> str:
        return format(self)


def timed(fn: Callable, cuda: bool = False):
    """(fn(), its :class:`Timer`)."""
    with Timer(cuda) as t:
        out = fn()
    return out, t


@dataclass
class Repeats:
    """The wall and CPU seconds of each repeat, and the last repeat's result."""

    walls: list[float]
    cpus: list[float]
    last: object = None

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    @property
    def best(self) -> float:
        return min(self.walls)

    @property
    def worst(self) -> float:
        return max(self.walls)


def repeat(fn: Callable, times: int, warmup: int = 0, cuda: bool = False) -> Repeats:
    """``fn()`` ``warmup`` times untimed, then ``times`` times timed one by one."""
    for _ in range(warmup):
        fn()
    out = Repeats([], [])
    for _ in range(max(1, times)):
        out.last, t = timed(fn, cuda)
        out.walls.append(t.wall)
        out.cpus.append(t.cpu)
    return out


def percentile(xs, q: float) -> float:
    """The ``q``-th percentile of ``xs`` (numpy's linear interpolation); NaN when empty."""
    xs = sorted(float(x) for x in xs)
    if not xs:
        return math.nan
    k = (len(xs) - 1) * q / 100
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def ratio_line(what: str, seconds: float, floor: float, floor_name: str = "the floor",
               digits: int = 1) -> str:
    """``"what: 12.3 s, 1.42x the floor"``."""
    ratio = seconds / floor if floor else math.inf
    return f"{what}: {seconds:.{digits}f} s, {ratio:.2f}x {floor_name}"


# -- the options and the run ------------------------------------------------------------------

def _main_name() -> str:
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return spec.name if spec is not None else Path(sys.argv[0]).stem


def options(threads: int | None = None, torch: bool = True) -> argparse.ArgumentParser:
    """The options every benchmark shares, as an argparse parent: ``--threads`` (torch's
    threads in this process; left out where ``torch`` is False: a benchmark whose work runs in
    a server) and ``--json PATH``."""
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("harness (bench/harness.py)")
    if torch:
        own = threads if threads else "torch's own"
        g.add_argument("--threads", type=int, default=threads,
                       help=f"torch threads in this process (default: {own})")
    g.add_argument("--json", metavar="PATH", default=None,
                   help="also write the rows measured and the machine's facts here as JSON")
    return p


def parser(doc: str | None, threads: int | None = None, torch: bool = True,
           **kwargs) -> argparse.ArgumentParser:
    """An ArgumentParser with :func:`options`, its description the first paragraph of
    ``doc``, its name the command that runs it (``python -m bench.studies.noop``)."""
    kwargs.setdefault("description", (doc or "").strip().split("\n\n")[0])
    return argparse.ArgumentParser(prog=f"python -m {_main_name()}",
                                   parents=[options(threads, torch)], **kwargs)


class Run:
    """One benchmark run: the machine's facts at its start, its rows, its JSON."""

    def __init__(self, args, name: str | None = None):
        self.name = name or _main_name()
        self.json = getattr(args, "json", None)
        self.facts = facts()
        self.facts_after: dict | None = None
        self.rows: list[dict] = []

    def row(self, what: str, **numbers) -> dict:
        """Keep a row (for ``--json``) and return it."""
        self.rows.append({"what": what, **numbers})
        return self.rows[-1]

    def ratio(self, what: str, seconds: float, floor: float, floor_name: str = "the floor",
              digits: int = 1, **numbers) -> float:
        """Print :func:`ratio_line`, keep the row; the ratio."""
        print(ratio_line(what, seconds, floor, floor_name, digits), flush=True)
        ratio = seconds / floor if floor else math.inf
        self.row(what, seconds=seconds, baseline=floor_name, baseline_seconds=floor,
                 ratio=ratio, **numbers)
        return ratio

    def write(self, **extra) -> None:
        """Write the JSON to ``--json`` now (a long benchmark calls it after each row, so that
        a run stopped early keeps what it measured); nothing without ``--json``."""
        if not self.json:
            return
        out = {"bench": self.name, "facts": self.facts, "facts_after": self.facts_after,
               "rows": self.rows, **extra}
        Path(self.json).write_text(json.dumps(out, indent=1, default=str), "utf-8")

    def done(self, **extra) -> None:
        """Print the load at the end and write the JSON."""
        self.facts_after = facts()
        load_end = self.facts_after["load"][0]
        print(f"load average at the end: {load_end:.2f} (at the start "
              f"{self.facts['load'][0]:.2f}, {self.facts['cores']} cores)", flush=True)
        self.write(**extra)


def start(args, name: str | None = None) -> Run:
    """Set torch's threads from ``--threads`` (where given), print the machine's facts and,
    when it is busy, a warning; the :class:`Run`. A benchmark with ``--threads`` (one that runs
    models in its own process) has torch imported here, so that the facts say its threads."""
    if hasattr(args, "threads"):
        import torch

        if args.threads:
            torch.set_num_threads(args.threads)
    run = Run(args, name)
    print(facts_line(run.facts), flush=True)
    warning = busy_warning(run.facts)
    if warning:
        print(warning, flush=True)
    return run
