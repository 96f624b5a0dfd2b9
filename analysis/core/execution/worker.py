"""The thread a queued job runs in: a visitor's (:class:`Worker`, whose visitor's script thread
draws its bar) or a background job's (:class:`BackgroundJob`, which waits for its turn itself).

How a job runs so that other visitors' clicks stay responsive: the work runs in a worker thread
started for the job, set up by :func:`analysis.core.execution.threads.heavy_work` before it does
any work: its OS scheduling priority lowered (Linux: ``os.setpriority`` on the thread id,
niceness ``nice``, default 10; a background job :data:`BACKGROUND_NICE`, the lowest, so that a
visitor's job gets the cores first), its torch threads chosen by the machine's load and
re-chosen at each progress report (:func:`~analysis.core.execution.threads.following_load`); the
torch / OpenMP threads and child processes it starts inherit that niceness, and the thread ends
with the job, so nothing has to be raised back (an unprivileged server could not). The work reports
through ``progress(fraction, text)`` only; once its visitor left (:attr:`Worker.cancelled`) the
next ``progress`` call raises :class:`analysis.core.execution.queue.JobCancelled`, and the slot is
freed when the worker ends. At each ``progress`` call a job that has held its slot for a
quantum while another job of its lane waits pauses there until its next turn
(:func:`take_turns`; the queue decides: :meth:`analysis.core.execution.queue.JobQueue.checkpoint`).
The placement (:mod:`analysis.core.execution.placements`) decides where
the work itself runs; the worker thread runs or waits on it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from analysis.core.batching import release_memory
from analysis.core.execution.estimates import Outlook
from analysis.core.execution.queue import BACKGROUND, JobCancelled, JobQueue, Ticket
from analysis.core.execution.threads import following_load, heavy_work, lower_priority

POLL_S = 0.2          # how often a waiting background job checks its turn
BACKGROUND_NICE = 19  # a background job's niceness: below every visitor's job
PAUSED = "Paused while another job of this queue takes its turn; it resumes where it was."


def take_turns(queue: JobQueue, ticket: Ticket, thread: threading.Thread,
               cancelled: Callable[[], bool] = lambda: False,
               on_pause: Callable[[], None] | None = None) -> bool:
    """At a step of the job holding ``ticket``: when its slot is due to another ticket of its
    lane (:meth:`JobQueue.checkpoint`), call ``on_pause()`` and wait here, in the job's own
    ``thread`` (a step called from another thread never pauses), for its next turn;
    :class:`JobCancelled` when ``cancelled()`` meanwhile. True when it paused."""
    if threading.current_thread() is not thread or not queue.checkpoint(ticket):
        return False
    if on_pause is not None:
        on_pause()
    while queue.wait_turn(ticket, POLL_S) is not None:
        if cancelled():
            raise JobCancelled()
    return True


def _free() -> None:
    release_memory()  # the job's batches, back to the system


class Worker:
    """``fn(progress)`` in a low-priority worker thread holding a running ticket; the visitor's
    script thread polls ``fraction``, ``text`` and ``done``."""

    def __init__(self, fn: Callable, queue: JobQueue, ticket: Ticket, nice: int,
                 free: Callable[[], None] = _free):
        self.fn, self.queue, self.ticket, self.nice, self.free = fn, queue, ticket, nice, free
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
        self.ticket.fraction = self.fraction  # the queue's measure of its progress
        self._turns(str(text))

    def _turns(self, text: str) -> None:
        """Its turn taken (:func:`take_turns`); the bar says so while it is paused."""
        try:
            take_turns(self.queue, self.ticket, self.thread, self.cancelled.is_set,
                       on_pause=lambda: setattr(self, "text", PAUSED))
        finally:
            self.text = text

    def _work(self) -> None:
        # the ticket passes to this thread from within it: owned by a thread not started yet,
        # a running ticket read as dead to the queue (``JobQueue._expire``), which gave its
        # slot to a second job (seen: a paused job resumed beside the one it paused for)
        self.queue.hand_over(self.ticket, self.thread)
        try:
            with heavy_work(self.nice) as follower:
                self.result = self.fn(following_load(self.progress, follower))
        except BaseException as exc:  # handed to the script thread
            self.error = exc
        finally:
            self.queue.leave(self.ticket, finished=self.error is None)
            try:  # its memory handed back before it says it is done (the server's free only
                self.free()  # wakes the janitor): nothing of a job runs after ``done``
            finally:
                self.done.set()

    def start(self) -> None:
        """The worker starts; the script thread that joined owns the ticket until the worker
        takes it over, so the ticket always has a live owner."""
        self.thread.start()

    def stop(self) -> None:
        """Its visitor's run was stopped or restarted: the work ends at its next step."""
        self.cancelled.set()
        self.queue.stop(self.ticket)


class BackgroundJob:
    """``fn(progress)`` queued in the background lane (``lane``: another, for bounded short work
    that should not wait behind the background lane's long jobs; ``cluster``: as a cluster
    ticket) and run in a daemon thread that owns its ticket while it waits; read ``fraction``,
    ``text``, ``error``, ``result`` and ``done`` from any thread, :meth:`left_s` and, while it
    waits, :meth:`outlook`. ``estimate``: the job's own seconds left (the queue's
    ``Ticket.estimate``)."""

    def __init__(self, label: str, fn: Callable, key: str, queue: JobQueue, nice: int,
                 on_progress: Callable[[float, str], None] | None = None, kind: str = "",
                 size: int = 0, unit: str = "", exclusive: str = "", cluster: bool = False,
                 free: Callable[[], None] = _free, lane: str = BACKGROUND,
                 estimate: Callable[[], float | None] | None = None):
        self.label, self.fn, self.key, self.queue, self.nice = label, fn, key, queue, nice
        self.lane, self.estimate = lane, estimate
        self.on_progress, self.cluster, self.free = on_progress, cluster, free
        self.about = dict(kind=kind, size=size, unit=unit, exclusive=exclusive)
        self.fraction, self.text = 0.0, ""
        self.ticket: Ticket | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._work, name=f"job-{key}"[:60], daemon=True)

    def progress(self, fraction: float, text: str = "") -> None:
        self.fraction, self.text = min(max(float(fraction), 0.0), 1.0), str(text)
        if self.ticket is not None:
            self.ticket.fraction = self.fraction
            take_turns(self.queue, self.ticket, self.thread)
        if self.on_progress is not None:
            self.on_progress(self.fraction, self.text)

    def left_s(self) -> float | None:
        """Seconds left, from its progress or its kind's measured rate (None: not yet)."""
        ticket = self.ticket
        return None if ticket is None else self.queue.left_s(ticket)

    def outlook(self) -> Outlook:
        """While it waits for its turn: the jobs ahead of it and the estimated wait (empty once
        it runs, or before it joined the queue)."""
        ticket = self.ticket
        return Outlook() if ticket is None else self.queue.outlook(ticket)

    def _work(self) -> None:
        ticket = self.queue.join(self.label, self.key, lane=self.lane, cluster=self.cluster,
                                 estimate=self.estimate, **self.about)
        self.ticket = ticket  # owned by this thread
        try:
            lower_priority(self.nice)
            while self.queue.wait_turn(ticket, POLL_S) is not None:
                pass
            with heavy_work(self.nice) as follower:  # its threads by the load once it runs
                self.result = self.fn(following_load(self.progress, follower))
        except BaseException as exc:  # kept for whoever reads the job
            self.error = exc
        finally:
            self.queue.leave(ticket, finished=self.error is None)
            try:
                self.free()
            finally:
                self.done.set()

    def start(self) -> BackgroundJob:
        self.thread.start()
        return self
