"""analysis.core.execution.threads (issue 48): a heavy job's torch threads are the cores other work
leaves free, re-chosen as the load changes, in the job's own thread only; OpenMP waits passively
in every process that runs heavy work; the page's rates are scaled to the load now
(analysis.core.execution.estimates); side_by_side keeps few tasks ahead of its caller."""

from __future__ import annotations

import threading
import time

import pytest
import torch

from analysis.core.execution import threads as T
from analysis.core.execution.estimates import Rates, slowdown


@pytest.fixture(autouse=True)
def no_thread_cap(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)


@pytest.mark.parametrize("load, own, n, expected", [
    (0.0, 0, 2, 2),    # idle 2 cores: both
    (0.4, 0, 2, 2),    # a little light work beside it
    (1.0, 0, 2, 1),    # one other busy thread: the free core
    (10.0, 0, 2, 1),   # a busy machine: one thread, never 0
    (2.0, 2, 2, 2),    # its own 2 threads are the load: still both
    (3.0, 2, 2, 1),    # its own 2 and one other
    (3.0, 0, 8, 5),    # 8 cores, 3 busy: 5
    (0.0, 0, 1, 1),
])
def test_job_threads_are_the_free_cores(load, own, n, expected):
    assert T.job_threads(load, own, n) == expected


def test_omp_num_threads_caps_the_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert T.job_threads(0.0, 0, 8) == 1


def test_slowdown_is_the_fair_share_of_the_cores():
    assert slowdown(0.0, 2) == 1.0 and slowdown(2.0, 2) == 1.0  # the job alone
    assert slowdown(7.0, 2) == pytest.approx(3.5)  # 7 runnable threads on 2 cores
    assert slowdown(21.0, 2) == pytest.approx(10.5)
    assert slowdown(2.4, 2) == pytest.approx(1.2) and slowdown(2.6, 2) == pytest.approx(1.3)


def test_passive_waits_set_unless_a_policy_is_chosen():
    env = {}
    assert T.passive_waits(env) is True and env == {"OMP_WAIT_POLICY": "PASSIVE"}
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert T.passive_waits(env) is False and env["OMP_WAIT_POLICY"] == "ACTIVE"


def test_child_env_waits_passively_unless_set(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert T.child_env()["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    assert T.child_env()["OMP_WAIT_POLICY"] == "active"


def test_the_follower_sets_this_threads_count_by_the_load_and_restores_it():
    saved = torch.get_num_threads()
    load, now = [0.0], [0.0]
    out = {}

    def job():
        torch.set_num_threads(2)
        f = T.LoadFollower(every=10.0, load=lambda: load[0], clock=lambda: now[0])
        out["idle"] = f.check(force=True), torch.get_num_threads()
        load[0] = 9.0          # the machine fills...
        now[0] = 5.0
        out["early"] = f.check(), torch.get_num_threads()  # ...but not due yet
        now[0] = 11.0
        out["busy"] = f.check(), torch.get_num_threads()
        load[0], now[0] = 1.0, 30.0  # only its own thread left: back to both cores
        out["quiet"] = f.check(), torch.get_num_threads()
        load[0], now[0] = 9.0, 45.0
        f.check()
        f.restore()
        out["restored"] = torch.get_num_threads()

    t = threading.Thread(target=job)
    t.start()
    t.join()
    n = T.cores()
    assert out["idle"] == (min(2, n), min(2, n))
    assert out["early"] == out["idle"]
    assert out["busy"] == (1, 1)
    assert out["quiet"] == (min(2, n), min(2, n))
    assert out["restored"] == 2
    assert torch.get_num_threads() == saved  # the test's own thread kept its count


def test_following_load_checks_then_reports():
    calls = []

    class Planted(T.LoadFollower):
        def check(self, force=False):
            calls.append("check")

    step = T.following_load(lambda f, text="": calls.append((f, text)), Planted())
    step(0.5, "half")
    assert calls == ["check", (0.5, "half")]


def test_a_worker_job_runs_with_the_threads_the_load_leaves(monkeypatch):
    """The queue's worker thread (analysis.core.execution.worker) sets a job up through
    heavy_work: at a planted load of 9 the job's torch threads are 1 whatever the caller's."""
    from analysis.core.execution.queue import JobQueue
    from analysis.core.execution.worker import Worker

    monkeypatch.setattr(T, "machine_load", lambda: 9.0)
    q = JobQueue(slots=1)
    ticket = q.join("t", "t")
    assert q.wait_turn(ticket) is None
    seen = []

    def fn(progress):
        seen.append(torch.get_num_threads())
        progress(0.5, "half")
        return "done"

    w = Worker(fn, q, ticket, nice=0, free=lambda: None)
    w.start()
    assert w.done.wait(30) and w.error is None and w.result == "done"
    assert seen == [1]


def test_rates_are_kept_at_idle_and_given_at_the_load_now():
    load, now = [7.0], [0.0]
    rates = Rates(load=lambda: load[0], n_cores=2, clock=lambda: now[0])
    rates.record("Drift", False, 70.0, 10)       # 7 s an example at load 7 (slowdown 3.5)
    assert rates.per_unit("Drift") == 7.0       # the same load: as measured
    load[0] = 0.5
    assert rates.per_unit("Drift") == 7.0       # the load is read at most every 10 s
    now[0] = 10.0
    assert rates.per_unit("Drift") == pytest.approx(2.0)  # an idle machine: 2 s an example
    load[0], now[0] = 7.5, 20.0                 # the load average's noise: as measured
    assert rates.per_unit("Drift") == 7.0
    load[0], now[0] = 21.0, 30.0                # three times the load: three times longer
    assert rates.per_unit("Drift") == pytest.approx(21.0)
    rates.record("Drift", True, 70.0, 10)       # on the cluster: never scaled
    assert rates.per_unit("Drift", cluster=True) == pytest.approx(7.0)


@pytest.mark.parametrize("workers", [1, 3])
def test_side_by_side_gives_results_in_order_and_runs_few_ahead_of_a_late_caller(workers):
    """The results come in the tasks' order whatever order the tasks finish in; a caller that
    takes a result and then lags (a loaded machine) finds at most 2 x workers tasks started past
    it, and stopping there drops the rest (pool.map had started all ten)."""
    started = []
    lock = threading.Lock()

    def task(i):
        with lock:
            started.append(i)
        time.sleep(0.02 * ((7 * i) % 3))  # later tasks may finish first
        return i * i

    with T.side_by_side(task, range(10), workers) as done:
        assert list(done) == [i * i for i in range(10)]
    assert sorted(started) == list(range(10))

    started.clear()
    with T.side_by_side(task, range(10), workers) as done:
        assert next(done) == 0
        time.sleep(0.5)  # the caller lags; idle workers would run everything submitted
    # the bound holds however the threads were scheduled (the sleep only gives pool.map the
    # time to break it)
    assert 0 in started and set(started) <= set(range(2 * workers))
