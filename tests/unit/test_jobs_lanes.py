"""The queue's lanes and measured estimates (issue 35, "The first start blocks four pages";
analysis/core/execution/queue.py, analysis/core/execution/estimates.py, ui/common/jobs): a
background build
never holds a visitor's slot, one input's work never waits behind a corpus job, and a waiting
visitor
reads which jobs are ahead and a wait computed from the rates this server measured (planted
here on a fake clock), or that nothing was measured yet. No wall time is asserted."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from test_jobs import WAIT, _StopAfter, _until, _Waiter
from analysis.core.execution import estimates
from ui.common import jobs
from ui.common.errors import plain
from analysis.core.execution.queue import BACKGROUND, CORPUS, SHORT, TRAINING, JobQueue


class Clock:
    """A planted clock: time moves only when the test says."""

    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def _hold(q: JobQueue, lane: str = CORPUS, **about):
    """A running ticket of ``lane`` owned by the calling (test) thread."""
    ticket = q.join(about.pop("label", "holder"), "holder", lane=lane, **about)
    assert q.wait_turn(ticket) is None
    return ticket


def test_a_background_job_never_takes_a_visitors_slot():
    q, log = JobQueue(slots=1), []
    visitor = _Waiter(q, "visitor", log)  # a visitor's corpus job holds the only corpus slot
    visitor.start()
    assert visitor.started_job.wait(WAIT)
    release, said = threading.Event(), []

    def build(progress):
        log.append("build")
        progress(0.5, "half")
        assert release.wait(WAIT)
        return 42

    job = jobs.start_background_job("Build", build, key="build", queue=q,
                                    on_progress=lambda f, t: said.append((f, t)))
    assert _until(lambda: "build" in log)  # beside the visitor's job, not behind it
    assert q.state() == {"running": ["visitor", "Build"], "waiting": 0}
    # while the build runs, a visitor's new corpus job starts as soon as the visitor's slot is
    # free: the build is in no visitor's lane
    visitor.release.set(), visitor.join(WAIT)
    assert jobs.run_job("Corpus statistics", lambda p: "stats", key="s", queue=q) == "stats"
    # a second background job waits behind the first, in their own lane
    second = jobs.start_background_job("Importance", lambda p: log.append("second"),
                                       key="imp", queue=q)
    assert _until(lambda: q.state()["waiting"] == 1) and "second" not in log
    release.set()
    assert job.done.wait(WAIT) and second.done.wait(WAIT)
    assert log == ["visitor", "build", "second"] and said == [(0.5, "half")]
    assert (job.result, job.error) == (42, None)
    assert q.state() == {"running": [], "waiting": 0}


def test_a_short_shared_job_does_not_wait_behind_the_background_lane():
    """Search's index of a bundled corpus (a second's work, shared by every visitor) starts
    while the background lane's slot is held (the example's build, minutes on a fresh server),
    in the one-input lane; it waits only for that lane's one slot."""
    q, log = JobQueue(slots=1), []
    build = _hold(q, BACKGROUND, label="Building the example checkpoint")
    one_input = _hold(q, SHORT, label="Attribution of one text")
    index = jobs.start_background_job("Search index", lambda p: log.append("index") or 7,
                                      key="index", queue=q, lane=SHORT)
    assert _until(lambda: q.state()["waiting"] == 1) and log == []  # behind the one input
    q.leave(one_input)
    assert index.done.wait(WAIT) and (index.result, log) == (7, ["index"])
    assert q.state() == {"running": ["Building the example checkpoint"], "waiting": 0}
    q.leave(build)


