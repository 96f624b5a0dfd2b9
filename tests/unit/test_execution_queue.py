"""analysis.core.execution.queue and .worker without Streamlit or threads of their own where the
order can be told without them: FIFO per lane, the per-visitor cap, the exclusive training
group, stop and cancel, the wait estimated from measured rates (a planted clock), and jobs
taking turns: a running job yields its slot at a step after a quantum when its lane has a
waiting job, at most one paused per lane, never a training process or a cluster job."""

from __future__ import annotations

import threading

import pytest

from analysis.core.execution.estimates import outlook_words
from analysis.core.execution.queue import (BACKGROUND, CORPUS, SHORT, TRAINING, JobCancelled,
                                      JobLimit, JobQueue)
from analysis.core.execution.worker import BackgroundJob, Worker

WAIT = 10.0


def test_each_lane_is_first_in_first_out_and_lanes_do_not_wait_for_each_other():
    q = JobQueue(slots=1)
    a, b, c = (q.join(n, n, lane=CORPUS) for n in "abc")
    short = q.join("one input", "s", lane=SHORT)
    assert q.wait_turn(a) is None            # the corpus slot
    assert q.wait_turn(c) == 2               # a runs, b waits before it
    assert q.wait_turn(b) == 1
    assert q.wait_turn(short) is None        # its own lane: behind no corpus job
    q.leave(a)
    assert q.wait_turn(c) == 1               # b is still first: c does not pass it
    assert q.wait_turn(b) is None
    q.leave(b)
    assert q.wait_turn(c) is None
    assert q.state() == {"running": ["one input", "c"], "waiting": 0}
    for t in (short, c):
        q.leave(t)
    assert q.state() == {"running": [], "waiting": 0}


def test_a_visitor_holds_at_most_the_cap_in_all_lanes_and_a_stopped_job_no_longer_counts():
    q = JobQueue(slots=2)
    held = q.join("Attribution", "a", ("session:1",), limit=1, lane=SHORT)
    with pytest.raises(JobLimit) as err:
        q.join("Corpus statistics", "b", ("session:1", "address:1.2.3.4"), limit=1)
    assert str(err.value) == (
        "You already have 1 job(s) waiting or running; this server runs at most 1 per "
        "visitor at a time. Corpus statistics can start when yours has finished (other tabs "
        "count too).")
    other = q.join("Corpus statistics", "c", ("session:2",), limit=1)  # another visitor
    assert q.wait_turn(held) is None
    q.stop(held)  # its run was restarted: it keeps the slot until its next step...
    again = q.join("Attribution", "d", ("session:1",), limit=1, lane=SHORT)  # ...not counted
    assert q.wait_turn(again) == 1  # and the rerun waits for the stopped one's slot
    q.leave(held)
    assert q.wait_turn(again) is None
    for t in (other, again):
        q.leave(t)


def test_one_training_process_at_a_time_across_lanes_and_the_next_job_passes_it():
    q = JobQueue(slots=2)
    build = q.join("Example build", "e", lane=BACKGROUND, exclusive=TRAINING)
    assert q.wait_turn(build) is None
    tune = q.join("Fine-tuning", "f", exclusive=TRAINING)
    stats = q.join("Corpus statistics", "s")
    assert q.wait_turn(tune) == 1            # held up by the build (another lane)
    assert q.wait_turn(stats) is None        # a corpus slot is free: it passes the fine-tune
    assert q.wait_turn(tune) == 2            # the build, and the corpus job in its lane
    q.leave(build)
    assert q.wait_turn(tune) is None         # the second corpus slot
    # and while the fine-tune runs, a second build waits for it
    build2 = q.join("Example build", "e2", lane=BACKGROUND, exclusive=TRAINING)
    assert q.wait_turn(build2) == 1
    for t in (tune, stats):
        q.leave(t)
    assert q.wait_turn(build2) is None
    q.leave(build2)


def test_a_cancelled_worker_stops_at_its_next_step_and_frees_its_slot():
    q = JobQueue(slots=1)
    ticket = q.join("Corpus statistics", "x", ("session:1",), limit=1)
    assert q.wait_turn(ticket) is None
    stepped, release = threading.Event(), threading.Event()
    freed = []

    def work(progress):
        progress(0.25, "a quarter")
        stepped.set()
        release.wait(WAIT)
        progress(0.5, "half")  # raises JobCancelled: the visitor left
        return "never"

    job = Worker(work, q, ticket, nice=0, free=lambda: freed.append(1))
    job.start()
    assert stepped.wait(WAIT) and (job.fraction, job.text) == (0.25, "a quarter")
    job.stop()
    assert q.state()["running"] == ["Corpus statistics"]  # the slot is kept till the step
    release.set()
    assert job.done.wait(WAIT)
    assert isinstance(job.error, JobCancelled) and job.result is None and freed == [1]
    assert q.state() == {"running": [], "waiting": 0}
    assert q.measured("Corpus statistics") is None  # a cancelled job is no measurement


