"""Results of queued jobs kept server-wide, without Streamlit's replay.

A page function that runs its work through :func:`ui.common.jobs.run_job` and was cached with
``st.cache_resource`` or ``st.cache_data`` drew the job's bar inside the cached function, and
Streamlit replays what a cached function drew on every hit: a finished job's bar ("answering
the examples (1984/10000)") flashed for 50-90 ms on each sort, filter or select of the
Predictions table (bench/server/predictions_table.py). :func:`job_cached` keeps the results
itself instead: server-wide, keyed like Streamlit's caches (the arguments whose names do not
start with "_"), the ``max_entries`` most recently used per function, one computation per key at
a time (a second visitor asking for the same key waits for the first's, as with Streamlit's
cache); ``copy=True`` hands every caller its own copy (``st.cache_data``'s behaviour: a caller
may change what it gets). A run that raised keeps nothing. :func:`clear_all` forgets every
function's results."""

from __future__ import annotations

import copy as copying
import functools
import inspect
import threading
from collections import OrderedDict
from typing import Callable

from ui.server.caches import arguments_key

_STORES: list = []  # every job_cached function's clear(), for :func:`clear_all`


def clear_all() -> None:
    """Forget every kept result (as ``st.cache_data.clear()`` does Streamlit's)."""
    for clear in list(_STORES):
        clear()


def job_cached(max_entries: int = 4, copy: bool = False) -> Callable:
    """Decorator (module docstring); the wrapped function's ``clear()`` forgets its results."""

    def wrap(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        kept: OrderedDict = OrderedDict()
        lock = threading.Lock()
        running: dict = {}  # key -> the lock its computation holds

        def give(value):
            return copying.deepcopy(value) if copy else value

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            key = arguments_key(sig, args, kwargs)
            while True:
                with lock:
                    if key in kept:
                        kept.move_to_end(key)
                        return give(kept[key])
                    mine = running.get(key)
                    if mine is None:
                        mine = running[key] = threading.Lock()
                        mine.acquire()
                        break
                with mine:  # another visitor computes it: wait, then look again
                    pass
            try:
                value = fn(*args, **kwargs)
                with lock:
                    kept[key] = value
                    while len(kept) > max_entries:
                        kept.popitem(last=False)
                return give(value)
            finally:
                with lock:
                    running.pop(key, None)
                mine.release()

        def clear() -> None:
            with lock:
                kept.clear()

        cached.clear = clear
        _STORES.append(clear)
        return cached

    return wrap
