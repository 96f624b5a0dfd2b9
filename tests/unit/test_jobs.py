"""The server-wide job queue (ui/common/jobs.py): FIFO order and positions with real threads, a slot
freed by a failing or abandoned job, expiry of dead waiters, the job's thread priority, and a
page that runs a job (AppTest)."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from analysis.core.execution import worker
from ui.common import jobs
from ui.common.jobs import JobCancelled, JobQueue, run_job

WAIT = 10.0  # generous bound for events in tests (never asserted as a duration)


def _until(predicate, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


class _Waiter(threading.Thread):
    """Joins ``queue`` on its own thread, waits for its turn, then holds the slot until
    ``release`` is set."""

    def __init__(self, queue: JobQueue, name: str, log: list):
        super().__init__(daemon=True)
        self.queue, self.label, self.log = queue, name, log
        self.joined, self.started_job, self.release = (threading.Event(), threading.Event(),
                                                        threading.Event())
        self.ticket = None

    def run(self):
        self.ticket = self.queue.join(self.label, key=self.label)
        self.joined.set()
        while self.queue.wait_turn(self.ticket, 0.05) is not None:
            pass
        self.log.append(self.label)
        self.started_job.set()
        self.release.wait(WAIT)
        self.queue.leave(self.ticket)


def test_fifo_order_and_positions():
    q, log = JobQueue(slots=1), []
    a, b, c = (_Waiter(q, n, log) for n in "abc")
    a.start()
    assert a.started_job.wait(WAIT)
    b.start()
    assert b.joined.wait(WAIT)
    c.start()
    assert c.joined.wait(WAIT)
    # positions: the running job is ahead of both; b is ahead of c
    assert q.wait_turn(b.ticket) == 1 and q.wait_turn(c.ticket) == 2
    assert q.state() == {"running": ["a"], "waiting": 2}
    # b waits while a runs
    assert not b.started_job.wait(0.3) and log == ["a"]
    a.release.set()
    assert b.started_job.wait(WAIT) and not c.started_job.is_set()
    assert q.wait_turn(c.ticket) == 1
    b.release.set()
    assert c.started_job.wait(WAIT)
    c.release.set()
    for t in (a, b, c):
        t.join(WAIT)
    assert log == ["a", "b", "c"]
    assert q.state() == {"running": [], "waiting": 0}


def test_two_slots_run_two_jobs_at_once():
    q, log = JobQueue(slots=2), []
    a, b, c = (_Waiter(q, n, log) for n in "abc")
    a.start()
    assert a.started_job.wait(WAIT)
    b.start()
    assert b.started_job.wait(WAIT)
    c.start()
    assert c.joined.wait(WAIT)
    assert q.wait_turn(c.ticket) == 2 and not c.started_job.wait(0.2)
    b.release.set()
    assert c.started_job.wait(WAIT)
    a.release.set(), c.release.set()
    for t in (a, b, c):
        t.join(WAIT)
    assert sorted(log[:2]) == ["a", "b"] and log[2] == "c"


def test_abandoned_tickets_expire():
    q = JobQueue(slots=1, expire_s=0.3)
    # a thread that took a ticket and died without giving it back
    dead = threading.Thread(target=lambda: q.join("dead", key="dead"))
    dead.start(), dead.join()
    assert q.state()["waiting"] == 0
    # a live waiter that stopped checking in: expires after expire_s
    stale = q.join("stale", key="stale")
    assert q.wait_turn(stale) is None  # it got the slot...
    q.leave(stale)
    holder = _Waiter(q, "holder", [])
    holder.start()
    assert holder.started_job.wait(WAIT)
    stuck = q.join("stuck", key="stuck")  # main thread stays alive but never checks in
    assert q.state()["waiting"] == 1
    assert _until(lambda: q.state()["waiting"] == 0)
    # the stuck visitor comes back: it is queued again, at the end
    assert q.wait_turn(stuck) == 1
    q.leave(stuck)
    holder.release.set(), holder.join(WAIT)
    # a running ticket whose thread died frees its slot
    runner = threading.Thread(target=lambda: q.wait_turn(q.join("runner", key="r")))
    runner.start(), runner.join()
    assert q.state() == {"running": [], "waiting": 0}


def test_run_job_second_job_waits_until_first_ends():
    q = JobQueue(slots=1)
    first_running, first_release = threading.Event(), threading.Event()
    second_called = threading.Event()
    out = {}

    def first(progress):
        first_running.set()
        assert first_release.wait(WAIT)
        progress(1.0, "done")
        return "first"

    def second(progress):
        second_called.set()
        return "second"

    t1 = threading.Thread(target=lambda: out.setdefault("a", run_job("A", first, key="a",
                                                                     queue=q)))
    t1.start()
    assert first_running.wait(WAIT)
    t2 = threading.Thread(target=lambda: out.setdefault("b", run_job("B", second, key="b",
                                                                     queue=q)))
    t2.start()
    assert _until(lambda: q.state()["waiting"] == 1)
    assert not second_called.wait(0.3)
    first_release.set()
    t1.join(WAIT), t2.join(WAIT)
    assert out == {"a": "first", "b": "second"}
    assert q.state() == {"running": [], "waiting": 0}


def test_a_job_that_raises_frees_its_slot():
    q = JobQueue(slots=1)

    def boom(progress):
        progress(0.5, "half")
        raise ValueError("bad corpus")

    with pytest.raises(ValueError, match="bad corpus"):
        run_job("boom", boom, key="boom", queue=q)
    assert q.state() == {"running": [], "waiting": 0}
    assert run_job("next", lambda progress: 42, key="next", queue=q) == 42


def test_memory_goes_back_after_every_job(monkeypatch):
    """Issue 34 item 3: after a job (a failed one too) its freed batches are handed back to
    the system (analysis.core.batching.release_memory: gc, then glibc's malloc_trim; the
    server's workers reach it through ui.server.housekeeping.release_after_job, issue 50)."""
    import ctypes

    from analysis.core.batching import release_memory
    from ui.server import housekeeping

    calls = []
    monkeypatch.setattr(worker, "release_memory", lambda: calls.append(1))
    monkeypatch.setattr(housekeeping, "release_memory", lambda: calls.append(1))
    q = JobQueue(slots=1)
    assert run_job("ok", lambda progress: bytearray(64 << 20) and 7, key="ok", queue=q) == 7
    with pytest.raises(ValueError):
        run_job("bad", lambda progress: (_ for _ in ()).throw(ValueError("x")), key="bad",
                queue=q)
    assert _until(lambda: len(calls) == 2)
    trimmed = []
    real = ctypes.CDLL

    class Libc:
        def __init__(self, name):
            self.lib = real(name)

        def malloc_trim(self, pad):
            trimmed.append(pad)
            return self.lib.malloc_trim(pad)

    monkeypatch.setattr(ctypes, "CDLL", Libc)
    release_memory()
    assert trimmed == [0]


class _StopAfter:
    """A stand-in for ``streamlit`` in ui.common.jobs whose elements raise (as Streamlit does when
    the visitor left) once ``n`` messages were sent; records every message."""

    def __init__(self, n: int):
        self.n, self.sent = n, []

    def _send(self, kind, *args, **kw):
        self.sent.append((kind, args[:2], kw.get("text")))
        if len(self.sent) >= self.n:
            raise RuntimeError("visitor left")
        return self

    def empty(self):
        return self._send("empty")

    def info(self, *a, **kw):
        return self._send("info", *a, **kw)

    def progress(self, *a, **kw):
        return self._send("progress", *a, **kw)


def test_visitor_who_leaves_while_waiting_gives_the_ticket_back(monkeypatch):
    q = JobQueue(slots=1)
    holder = _Waiter(q, "holder", [])
    holder.start()
    assert holder.started_job.wait(WAIT)
    fake = _StopAfter(3)  # the placeholder, then two waiting messages
    monkeypatch.setattr(jobs, "st", fake)
    monkeypatch.setattr(jobs, "HEARTBEAT_S", 0.05)
    called = []
    with pytest.raises(RuntimeError, match="visitor left"):
        run_job("Corpus statistics", lambda p: called.append(1), key="x", queue=q)
    infos = [args[0] for kind, args, _ in fake.sent if kind == "info"]
    assert infos and all("waiting for 1 job(s) ahead of yours" in m for m in infos)
    assert called == [] and q.state() == {"running": ["holder"], "waiting": 0}
    holder.release.set(), holder.join(WAIT)


def test_visitor_who_leaves_while_running_stops_the_job(monkeypatch):
    q = JobQueue(slots=1)
    fake = _StopAfter(4)  # placeholder, its clearing, the bar, one update
    monkeypatch.setattr(jobs, "st", fake)
    monkeypatch.setattr(jobs, "HEARTBEAT_S", 0.05)
    steps, stopped = [], threading.Event()

    def long_job(progress):
        try:
            for k in range(10_000):
                progress(k / 10_000, f"step {k}")
                steps.append(k)
                time.sleep(0.01)
        except JobCancelled:
            stopped.set()
            raise
        return "finished"

    with pytest.raises(RuntimeError, match="visitor left"):
        run_job("long", long_job, key="long", queue=q)
    assert stopped.wait(WAIT)
    assert 0 < len(steps) < 10_000
    assert _until(lambda: q.state() == {"running": [], "waiting": 0})


def test_progress_is_drawn_and_positions_count_down(monkeypatch):
    q = JobQueue(slots=1)
    holder = _Waiter(q, "holder", [])
    holder.start()
    assert holder.started_job.wait(WAIT)
    fake = _StopAfter(10**9)
    monkeypatch.setattr(jobs, "st", fake)
    threading.Timer(0.5, holder.release.set).start()

    def job(progress):
        progress(0.25, "a quarter")
        time.sleep(0.5)
        progress(1.0, "all 8 examples")
        return "ok"

    assert run_job("Corpus statistics", job, key="p", queue=q) == "ok"
    kinds = [k for k, _, _ in fake.sent]
    assert kinds.index("info") < kinds.index("progress")
    bars = [(args[0], text) for kind, args, text in fake.sent if kind == "progress"]
    assert bars[0] == (0.0, "Corpus statistics")
    assert (0.25, "a quarter") in bars
    assert fake.sent[-1][0] == "empty"  # and the bar is taken away once the job is done


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_job_runs_at_lower_priority_and_the_caller_keeps_its_own():
    q = JobQueue(slots=1)
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = run_job("nice", lambda p: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()),
                   key="nice", queue=q)
    from ui.server.settings import settings

    assert seen == max(mine, settings().job_nice)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine


def test_page_runs_a_job_and_shows_its_result():
    from streamlit.testing.v1 import AppTest

    def page():
        import streamlit as st

        from ui.common.jobs import job_queue, run_job

        def job(progress):
            progress(0.5, "half way")
            return sum(range(101))

        value = run_job("Summing", job, key="sum")
        st.metric("Sum", value)
        st.caption(f"queue after: {job_queue().state()}")

    at = AppTest.from_function(page, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.metric[0].value == "5050"
    assert at.caption[0].value == "queue after: {'running': [], 'waiting': 0}"
    # the bar went with the work (issue 22: a finished bar stayed on the page)
    assert not at.get("progress")


def test_a_background_job_waits_its_turn_and_reports_progress():
    """The example build's path: queued behind a running background job (its own lane: a
    visitor's job does not hold it up, tests/test_jobs_lanes.py), it starts only once that
    slot is free, reports its progress, keeps its result and frees the slot; a failure is kept
    too."""
    q, log = JobQueue(slots=1), []
    holder = _Waiter(q, "visitor", log)
    holder.start()
    assert holder.started_job.wait(WAIT)
    first_release = threading.Event()
    first = jobs.start_background_job("First", lambda p: first_release.wait(WAIT), key="first",
                                      queue=q)
    assert _until(lambda: "First" in q.state()["running"])
    said = []

    def work(progress):
        log.append("background")
        progress(0.5, "half")
        return 42

    job = jobs.start_background_job("Build", work, key="build", queue=q,
                                    on_progress=lambda f, t: said.append((f, t)))
    assert _until(lambda: q.state()["waiting"] == 1)
    assert log == ["visitor"] and not job.done.is_set()
    first_release.set()
    assert job.done.wait(WAIT) and first.done.wait(WAIT)
    holder.release.set(), holder.join(WAIT)
    assert log == ["visitor", "background"] and said == [(0.5, "half")]
    assert (job.result, job.error, job.fraction, job.text) == (42, None, 0.5, "half")
    assert q.state() == {"running": [], "waiting": 0}

    def broken(progress):
        raise OSError("disk full")

    failed = jobs.start_background_job("Build", broken, key="build", queue=q)
    assert failed.done.wait(WAIT)
    assert isinstance(failed.error, OSError) and q.state() == {"running": [], "waiting": 0}
