"""What a long-running server does for itself: the long-lived heap kept out of Streamlit's
collection after every run (:func:`freeze_long_lived`), the memory a finished job used and the
caches its visitors left given back to the system by a janitor thread (:func:`release_after_job`,
:func:`tend_once`; the allocator bounded once per start: ``analysis.core.batching.bound_malloc``),
and, once per start, the temporary folders a killed process left removed
(:func:`clean_leftovers`).

Why a janitor: a full collection holds Python's interpreter lock from start to end (0.2 to 0.5 s
over the server's ~410,000 objects). Run in a job's own thread, whose niceness is raised (10, or
19 for background work), it waits for the cores behind every other process of a busy machine
while holding the lock, and the server answers nothing meanwhile: health went unanswered for
3.1 s after a Search job at load 13. The janitor runs at the server's own priority, started
from a visitor's script thread once per start."""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time

import streamlit as st

from analysis.absa.checkpoints import clean_stale, clean_temps
from analysis.core.batching import bound_malloc, release_memory
from analysis.core.models import example_folder
from ui.server import caches


_LOG = logging.getLogger(__name__)
REFREEZE_S = 60.0  # cyclic garbage among frozen objects (ended sessions) waits at most this
_frozen = {"modules": 0, "at": float("-inf")}
_freeze_lock = threading.Lock()


def freeze_long_lived(now: float | None = None) -> bool:
    """Keep the long-lived heap out of the full collection Streamlit runs after every script
    run (``runner.postScriptGC``: ``gc.collect(2)`` walks every tracked object, ~190 ms a
    visitor action with torch, transformers and the default model's ~410,000 objects;
    bench/README.md, "Server CPU per action"). After a rerun that imported modules (a page's
    first visit, a model's first load), and at most every ``REFREEZE_S`` s otherwise: unfreeze,
    collect everything, freeze what is alive (``gc.freeze``), so a rerun's collection walks only
    the objects made since. Frozen objects are still freed by reference counting (models are:
    they hold no cycles); cyclic garbage among them (an ended session's) is collected at the
    next refreeze. True when it froze."""
    now = time.monotonic() if now is None else now
    n = len(sys.modules)

    def due() -> bool:
        return n > _frozen["modules"] or now - _frozen["at"] >= REFREEZE_S

    if not due():
        return False
    with _freeze_lock:
        if not due():
            return False
        _refreeze()
        _frozen.update(modules=n, at=now)
    return True


def _refreeze() -> None:
    """Unfreeze, collect everything, freeze what is alive (under ``_freeze_lock``); a long one
    is logged: it held the interpreter lock as long, and the server answered nothing."""
    t0 = time.monotonic()
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    took = time.monotonic() - t0
    (_LOG.warning if took > 1.0 else _LOG.debug)(
        "full collection of %d objects took %.2f s", gc.get_freeze_count(), took)


SWEEP_S = 15.0  # how often the janitor drops the caches' idle entries
_due = threading.Event()
_stop = threading.Event()
_janitor: dict[str, threading.Thread | None] = {"thread": None}
_janitor_lock = threading.Lock()


_pending = {"full": False}  # a full collection was asked for and put off


def collect_all(force: bool = False) -> bool:
    """Everything unreachable back to the system: a full collection that sees the frozen heap
    too (a job's cyclic garbage may have been frozen by :func:`freeze_long_lived` while it ran,
    and would wait for the next visitor's rerun) and the live heap frozen again, at most every
    ``REFREEZE_S`` (unless ``force``: it holds the interpreter lock 0.26 to 0.29 CPU-s over
    490,000 objects, 0.7 to 0.9 s of wall time at load 10); else a collection of what is not
    frozen; then glibc's trim (``analysis.core.batching.release_memory``). True when it was a
    full collection."""
    with _freeze_lock:
        full = force or time.monotonic() - _frozen["at"] >= REFREEZE_S
        if full:
            _refreeze()
            _frozen.update(modules=len(sys.modules), at=time.monotonic())
    release_memory()
    return full


def release_after_job() -> None:
    """What a finished job (a worker thread's, ``analysis.core.execution.worker``) left behind,
    back to the system: :func:`collect_all` by the janitor (at once here where there is none:
    a script, a test)."""
    thread = _janitor["thread"]
    if thread is None or not thread.is_alive():
        collect_all()
    else:
        _due.set()


def tend_once(due: bool) -> bool:
    """One round of the janitor: the caches' entries idle for ``cache_idle_s`` dropped
    (:func:`ui.server.caches.sweep`), then :func:`collect_all` when a job ended (``due``),
    something was dropped or a full collection was put off. True when it collected."""
    dropped = caches.sweep()
    if due or dropped or _pending["full"]:
        _pending["full"] = not collect_all()
        return True
    return False


def _tend() -> None:
    while not _stop.is_set():
        due = _due.wait(SWEEP_S)
        _due.clear()
        if _stop.is_set():
            return
        try:
            tend_once(due)
        except Exception:  # noqa: BLE001 - the janitor outlives any one round's failure
            pass


def start_janitor() -> threading.Thread | None:
    """The janitor thread (one per process), started from the calling thread, whose priority
    it keeps: call it from a visitor's script thread, never a job's. None when the environment
    says ``DASHBOARD_JANITOR=0`` (the test suite: a thread collecting at its own times would
    race the tests of the collector; a job's memory is then released in its own thread)."""
    if os.environ.get("DASHBOARD_JANITOR", "1").strip() == "0":
        return None
    with _janitor_lock:
        thread = _janitor["thread"]
        if thread is None or not thread.is_alive():
            _stop.clear()
            thread = _janitor["thread"] = threading.Thread(target=_tend, name="janitor",
                                                           daemon=True)
            thread.start()
        return thread


def stop_janitor() -> None:
    """The janitor ends (after its round, if one is running)."""
    with _janitor_lock:
        thread, _janitor["thread"] = _janitor["thread"], None
    if thread is not None:
        _stop.set()
        _due.set()
        thread.join(30)


@st.cache_resource(show_spinner=False)
def clean_leftovers() -> list[str]:
    """Once per server start (a visitor's script thread): remove the temporary folders a killed
    process left (uploads being unpacked, .zips being made, checkpoint saves; by name pattern
    and age), bound the allocator (``bound_malloc``) and start the janitor."""
    bound_malloc()
    start_janitor()
    return clean_temps() + clean_stale(example_folder().parent)
