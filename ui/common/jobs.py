"""The one server-wide queue for heavy work (fine-tune, corpus statistics, gradients, drift,
head discovery), shared by every session of the server.

``run_job(label, fn, key=...)`` takes a ticket in the queue (FIFO), shows the waiting visitor
"Waiting for N job(s) ahead of yours", and once one of the ``queue_slots`` running slots is free
runs ``fn(progress)`` with a progress bar; ``progress(fraction, text)`` moves the bar. Used in
demo mode and locally (locally the queue is simply usually empty).

How a job runs so that other visitors' clicks stay responsive: ``fn`` runs in a worker thread
started for the job, whose OS scheduling priority is lowered (Linux: ``os.setpriority`` on the
thread id, niceness ``job_nice``, default 10) before it does any work; the torch / OpenMP
threads it starts inherit that niceness, and the thread ends with the job, so nothing has to be
raised back (an unprivileged server could not). A light request of another visitor (the
forward of one sentence) runs at normal priority and gets the cores first. ``fn`` must not call
Streamlit (it is not the script thread); it reports through ``progress`` only, and the visitor's
script thread draws the bar.

Leaving: a visitor whose session ends or whose run is stopped or restarted while waiting gives
the ticket back (``finally``); while the job runs, the next ``progress`` call of the worker
raises :class:`JobCancelled` and the slot is freed when the worker ends. A ticket whose waiter
stopped checking in for ``EXPIRE_S`` seconds, or whose thread is gone, expires.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st

from ui.common.errors import plain
from ui.common.settings import settings

POLL_S = 0.2         # how often a waiting / running visitor's job is checked
HEARTBEAT_S = 1.0    # an unchanged message or bar is sent again after this long
EXPIRE_S = 30.0      # a waiting ticket not checked for this long is dropped


class JobCancelled(BaseException):
    """Raised inside a job's ``progress`` when its visitor left or restarted the page (a
    BaseException, so that no ``except Exception`` in the work swallows it)."""


@dataclass(eq=False)
class Ticket:
    label: str
    key: str
    owner: threading.Thread
    seen: float = field(default_factory=time.monotonic)
    running: bool = False


class JobQueue:
    """FIFO of tickets and ``slots`` running slots under one condition variable."""

    def __init__(self, slots: int = 1, expire_s: float = EXPIRE_S):
        self.slots = int(slots)
        self.expire_s = float(expire_s)
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []
        self._running: list[Ticket] = []

    def join(self, label: str, key: str) -> Ticket:
        """A new ticket at the end of the queue, owned by the calling thread."""
        ticket = Ticket(label, key, threading.current_thread())
        with self._cond:
            self._waiting.append(ticket)
            self._cond.notify_all()
        return ticket

    def _expire(self) -> None:
        now = time.monotonic()
        dead = [t for t in self._waiting
                if not t.owner.is_alive() or now - t.seen > self.expire_s]
        dead += [t for t in self._running if not t.owner.is_alive()]
        for t in dead:
            (self._running if t.running else self._waiting).remove(t)
        if dead:
            self._cond.notify_all()

    def _ahead(self, ticket: Ticket) -> int:
        return len(self._running) + self._waiting.index(ticket)

    def wait_turn(self, ticket: Ticket, timeout: float = 0.0) -> int | None:
        """Check in, then wait up to ``timeout`` s for the ticket's turn. Returns None once the
        ticket holds a running slot, else the number of jobs ahead of it (running ones
        included). A ticket that expired meanwhile goes back to the end of the queue."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                ticket.seen = time.monotonic()
                self._expire()
                if ticket.running:
                    return None
                if ticket not in self._waiting:
                    self._waiting.append(ticket)
                if len(self._running) < self.slots and self._waiting[0] is ticket:
                    self._waiting.pop(0)
                    ticket.running = True
                    self._running.append(ticket)
                    self._cond.notify_all()
                    return None
                left = deadline - time.monotonic()
                if left <= 0:
                    return self._ahead(ticket)
                self._cond.wait(left)

    def hand_over(self, ticket: Ticket, thread: threading.Thread) -> None:
        """The running ticket is now owned by ``thread`` (the job's worker)."""
        with self._cond:
            ticket.owner = thread

    def leave(self, ticket: Ticket) -> None:
        """Give the ticket back (waiting or running); safe to call twice."""
        with self._cond:
            for queue in (self._waiting, self._running):
                if ticket in queue:
                    queue.remove(ticket)
            ticket.running = False
            self._cond.notify_all()

    def state(self) -> dict:
        """Labels of the running jobs and the number waiting (expired tickets dropped)."""
        with self._cond:
            self._expire()
            return {"running": [t.label for t in self._running], "waiting": len(self._waiting)}