def test_one_training_process_at_a_time_and_a_held_fine_tune_holds_up_no_corpus_job():
    """Memory: a visitor's fine-tune does not start beside the example's build (both train in a
    child process); it is told what it waits for, and a corpus job queued after it passes."""
    clock = Clock()
    q = JobQueue(slots=1, clock=clock)
    build = _hold(q, BACKGROUND, label="Building the example checkpoint",
                  kind="Example checkpoint build", exclusive=TRAINING)
    tune = q.join("Fine-tuning", "t", kind="Fine-tuning", size=189, unit="training examples",
                  exclusive=TRAINING)
    assert q.wait_turn(tune) == 1
    corpus = _Waiter(q, "visitor's corpus job", [])  # the corpus slot is taken for a while
    corpus.start()
    assert corpus.started_job.wait(WAIT)
    stats = q.join("Corpus statistics", "s", kind="No-op statistics")
    # one job ahead (the running corpus job), not the fine-tune held up by the build
    assert q.wait_turn(stats) == 1
    assert [a.kind for a in q.outlook(stats).ahead] == ["visitor's corpus job"]
    corpus.release.set(), corpus.join(WAIT)
    assert q.wait_turn(stats, WAIT) is None  # passes the held fine-tune: no wait for the build
    q.leave(stats)
    clock.now += 120.0
    build.fraction = 0.5  # its own progress: 120 s more
    out = q.outlook(tune)
    assert [a.words for a in out.ahead] == ["Example checkpoint build (running, 50% done)"]
    assert out.wait_s == pytest.approx(120.0)
    q.leave(build, finished=True)
    assert q.wait_turn(tune) is None
    # and the other way round: the next build waits for the visitor's fine-tune
    again = q.join("Building", "b", lane=BACKGROUND, exclusive=TRAINING)
    assert q.wait_turn(again) == 1
    q.leave(tune)
    assert q.wait_turn(again) is None
    q.leave(again)
    # a cluster fine-tune trains elsewhere: no group
    assert q.join("Fine-tuning", "c", cluster=True, exclusive=TRAINING).exclusive == ""


def test_a_one_input_job_starts_at_once_behind_a_running_corpus_job():
    q = JobQueue(slots=1)
    corpus = _Waiter(q, "No-op statistics", [])
    corpus.start()
    assert corpus.started_job.wait(WAIT)
    out = jobs.run_job("Attribution", lambda p: "explained", key="a", queue=q, lane=SHORT,
                       kind="Attribution of one input")
    assert out == "explained"
    # short jobs wait only behind short jobs
    short = _hold(q, SHORT)
    other = q.join("Attribution", "b", lane=SHORT)
    assert q.wait_turn(other) == 1
    corpus_next = q.join("Drift", "d")
    assert q.wait_turn(corpus_next) == 1  # the corpus job only: the short one is not counted
    for t in (short, other, corpus_next):
        q.leave(t)
    corpus.release.set(), corpus.join(WAIT)
    assert q.state() == {"running": [], "waiting": 0}


def test_the_waiting_text_names_the_jobs_ahead_and_estimates_from_measured_rates():
    clock = Clock()
    q = JobQueue(slots=1, clock=clock)
    q.rates.record("No-op statistics", False, 30.0, 100)    # 0.3 s per example, measured
    q.rates.record("Fine-tuning drift", False, 120.0, 40)   # 3 s per example
    q.rates.record("Fine-tuning drift", False, 40.0, 40)    # 1 s: the mean is 2 s per example
    running = _hold(q, label="Corpus statistics: my-private-file.csv", kind="No-op statistics",
                    size=300, unit="examples")
    q.join("Drift of someone's model", "d", kind="Fine-tuning drift", size=50, unit="examples")
    mine = q.join("Syntactic heads", "mine", kind="Syntax heads", size=10, unit="sentences")
    out = q.outlook(mine)
    # 300 x 0.3 s left of the running job (no progress yet), then 50 x 2 s
    assert out.wait_s == pytest.approx(190.0) and out.unmeasured == ()
    assert jobs.waiting_words(q, mine, 2, "Syntactic heads") == (
        "Syntactic heads: waiting for 2 job(s) ahead of yours. Waiting behind: No-op statistics "
        "over 300 examples (running); Fine-tuning drift over 50 examples (waiting). Estimated "
        "wait: about 3 minutes, from the speed measured on this server. This updates by "
        "itself; your place is kept while the page is open.")
    # 60 s later the running job is only 20% done (slower than its kind so far): its own
    # progress says 240 s are left
    clock.now += 60.0
    running.fraction = 0.2
    out = q.outlook(mine)
    assert out.wait_s == pytest.approx(60.0 / 0.2 * 0.8 + 100.0)
    text = estimates.outlook_words(out)
    assert text == ("Waiting behind: No-op statistics over 300 examples (running, 20% done); "
                    "Fine-tuning drift over 50 examples (waiting). Estimated wait: about 6 "
                    "minutes, from the speed measured on this server.")
    assert "private" not in text and "someone" not in text  # kinds, never other labels


