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

Per visitor: a ticket carries its visitor's keys (the session, and the client address where
the host allows: ``visitor_address``), and a visitor may hold at most ``max_jobs_per_visitor``
tickets (waiting or running) at once: a further job is refused with one line
(:class:`JobLimit`) instead of queueing ahead of everyone else. The waiting message says the
limit.

On a Ray cluster (``DASHBOARD_RAY_ADDRESS``, :mod:`ui.common.cluster`): a corpus study passes
``run_job(..., cluster=ClusterJob(job, dataset))``; with the address set its worker thread only
waits on the cluster (same ticket, position, bar, caps and cancel; a caption under the bar says
where it runs), and cluster tickets have their own running slots (``cluster_slots``: the
cluster's workers), so they wait behind no in-process job. Without the address ``cluster`` is
ignored and nothing is imported from Ray.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st

from analysis.batching import release_memory
from analysis.errors import DataError, InputError
from ui.common.cluster import background  # imports nothing from Ray
from ui.common.errors import plain
from ui.common.settings import settings

POLL_S = 0.2         # how often a waiting / running visitor's job is checked
HEARTBEAT_S = 1.0    # an unchanged message or bar is sent again after this long
EXPIRE_S = 30.0      # a waiting ticket not checked for this long is dropped


class JobLimit(InputError, DataError):
    """A visitor already holds as many queued or running jobs as the server allows."""


def forwarded_address(values) -> str:
    """The client address the trusted proxy in front of the server wrote in X-Forwarded-For
    (``values``: every such header line): the last entry. The entries before it came from
    the client itself, who can write anything there (a new "address" per request would
    escape every per-address cap)."""
    entries = [e.strip() for v in values for e in str(v).split(",")]
    return entries[-1] if entries else ""


def visitor_keys() -> tuple[str, ...]:
    """The keys a visitor is counted under: their session, and their client address when the
    host allows telling it (``visitor_address``: the connection's peer, or behind a proxy the
    address the proxy appended to X-Forwarded-For, :func:`forwarded_address`); no address on
    a local connection."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    keys = [f"session:{ctx.session_id}"] if ctx is not None else []
    mode = settings().visitor_address
    try:
        if mode == "forwarded":
            address = forwarded_address(st.context.headers.get_all("X-Forwarded-For"))
        elif mode == "connection":
            address = st.context.ip_address or ""
        else:
            address = ""
    except Exception:  # no request context (a bare script run, a test)
        address = ""
    if address:
        keys.append(f"address:{address[:64]}")
    return tuple(keys)


class JobCancelled(BaseException):
    """Raised inside a job's ``progress`` when its visitor left or restarted the page (a
    BaseException, so that no ``except Exception`` in the work swallows it)."""


@dataclass(eq=False)
class Ticket:
    label: str
    key: str
    owner: threading.Thread
    visitors: tuple = ()
    seen: float = field(default_factory=time.monotonic)
    running: bool = False
    cluster: bool = False  # runs on the Ray cluster (its own slots)


class JobQueue:
    """FIFO of tickets and ``slots`` running slots under one condition variable; cluster
    tickets have ``cluster_slots`` of their own (a FIFO of their own too)."""

    def __init__(self, slots: int = 1, expire_s: float = EXPIRE_S, cluster_slots: int = 1):
        self.slots = int(slots)
        self.cluster_slots = int(cluster_slots)
        self.expire_s = float(expire_s)
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []
        self._running: list[Ticket] = []

    def join(self, label: str, key: str, visitors: tuple = (),
             limit: int | None = None, cluster: bool = False) -> Ticket:
        """A new ticket at the end of the queue, owned by the calling thread; :class:`JobLimit`
        when one of ``visitors`` already holds ``limit`` tickets (waiting or running, on the
        cluster or not)."""
        ticket = Ticket(label, key, threading.current_thread(), tuple(visitors),
                        cluster=bool(cluster))
        with self._cond:
            self._expire()
            if limit is not None:
                for v in ticket.visitors:
                    held = sum(v in t.visitors for t in self._waiting + self._running)
                    if held >= limit:
                        raise JobLimit(
                            f"You already have {held} job(s) waiting or running; this server "
                            f"runs at most {limit} per visitor at a time. {label} can start "
                            "when yours has finished (other tabs count too).")
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
        """Jobs ahead of the ticket: running or waiting before it, of its kind (cluster or
        not: the other kind's jobs do not hold it up)."""
        same = [t for t in self._running + self._waiting[:self._waiting.index(ticket)]
                if t.cluster == ticket.cluster]
        return len(same)

    def _may_run(self, ticket: Ticket) -> bool:
        slots = self.cluster_slots if ticket.cluster else self.slots
        running = sum(t.cluster == ticket.cluster for t in self._running)
        first = next(t for t in self._waiting if t.cluster == ticket.cluster)
        return running < slots and first is ticket

    def set_cluster_slots(self, n: int) -> None:
        """Running slots for cluster tickets (the cluster's workers, once known)."""
        with self._cond:
            self.cluster_slots = max(1, int(n))
            self._cond.notify_all()

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
                if self._may_run(ticket):
                    self._waiting.remove(ticket)
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
            release_memory()  # the job's batches, back to the system

    def start(self) -> None:
        self.queue.hand_over(self.ticket, self.thread)
        self.thread.start()


def limit_words() -> str:
    """The per-visitor job limit in words ('' when there is none)."""
    limit = settings().max_jobs_per_visitor
    return f" Each visitor may have {limit} job(s) waiting or running at a time." if limit \
        else ""


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
                            "by itself; your place is kept while the page is open."
                            + limit_words()),
                      icon=":material/hourglass_top:")
            shown, sent = ahead, time.monotonic()
        ahead = queue.wait_turn(ticket, POLL_S)
    note.empty()