@st.cache_resource(show_spinner=False)
def _shared_queue(slots: int) -> JobQueue:
    return JobQueue(slots)


def job_queue() -> JobQueue:
    """The server's queue (one per process, shared by every session)."""
    return _shared_queue(settings().queue_slots)


def lower_priority(nice: int) -> bool:
    """Raise the calling thread's niceness to ``nice`` (Linux: only this thread, and threads it
    starts later). False where the OS does not allow it."""
    try:
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        return True
    except (AttributeError, OSError):
        return False


class _Job:
    """``fn(progress)`` in a low-priority worker thread; the script thread polls it."""

    def __init__(self, fn: Callable, queue: JobQueue, ticket: Ticket, nice: int):
        self.fn, self.queue, self.ticket, self.nice = fn, queue, ticket, nice
        self.fraction, self.text = 0.0, ""
        self.result: Any = None
        self.error: BaseException | None = None
        self.cancelled = threading.Event()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._work, name=f"job-{ticket.key}"[:60],
                                       daemon=True)

    def progress(self, fraction: float, text: str = "") -> None:
        if self.cancelled.is_set():
            raise JobCancelled()
        self.fraction, self.text = min(max(float(fraction), 0.0), 1.0), str(text)

    def _work(self) -> None:
        try:
            lower_priority(self.nice)
            self.result = self.fn(self.progress)
        except BaseException as exc:  # handed to the script thread
            self.error = exc
        finally:
            self.queue.leave(self.ticket)
            self.done.set()

    def start(self) -> None:
        self.queue.hand_over(self.ticket, self.thread)
        self.thread.start()


def _wait_in_line(queue: JobQueue, ticket: Ticket, label: str) -> None:
    """Wait for a running slot, showing the place in the queue. The message is sent again when
    the place changes and at least every ``HEARTBEAT_S``: Streamlit stops a run whose visitor
    left or restarted it when an element is sent, and :func:`run_job` then gives the ticket
    back."""
    note = st.empty()
    ahead, shown, sent = queue.wait_turn(ticket), None, 0.0
    while ahead is not None:
        if ahead != shown or time.monotonic() - sent >= HEARTBEAT_S:
            note.info(plain(f"{label}: waiting for {ahead} job(s) ahead of yours. This updates "
                            "by itself; your place is kept while the page is open."),
                      icon=":material/hourglass_top:")
            shown, sent = ahead, time.monotonic()
        ahead = queue.wait_turn(ticket, POLL_S)
    note.empty()


def run_job(label: str, fn: Callable[[Callable[[float, str], None]], Any], *, key: str,
            queue: JobQueue | None = None):
    """Run ``fn(progress)`` through the server-wide queue and return its result (its exception
    is raised here). ``label`` names the job for the visitor, ``key`` identifies it (thread
    name, logs). Call it only for work that is not cached yet."""
    queue = queue or job_queue()
    ticket = queue.join(label, key)
    job = None
    try:
        _wait_in_line(queue, ticket, label)
        job = _Job(fn, queue, ticket, settings().job_nice)
        job.start()
        bar = st.progress(0.0, text=plain(label))
        drawn, sent = (0.0, ""), time.monotonic()
        while not job.done.wait(POLL_S):
            now = (job.fraction, job.text)
            # drawn when it moved, and at least every HEARTBEAT_S: sending an element lets
            # Streamlit stop this run if the visitor left or restarted the page
            if now != drawn or time.monotonic() - sent >= HEARTBEAT_S:
                bar.progress(now[0], text=plain(now[1] or label))
                drawn, sent = now, time.monotonic()
        if job.error is None:
            bar.progress(1.0, text=plain(job.text or label))
        else:
            bar.empty()
    finally:
        if job is None or not (job.thread.is_alive() or job.done.is_set()):
            queue.leave(ticket)
        elif not job.done.is_set():
            job.cancelled.set()  # the worker stops at its next progress call, then leaves
    if job.error is not None:
        raise job.error
    return job.result
