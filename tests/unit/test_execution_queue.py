"""analysis.core.execution.queue and .worker without Streamlit or threads of their own where the
order can be told without them: FIFO per lane, the per-visitor cap, the exclusive training
group, stop and cancel, and the wait estimated from measured rates (a planted clock)."""

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
    q = JobQueue(slots=1, clock=lambda: now[0])
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