def _on_cluster(cluster, address: str, queue: JobQueue, fn: Callable | None = None) -> Callable:
    """The worker's work on the cluster (ui.common.cluster; ``fn``: its in-process fallback). A
    callable ``cluster`` is a task of its own (a fine-tune): ``cluster(address, progress)``."""
    if callable(cluster):
        return lambda progress: cluster(address, progress)
    from ui.common.cluster import run_on_cluster

    return lambda progress: run_on_cluster(cluster, progress, address, queue.set_cluster_slots, fn)


def run_job(label: str, fn: Callable[[Callable[[float, str], None]], Any], *, key: str,
            queue: JobQueue | None = None, cluster=None):
    """Run ``fn(progress)`` through the server-wide queue and return its result (its exception
    is raised here). ``label`` names the job for the visitor, ``key`` identifies it (thread
    name, logs). Call it only for work that is not cached yet. A visitor over the per-visitor
    limit gets a warning saying so and the page stops there. ``cluster``: a
    :class:`ui.common.cluster.ClusterJob` computing the same result, run on the Ray cluster
    instead of ``fn`` when ``DASHBOARD_RAY_ADDRESS`` is set (ignored otherwise)."""
    queue, conf = queue or job_queue(), settings()
    address = conf.ray_address if cluster is not None else None
    if cluster is not None and conf.ray_error:  # a bad address: said, and run here
        st.warning(plain(conf.ray_error), icon=":material/cloud_off:")
    work = fn if address is None else _on_cluster(cluster, address, queue, fn)
    try:
        ticket = queue.join(label, key, visitor_keys(), conf.max_jobs_per_visitor,
                            cluster=address is not None)
    except JobLimit as exc:  # said in words, and the page stops here (nothing is queued)
        st.warning(plain(str(exc)), icon=":material/block:")
        st.stop()
    job = None
    try:
        _wait_in_line(queue, ticket, label)
        job = _Job(work, queue, ticket, conf.job_nice)
        job.start()
        bar = st.progress(0.0, text=plain(label))
        where = None
        if address is not None:  # under the bar: a visitor or host can tell where it runs
            from ui.common.cluster import WHERE

            where = st.empty()
            where.caption(plain(WHERE.format(address=address)))
        drawn, sent = (0.0, ""), time.monotonic()
        while not job.done.wait(POLL_S):
            now = (job.fraction, job.text)
            # drawn when it moved, and at least every HEARTBEAT_S: sending an element lets
            # Streamlit stop this run if the visitor left or restarted the page
            if now != drawn or time.monotonic() - sent >= HEARTBEAT_S:
                bar.progress(now[0], text=plain(now[1] or label))
                drawn, sent = now, time.monotonic()
        # done: the bar goes (a finished "Probes: 174 / 174" bar left on the page read as work
        # still going on, and a cached result replays it on every rerun)
        bar.empty()
        if where is not None:
            where.empty()
    finally:
        if job is None or not (job.thread.is_alive() or job.done.is_set()):
            queue.leave(ticket)
        elif not job.done.is_set():
            job.cancelled.set()  # the worker stops at its next progress call, then leaves
    if job.error is not None:
        raise job.error
    return job.result


# ---------------------------------------------------------------------------------------------
# Background jobs: work no visitor waits for (the example checkpoint's build) takes its ticket in
# the same queue and runs in its own low-priority thread, which owns the ticket while it waits.


class BackgroundJob:
    """``fn(progress)`` queued and run in a daemon thread; read ``fraction``, ``text``,
    ``error``, ``result`` and ``done`` from any thread."""

    def __init__(self, label: str, fn: Callable, key: str, queue: JobQueue, nice: int,
                 on_progress: Callable[[float, str], None] | None = None):
        self.label, self.fn, self.key, self.queue, self.nice = label, fn, key, queue, nice
        self.on_progress = on_progress
        self.fraction, self.text = 0.0, ""
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._work, name=f"job-{key}"[:60], daemon=True)

    def progress(self, fraction: float, text: str = "") -> None:
        self.fraction, self.text = min(max(float(fraction), 0.0), 1.0), str(text)
        if self.on_progress is not None:
            self.on_progress(self.fraction, self.text)

    def _work(self) -> None:
        ticket = self.queue.join(self.label, self.key)  # owned by this thread
        try:
            lower_priority(self.nice)
            while self.queue.wait_turn(ticket, POLL_S) is not None:
                pass
            self.result = self.fn(self.progress)
        except BaseException as exc:  # kept for whoever reads the job
            self.error = exc
        finally:
            self.queue.leave(ticket)
            self.done.set()
            release_memory()


def start_background_job(label: str, fn: Callable[[Callable[[float, str], None]], Any], *,
                         key: str, queue: JobQueue | None = None,
                         on_progress: Callable[[float, str], None] | None = None,
                         cluster=None) -> BackgroundJob:
    """Queue ``fn(progress)`` in the server-wide queue without a waiting visitor: it runs in its
    own low-priority thread once a slot is free (``on_progress(fraction, text)`` is told each
    step; ``cluster``: as for :func:`run_job`). Call from the script thread; returns the job."""
    conf = settings()
    queue, fn = background(cluster, conf.ray_address, fn, queue or job_queue(), _on_cluster)
    job = BackgroundJob(label, fn, key, queue, conf.job_nice, on_progress)
    job.thread.start()
    return job