def test_no_estimate_before_anything_was_measured():
    q = JobQueue(slots=1, clock=Clock(), quantum_s=float("inf"))  # no turns taken
    _hold(q, kind="Syntax heads", size=500, unit="sentences")
    mine = q.join("Corpus statistics", "mine", kind="No-op statistics", size=200,
                  unit="examples")
    out = q.outlook(mine)
    assert (out.wait_s, out.unmeasured) == (None, ("Syntax heads",))
    assert estimates.outlook_words(out) == (
        "Waiting behind: Syntax heads over 500 sentences (running). No estimate yet: first job "
        "of its kind on this server (Syntax heads).")


def test_a_finished_job_records_its_rate_and_a_failed_one_does_not():
    clock = Clock()
    q = JobQueue(slots=1, clock=clock)
    assert q.measured("Attribution faithfulness") is None
    assert jobs.measured_words("Attribution faithfulness", "example", queue=q) == (
        "How long it takes on this server is not measured yet: the first run will tell.")

    def work(progress):
        progress(0.5, "half")
        clock.now += 12.0  # the job "took" 12 s on the planted clock
        return "ok"

    assert jobs.run_job("Faithfulness", work, key="f", queue=q,
                        kind="Attribution faithfulness", size=4, unit="examples") == "ok"
    assert q.measured("Attribution faithfulness") == pytest.approx(3.0)  # 12 s / 4 examples
    assert jobs.measured_words("Attribution faithfulness", "example", queue=q) == (
        "On this server: a few seconds per example, measured on its last runs.")
    assert jobs.measured_words("Attribution faithfulness", size=40, queue=q) == (
        "On this server it takes about 2 minutes, measured on its last runs.")

    def broken(progress):
        clock.now += 1000.0
        raise ValueError("bad corpus")

    with pytest.raises(ValueError):
        jobs.run_job("Faithfulness", broken, key="f", queue=q,
                     kind="Attribution faithfulness", size=4, unit="examples")
    assert q.measured("Attribution faithfulness") == pytest.approx(3.0)


def test_a_running_job_of_an_unmeasured_kind_is_measured_from_its_progress():
    clock = Clock()
    q = JobQueue(slots=1, clock=clock)
    running = _hold(q, kind="Head importance", size=40, unit="examples")
    clock.now += 50.0
    running.fraction = 0.25  # 10 of 40 examples in 50 s: 5 s an example
    assert q.measured("Head importance") == pytest.approx(5.0)
    assert q.left_s(running) == pytest.approx(150.0)
    queued = q.join("Head importance", "2", kind="Head importance", size=20, unit="examples")
    mine = q.join("Corpus statistics", "3", kind="No-op statistics")
    assert q.outlook(mine).wait_s == pytest.approx(150.0 + 20 * 5.0)
    assert q.outlook(queued).ahead[0].words == ("Head importance over 40 examples (running, 25% "
                                                "done)")


def test_the_wait_takes_the_slot_that_frees_first():
    assert estimates.wait_s([], [], 1) == 0.0
    assert estimates.wait_s([30.0], [60.0, 10.0], 1) == 100.0
    # two slots: 30 and 50 s left; the 60 s job takes the slot free at 30, the 10 s job the
    # slot free at 50, so the next slot frees at 60
    assert estimates.wait_s([50.0, 30.0], [60.0, 10.0], 2) == 60.0
    assert estimates.wait_s([5.0], [], 2) == 0.0  # a slot is free
    assert estimates.wait_s([10.0, 20.0, 30.0], [], 2) == 20.0  # one more running than slots
    assert [estimates.duration_words(s) for s in (3, 44, 61, 359, 3 * 3600)] == [
        "a few seconds", "about 40 seconds", "about 1 minute", "about 6 minutes",
        "about 3 hours"]


