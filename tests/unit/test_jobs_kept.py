"""ui.common.jobs.kept.job_cached: results of queued jobs kept server-wide like Streamlit's
caches (keyed by the arguments not named with "_", the most recent ``max_entries``), computed
once per key when two visitors ask at once, nothing kept from a run that raised, a copy per
caller with ``copy=True``. (That a hit draws no job bar again, where st.cache_resource replayed
it, is seen in Chromium by bench/server/predictions_table.py, which records every bar.)"""

from __future__ import annotations

import threading
import time

import pytest

from ui.common.jobs.kept import job_cached


def test_keyed_by_the_public_arguments_and_the_most_recent_entries_kept():
    calls = []

    @job_cached(max_entries=2)
    def f(a, b, _big=None):
        calls.append((a, b))
        return {"a": a, "b": b}

    one = f(1, 2, _big=object())
    assert f(1, 2, _big=object()) is one           # "_big" is not part of the key
    f(1, 3)
    f(1, 2)                                         # used last: (1, 3) is the oldest now
    f(1, 4)                                         # pushes (1, 3) out
    f(1, 2)
    f(1, 3)
    assert calls == [(1, 2), (1, 3), (1, 4), (1, 3)]
    f.clear()
    f(1, 2)
    assert calls[-1] == (1, 2) and len(calls) == 5


def test_a_copy_per_caller_with_copy():
    @job_cached(copy=True)
    def f(a):
        return {"rows": [a]}

    first = f(1)
    first["rows"].append("changed by a caller")
    assert f(1) == {"rows": [1]}


def test_a_run_that_raised_keeps_nothing():
    calls = []

    @job_cached()
    def f(a):
        calls.append(a)
        if len(calls) == 1:
            raise RuntimeError("the visitor left")
        return a

    with pytest.raises(RuntimeError):
        f(7)
    assert f(7) == 7 and calls == [7, 7]


def test_two_visitors_asking_at_once_share_one_computation():
    calls, started, release = [], threading.Event(), threading.Event()

    @job_cached()
    def f(a):
        calls.append(a)
        started.set()
        release.wait(10)
        return [a]

    got = []
    first = threading.Thread(target=lambda: got.append(f(5)))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=lambda: got.append(f(5)))
    second.start()
    time.sleep(0.05)  # the second waits on the first's computation (it cannot finish first)
    assert len(got) == 0
    release.set()
    first.join(10)
    second.join(10)
    assert calls == [5] and got[0] is got[1] == [5]