def test_a_background_job_takes_the_background_lane_and_reports_its_progress():
    q = JobQueue(slots=1)
    visitor = q.join("Corpus statistics", "v")
    assert q.wait_turn(visitor) is None  # the visitors' only slot is taken
    told = []
    job = BackgroundJob("Build", lambda progress: progress(1.0, "built") or 7, "b", q, nice=0,
                        on_progress=lambda f, t: told.append((f, t)), free=lambda: None)
    job.start()
    assert job.done.wait(WAIT) and job.error is None and job.result == 7
    assert told == [(1.0, "built")]
    assert q.state() == {"running": ["Corpus statistics"], "waiting": 0}
    q.leave(visitor)


def test_the_wait_is_estimated_from_the_rates_measured_here():
    now = [0.0]
    # no turns taken (an endless quantum): the wait of first in, first out
    q = JobQueue(slots=1, clock=lambda: now[0], quantum_s=float("inf"))
    first = q.join("a", "a", kind="No-op statistics", size=10, unit="examples")
    assert q.wait_turn(first) is None
    now[0] = 20.0
    q.leave(first, finished=True)  # 20 s for 10 examples: 2 s an example
    assert q.measured("No-op statistics") == 2.0
    running = q.join("b", "b", kind="No-op statistics", size=30, unit="examples")
    assert q.wait_turn(running) is None  # started at 20 s
    waiting = q.join("c", "c", kind="Fine-tuning drift", size=5, unit="examples")
    mine = q.join("d", "d", kind="No-op statistics", size=1, unit="examples")
    assert q.wait_turn(mine) == 2
    out = q.outlook(mine)
    assert out.wait_s is None and out.unmeasured == ("Fine-tuning drift",)
    assert outlook_words(out) == (
        "Waiting behind: No-op statistics over 30 examples (running); Fine-tuning drift over "
        "5 examples (waiting). No estimate yet: first job of its kind on this server "
        "(Fine-tuning drift).")
    q.leave(waiting)
    assert q.outlook(mine).wait_s == 60.0  # nothing done yet: 30 examples x 2 s
    now[0] = 35.0
    running.fraction = 0.25  # a quarter in 15 s: its own speed, 45 s left
    assert q.outlook(mine).wait_s == 45.0
    for t in (running, mine):
        q.leave(t)


# -- taking turns (issue 50: no job holds its lane for more than a quantum and a step) --------


def _turns_queue(**kw):
    now = [0.0]
    return JobQueue(slots=1, clock=lambda: now[0], quantum_s=5.0, **kw), now


def test_a_running_job_yields_its_slot_after_a_quantum_and_they_take_turns():
    q, now = _turns_queue()
    long = q.join("Search index", "long", kind="Search index", size=300, unit="sentences")
    assert q.wait_turn(long) is None
    first = q.join("Corpus statistics", "first", kind="No-op statistics")
    now[0] = 4.9
    assert not q.checkpoint(long)            # not a quantum yet: it goes on
    now[0] = 5.0
    assert q.outlook(first).wait_s == 0.0    # its turn is due at the long job's next step
    assert q.checkpoint(long)                # a quantum held and a job waits: it yields
    assert (long.running, long.paused) == (False, True)
    assert q.wait_turn(long) == 1            # paused at the end of the lane, behind first
    assert q.wait_turn(first) is None        # the first visitor's job runs now
    now[0] = 7.0
    assert q.outlook(long).wait_s == 3.0     # the running job yields to it within 3 s
    now[0] = 10.0
    assert q.checkpoint(first)               # a quantum later first yields to the paused one
    assert q.wait_turn(long) is None and not long.paused
    now[0] = 12.0
    q.leave(long, finished=True)             # 5 s + 2 s held: the paused 5 s not counted
    assert q.measured("Search index") == pytest.approx(7.0 / 300)
    assert q.wait_turn(first) is None
    q.leave(first)


def test_alone_in_its_lane_a_job_never_pauses():
    q, now = _turns_queue()
    long = q.join("a", "a")
    assert q.wait_turn(long) is None
    other_lane = q.join("one input", "s", lane=SHORT)
    now[0] = 100.0
    assert not q.checkpoint(long)            # the waiting ticket is in another lane
    for t in (long, other_lane):
        q.leave(t)