def test_run_job_shows_what_is_ahead_while_it_waits(monkeypatch):
    q = JobQueue(slots=1, clock=Clock(), quantum_s=float("inf"))  # no turns taken
    q.rates.record("No-op statistics", False, 60.0, 100)
    holder = _Waiter(q, "Corpus statistics", [])
    holder.start()
    assert holder.started_job.wait(WAIT)
    holder.ticket.kind, holder.ticket.size, holder.ticket.unit = "No-op statistics", 300, \
        "examples"
    fake = _StopAfter(3)
    monkeypatch.setattr(jobs, "st", fake)
    monkeypatch.setattr(jobs, "HEARTBEAT_S", 0.05)
    with pytest.raises(RuntimeError, match="visitor left"):
        jobs.run_job("Fine-tuning drift", lambda p: None, key="x", queue=q)
    infos = [args[0] for kind, args, _ in fake.sent if kind == "info"]
    assert infos and all(plain(
        "waiting for 1 job(s) ahead of yours. Waiting behind: No-op statistics over 300 "
        "examples (running). Estimated wait: about 3 minutes") in m for m in infos)
    holder.release.set(), holder.join(WAIT)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_a_background_job_runs_at_the_lowest_priority():
    q = JobQueue(slots=1)
    job = jobs.start_background_job(
        "Build", lambda p: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()),
        key="nice", queue=q)
    assert job.done.wait(WAIT) and job.result == jobs.BACKGROUND_NICE == 19
    assert job.ticket.lane == BACKGROUND


def test_a_rerun_is_not_refused_for_the_job_its_stopped_run_still_holds():
    """A visitor's run restarted during its job (a changed widget, or the browser's kept report
    arriving on a first visit) asks for the job again while the old worker still holds its slot
    until its next progress step: under a cap of one job per visitor the rerun waits its turn
    instead of being told "You already have 1 job(s)" with nothing left to end it."""
    from analysis.core.execution.queue import JobLimit

    q = JobQueue(slots=1)
    me = ("session:a",)
    old = q.join("Corpus statistics", "noop", me, 1)
    assert q.wait_turn(old) is None
    with pytest.raises(JobLimit, match=r"^You already have 1 job\(s\) waiting or running"):
        q.join("Corpus statistics", "noop", me, 1)  # a second job of a running one: refused
    q.stop(old)  # the run that asked for it was restarted
    again = q.join("Corpus statistics", "noop", me, 1)
    assert q.wait_turn(again) == 1  # behind the stopping job, which still has the slot
    with pytest.raises(JobLimit):
        q.join("Drift", "drift", me, 1)  # the rerun's own job counts
    q.leave(old)
    assert q.wait_turn(again) is None
    q.leave(again)
    assert q.state() == {"running": [], "waiting": 0}


def test_a_queued_background_job_says_what_it_waits_behind_and_for_how_long():
    """Issue 49: Head importance's first-visit job said "Waiting for a free slot in the
    queue..." for 27 minutes behind the example's build, and nothing of what was ahead. Now:
    the job ahead, its progress, and the wait from the build's own estimate (the number its
    pages say), then the job's own progress once it runs."""
    q = JobQueue(slots=1)
    build = q.join("Building the example checkpoint", "build", lane=BACKGROUND,
                   kind="The example checkpoint's build", exclusive=TRAINING,
                   estimate=lambda: 200.0)
    assert q.wait_turn(build) is None
    build.fraction = 0.4
    release = threading.Event()

    def importance(progress):
        progress(0.5, "Disabling head 3-4")
        assert release.wait(WAIT)

    job = jobs.start_background_job("Head importance", importance, key="imp", queue=q)
    assert _until(lambda: q.state()["waiting"] == 1)
    assert jobs.background_words(job) == (
        "Head importance: waiting for its turn. Waiting behind: The example checkpoint's build "
        "(running, 40% done). Estimated wait: about 3 minutes, from the speed measured on this "
        "server.")
    assert q.left_s(build) == 200.0
    q.leave(build, finished=True)
    assert _until(lambda: job.text == "Disabling head 3-4")
    assert jobs.background_words(job).startswith("Disabling head 3-4")
    release.set()
    assert job.done.wait(WAIT)
