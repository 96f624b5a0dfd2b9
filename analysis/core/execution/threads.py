"""How heavy work shares the machine's cores, decided here once for every placement (issue 48;
docs/METHODS.md section 20, "Heavy work on a shared machine").

On a machine whose cores are busy with other work (a hosted demo's other visitors, other
programs), torch's OpenMP threads cost far more CPU than they do on an idle machine: a thread
that reaches a barrier while its partner is descheduled spins (GNU OpenMP's default) instead of
sleeping. Measured on 2 cores at load 7-9 (the embedded model's forward, 30 batches of 16):
1 thread 3.7 CPU-s and 11.5 s wall; 2 threads 21.5 CPU-s and 63.5 s wall; 2 threads with
passive waits 3.4 CPU-s and 13.1 s. So:

- :func:`passive_waits`: every process that runs heavy work sets ``OMP_WAIT_POLICY=PASSIVE``
  before torch loads its OpenMP runtime (the server's app.py, the CLI, each child process:
  :func:`child_env`), unless the environment already chose a policy;
- :func:`job_threads`: a job's torch threads are the cores the other work leaves free (the load
  average less the job's own threads), at least 1 and at most the cores this process may use
  (and ``$OMP_NUM_THREADS`` when set); :func:`following_load` re-checks the load as the job
  reports progress, so a job that started on an idle machine drops to one thread when the
  machine fills, and back;
- :func:`lower_priority`: a job's thread (or child process) runs at a niceness below the
  server's (a visitor's job 10, a background job 19), so light requests get the cores first.

:func:`heavy_work` does all three for the thread that runs a job (the queue's worker thread,
:mod:`analysis.core.execution.worker`; a child process, :mod:`analysis.core.execution.child`);
a program that builds a model outside the queue (the example's build) calls
:func:`job_threads` for its thread count. The page's estimates read the same load average
(:mod:`analysis.core.execution.estimates`).

torch's thread count is per thread of the process (each OS thread's OpenMP setting; a thread
started later takes the last count set), so one job's choice does not change another job's
threads that are already running.

Also here: :func:`side_by_side`, independent pieces of one study on threads of this process,
their results taken in order (the probes' fits: analysis.representations.probes and
analysis.syntax.probes).
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator

WAIT_ENV = "OMP_WAIT_POLICY"
PASSIVE = "PASSIVE"
REVISIT_S = 10.0  # how often a running job re-checks the load (at its progress reports)


# ---------------------------------------------------------------- the machine

def cores() -> int:
    """The CPU cores this process may run on (its affinity; ``os.cpu_count()`` elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def machine_load() -> float:
    """The one-minute load average (runnable threads, every process counted; 0 where the OS
    has none)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return 0.0


def thread_cap() -> int | None:
    """``$OMP_NUM_THREADS`` when set to a positive number (a person's explicit choice)."""
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(env) if env.isdigit() and int(env) > 0 else None


def job_threads(load: float | None = None, own: int = 0, n_cores: int | None = None) -> int:
    """The torch threads of one heavy job: the cores not busy with other work (``load``: the
    load average, default :func:`machine_load`, of which ``own`` runnable threads are the job's
    own), rounded, at least 1 and at most the cores (and :func:`thread_cap`). Idle 2-core
    machine: 2; one other busy thread or more: 1."""
    n = int(n_cores or cores())
    load = machine_load() if load is None else float(load)
    other = max(0.0, load - max(0, int(own)))
    free = int(n - other + 0.5)
    cap = thread_cap()
    return max(1, min(n, free, cap if cap is not None else n))


# ---------------------------------------------------------------- OpenMP waiting

def torch_loaded() -> bool:
    """Whether torch (with its OpenMP runtime) is loaded in this process already: its wait
    policy is then fixed for the process's life."""
    return "torch" in sys.modules


def passive_waits(env: dict | None = None) -> bool:
    """``OMP_WAIT_POLICY=PASSIVE`` in ``env`` (default: this process's environment, which
    torch's OpenMP runtime reads once, when torch is imported) unless a policy is set there
    already. True when the policy is passive for the process (or the ``env`` given)."""
    target = os.environ if env is None else env
    target.setdefault(WAIT_ENV, PASSIVE)
    if env is None and torch_loaded():  # too late for this process; its children still get it
        return False
    return str(target.get(WAIT_ENV, "")).upper() == PASSIVE


def child_env() -> dict:
    """The environment of a child process that runs heavy work: this one's, with passive
    OpenMP waits (unless a policy is set)."""
    env = dict(os.environ)
    passive_waits(env)
    return env


# ---------------------------------------------------------------- a job's thread

def lower_priority(nice: int | None, process: bool = False) -> bool:
    """Raise the calling thread's niceness to ``nice`` (Linux: only this thread, and the threads
    it starts later; ``process``: the whole process). False where the OS does not allow it."""
    if not nice:
        return False
    try:
        who = 0 if process else threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, who) < nice:
            os.setpriority(os.PRIO_PROCESS, who, int(nice))
        return True
    except (AttributeError, OSError):
        return False


def set_threads(n: int) -> int | None:
    """Torch's thread count of the calling thread set to ``n`` (when torch is loaded: a job
    that has not imported it yet picks the count up at its first :func:`following_load`
    check); the count before, or None."""
    if not torch_loaded():
        return None
    torch = sys.modules["torch"]
    before = int(torch.get_num_threads())
    if before != n:
        torch.set_num_threads(int(n))
    return before


class LoadFollower:
    """The calling thread's torch threads kept at :func:`job_threads` as the load changes:
    :meth:`check` (cheap; acts at most every ``every`` seconds) from the job's own thread."""

    def __init__(self, every: float = REVISIT_S, load: Callable[[], float] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.every, self.clock = float(every), clock
        self.load = load or (lambda: machine_load())  # looked up when called (tests plant one)
        self.thread = threading.get_ident()
        self.threads: int | None = None  # what it set last
        self.last: float | None = None
        self.saved: int | None = None

    def check(self, force: bool = False) -> int | None:
        """Re-choose the threads when due (only in the thread that made the follower)."""
        if threading.get_ident() != self.thread:
            return self.threads
        now = self.clock()
        if not force and self.last is not None and now - self.last < self.every:
            return self.threads
        if not torch_loaded():
            return self.threads
        self.last = now
        n = job_threads(self.load(), own=self.threads or 0)
        before = set_threads(n)
        if self.saved is None:
            self.saved = before
        self.threads = n
        return n

    def restore(self) -> None:
        if self.saved is not None and threading.get_ident() == self.thread:
            set_threads(self.saved)


def following_load(progress: Callable, follower: LoadFollower) -> Callable:
    """``progress`` that first lets ``follower`` re-check the load (whatever it is called
    with)."""
    def step(*args, **kwargs):
        follower.check()
        return progress(*args, **kwargs)
    return step


@contextlib.contextmanager
def heavy_work(nice: int | None, process: bool = False, every: float = REVISIT_S,
               load_torch: bool = False) -> Iterator[LoadFollower]:
    """The calling thread (``process``: the whole process) set up for one heavy job: its
    niceness ``nice``, its torch threads by the load (re-checked through
    :func:`following_load`), restored when the job ends. ``load_torch``: import torch now (a
    program whose work is about to: the CLI), so that the threads are set from the start.
    Yields the :class:`LoadFollower`."""
    lower_priority(nice, process=process)
    if load_torch:
        # lazy: imported when used: torch (heavy), by a program about to run a model anyway
        import torch  # noqa: F401
    follower = LoadFollower(every)
    follower.check(force=True)
    try:
        yield follower
    finally:
        follower.restore()


# ---------------------------------------------------------------- pieces side by side

@contextlib.contextmanager
def side_by_side(fn: Callable, tasks: Iterable, workers: int) -> Iterator[Iterator]:
    """``fn`` over ``tasks`` on ``workers`` threads: yields the results in the tasks' order.
    Each task must be independent of the others (and deterministic, for the numbers to be those
    of one at a time). At most ``2 * workers`` tasks run or wait ahead of the result the caller
    takes next (every worker busy while the caller keeps up; ``pool.map`` submitted them all, so
    a caller starved on a loaded machine found every task run before it could stop them). When
    the block ends early (the caller stopped: its progress raised), the tasks not started are
    dropped and those running are waited for: at most ``2 * workers`` past the last result
    taken have run."""
    workers = max(1, int(workers))
    pool = ThreadPoolExecutor(max_workers=workers)

    def ahead() -> Iterator:
        todo = iter(tasks)
        waiting: collections.deque = collections.deque()

        def fill() -> None:
            while len(waiting) < 2 * workers:
                task = next(todo, _END)
                if task is _END:
                    return
                waiting.append(pool.submit(fn, task))

        fill()
        while waiting:
            result = waiting.popleft().result()
            yield result
            fill()  # the caller came back for the next: one more may start

    try:
        yield ahead()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_END = object()