def test_a_lane_keeps_at_most_one_paused_job_besides_its_running_one():
    q, now = _turns_queue()
    a = q.join("a", "a")
    assert q.wait_turn(a) is None
    b = q.join("b", "b")
    now[0] = 5.0
    assert q.checkpoint(a) and q.wait_turn(b) is None          # a paused, b runs
    c = q.join("c", "c")                                         # a newcomer
    now[0] = 10.0
    assert q.checkpoint(b) and q.wait_turn(a) is None           # b yields to a (paused)
    now[0] = 20.0
    assert not q.checkpoint(a)   # c is next, but b is paused already: a keeps its slot
    assert q.wait_turn(c) == 1 and q.outlook(c).wait_s is None  # behind a (rate unknown)
    q.leave(a, finished=True)
    assert q.wait_turn(c) is None                               # then c, b still paused
    now[0] = 25.0
    assert q.checkpoint(c) and q.wait_turn(b) is None           # and c yields to b
    for t in (b, c):
        q.leave(t)
    assert q.state() == {"running": [], "waiting": 0}


def test_a_training_process_a_cluster_job_and_a_stopped_one_never_pause():
    q, now = _turns_queue(cluster_slots=1)
    tune = q.join("Fine-tuning", "t", exclusive=TRAINING)
    ray = q.join("Drift", "r", cluster=True)
    assert q.wait_turn(tune) is None and q.wait_turn(ray) is None
    waiting = [q.join("x", "x"), q.join("y", "y", cluster=True)]
    now[0] = 60.0
    assert not q.checkpoint(tune) and not q.checkpoint(ray)
    q.stop(tune)
    assert not q.checkpoint(tune)
    for t in [tune, ray] + waiting:
        q.leave(t)


def test_a_worker_pauses_at_its_step_while_a_newcomer_runs_and_resumes():
    q = JobQueue(slots=1, quantum_s=0.05)
    long_ticket = q.join("Long", "long")
    assert q.wait_turn(long_ticket) is None
    short_done, texts = threading.Event(), []

    def long_work(progress):
        for k in range(2000):
            progress(k / 2000, f"step {k}")
            if short_done.is_set():
                return "long done"
            short_done.wait(0.005)
        return "long never saw the short job"

    long_job = Worker(long_work, q, long_ticket, nice=0, free=lambda: None)
    long_job.start()
    short_ticket = q.join("Short", "short")
    while q.wait_turn(short_ticket, 0.05) is not None:  # the visitor's thread waits its turn
        texts.append(long_job.text)
    assert not long_job.done.is_set()                    # the long job is paused, not over
    texts.append(long_job.text)
    short_job = Worker(lambda progress: progress(1.0, "done") or "short", q, short_ticket,
                       nice=0, free=lambda: None)
    short_job.start()
    assert short_job.done.wait(WAIT) and short_job.result == "short"
    short_done.set()
    assert long_job.done.wait(WAIT) and long_job.result == "long done"
    assert "Paused while another job of this queue takes its turn" in texts[-1]
    assert q.state() == {"running": [], "waiting": 0}


def test_a_starting_worker_keeps_its_slot_while_another_job_checks_in(monkeypatch):
    """Between a worker's start and its thread's first step another waiting job checks in (its
    wait_turn drops the tickets of dead owners): the running ticket's owner must be alive then,
    or its slot goes to the other job and two jobs run in a one-slot lane (the queue test in
    Chromium saw a paused job resume 1 ms after the job it paused for had started)."""
    q = JobQueue(slots=1)
    mine = q.join("Mine", "mine")
    assert q.wait_turn(mine) is None
    other = q.join("Other", "other")
    seen, release = [], threading.Event()
    start = threading.Thread.start

    def checked_start(thread):
        if thread.name.startswith("job-mine"):
            seen.append(q.wait_turn(other))  # the other visitor's poll, in that window
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", checked_start)
    job = Worker(lambda progress: release.wait(WAIT) and "done", q, mine, nice=0,
                 free=lambda: None)
    job.start()
    assert seen == [1] and q.wait_turn(other) == 1  # still one job ahead: mine runs
    assert q.state() == {"running": ["Mine"], "waiting": 1}
    release.set()
    assert job.done.wait(WAIT) and job.result == "done"
    assert q.wait_turn(other, WAIT) is None


def test_a_paused_worker_whose_visitor_left_ends_without_its_turn():
    q = JobQueue(slots=1, quantum_s=0.0)
    ticket = q.join("Long", "long")
    assert q.wait_turn(ticket) is None
    blocker = q.join("Other", "other")  # waiting: the long job pauses at its first step

    def work(progress):
        progress(0.1, "a step")
        return "resumed"

    job = Worker(work, q, ticket, nice=0, free=lambda: None)
    job.start()
    assert q.wait_turn(blocker, WAIT) is None  # the worker paused and gave its slot
    job.stop()
    assert job.done.wait(WAIT) and isinstance(job.error, JobCancelled)
    q.leave(blocker)
    assert q.state() == {"running": [], "waiting": 0}
