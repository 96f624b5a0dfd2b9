"""The one server-wide queue for heavy work (fine-tune, corpus statistics, gradients, drift,
head discovery), shared by every session of the server, on the page.

``run_job(label, fn, key=..., lane=..., kind=..., size=..., unit=...)`` takes a ticket in the
queue (:mod:`ui.common.jobqueue`) and, while it waits, shows the visitor "waiting for N job(s)
ahead of yours", which jobs those are ("Waiting behind: No-op statistics over 300 examples
(running, 40% done)") and the wait estimated from the speed this server measured for their kinds
(:mod:`ui.common.estimates`; "no estimate yet: first job of its kind on this server" before any
was measured). Once a running slot of its lane is free it runs ``fn(progress)`` with a progress
bar; ``progress(fraction, text)`` moves the bar. Used in demo mode and locally.

Lanes (each with running slots of its own, FIFO within): ``corpus`` (the default:
``queue_slots`` slots; a visitor's work over many inputs), ``short`` (``lane=SHORT``: a
visitor's work on one input, bounded by the token and upload caps; it never waits behind a
corpus job), ``background`` (:func:`start_background_job`: work no visitor waits for, which
never takes a visitor's slot) and ``cluster`` (below). ``kind`` is the public name of the kind
of work (e.g. "No-op statistics"): what other visitors see of the job (never its label, which
may name a visitor's file or model) and what its measured rate is kept under; ``size`` and
``unit`` ("300", "examples") make that rate one per example. :func:`measured_words` gives a
page the measured speed of a kind in words (instead of a constant such as "about a second per
example").

How a job runs so that other visitors' clicks stay responsive: ``fn`` runs in a worker thread
started for the job, whose OS scheduling priority is lowered (Linux: ``os.setpriority`` on the
thread id, niceness ``job_nice``, default 10; a background job :data:`BACKGROUND_NICE`, the
lowest, so that a visitor's job gets the cores first) before it does any work; the torch /
OpenMP threads and child processes it starts inherit that niceness, and the thread ends with the
job, so nothing has to be raised back (an unprivileged server could not). A light request of
another visitor (the forward of one sentence) runs at normal priority and gets the cores first.
``fn`` must not call Streamlit (it is not the script thread); it reports through ``progress``
only, and the visitor's script thread draws the bar.

Leaving: a visitor whose session ends or whose run is stopped or restarted while waiting gives
the ticket back (``finally``); while the job runs, the next ``progress`` call of the worker
raises :class:`JobCancelled` and the slot is freed when the worker ends. A ticket whose waiter
stopped checking in for ``EXPIRE_S`` seconds, or whose thread is gone, expires.

Per visitor: a ticket carries its visitor's keys (the session, and the client address where
the host allows: ``visitor_address``), and a visitor may hold at most ``max_jobs_per_visitor``
tickets (waiting or running, in any lane) at once: a further job is refused with one line
(:class:`JobLimit`) instead of queueing ahead of everyone else. The waiting message says the
limit.

On a Ray cluster (``DASHBOARD_RAY_ADDRESS``, :mod:`ui.common.cluster`): a corpus study passes
``run_job(..., cluster=ClusterJob(job, dataset))``; with the address set its worker thread only
waits on the cluster (same ticket, position, bar, caps and cancel; a caption under the bar says
where it runs), and cluster tickets have their own lane (``cluster_slots``: the cluster's
workers), so they wait behind no in-process job. Without the address ``cluster`` is ignored and
nothing is imported from Ray.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

import streamlit as st

from analysis.batching import release_memory
from ui.common.cluster import background  # imports nothing from Ray
from ui.common.errors import plain
from ui.common.estimates import expected_words, outlook_words, rate_words
from ui.common.jobqueue import (BACKGROUND, CLUSTER, CORPUS, EXPIRE_S, SHORT, TRAINING,
                                JobCancelled, JobLimit, JobQueue, Ticket)
from ui.common.settings import settings

__all__ = ["BACKGROUND", "CLUSTER", "CORPUS", "EXPIRE_S", "SHORT", "TRAINING", "JobCancelled",
           "JobLimit", "JobQueue", "Ticket", "run_job", "start_background_job", "job_queue",
           "measured_words"]

POLL_S = 0.2         # how often a waiting / running visitor's job is checked
HEARTBEAT_S = 1.0    # an unchanged message or bar is sent again after this long
BACKGROUND_NICE = 19  # a background job's niceness: below every visitor's job


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
        self.ticket.fraction = self.fraction  # the queue's measure of its progress

    def _work(self) -> None:
        try:
            lower_priority(self.nice)
            self.result = self.fn(self.progress)
        except BaseException as exc:  # handed to the script thread
            self.error = exc
        finally:
            self.queue.leave(self.ticket, finished=self.error is None)
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


def waiting_words(queue: JobQueue, ticket: Ticket, ahead: int, label: str) -> str:
    """What a waiting visitor reads: the place, the jobs ahead by kind and size with their
    progress, the wait estimated from this server's measured rates (or that there is none yet),
    and the per-visitor limit."""
    behind = outlook_words(queue.outlook(ticket))
    return (f"{label}: waiting for {ahead} job(s) ahead of yours. "
            + (f"{behind} " if behind else "")
            + "This updates by itself; your place is kept while the page is open."
            + limit_words())


def _wait_in_line(queue: JobQueue, ticket: Ticket, label: str) -> None:
    """Wait for a running slot, showing the place in the queue and what is ahead. The message is
    sent again when it changes and at least every ``HEARTBEAT_S``: Streamlit stops a run whose
    visitor left or restarted it when an element is sent, and :func:`run_job` then gives the
    ticket back."""
    note = st.empty()
    ahead, shown, sent = queue.wait_turn(ticket), None, 0.0
    while ahead is not None:
        words = waiting_words(queue, ticket, ahead, label)
        if words != shown or time.monotonic() - sent >= HEARTBEAT_S:
            note.info(plain(words), icon=":material/hourglass_top:")
            shown, sent = words, time.monotonic()
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
            queue: JobQueue | None = None, cluster=None, lane: str = CORPUS, kind: str = "",
            size: int = 0, unit: str = "", exclusive: str = ""):
    """Run ``fn(progress)`` through the server-wide queue and return its result (its exception
    is raised here). ``label`` names the job for the visitor, ``key`` identifies it (thread
    name, logs). Call it only for work that is not cached yet. A visitor over the per-visitor
    limit gets a warning saying so and the page stops there. ``cluster``: a
    :class:`ui.common.cluster.ClusterJob` computing the same result, run on the Ray cluster
    instead of ``fn`` when ``DASHBOARD_RAY_ADDRESS`` is set (ignored otherwise). ``lane``:
    :data:`CORPUS` (work over many inputs) or :data:`SHORT` (work on one input, bounded by the
    caps); ``kind``, ``size``, ``unit``: the work's public description and the key of its
    measured rate; ``exclusive``: :data:`TRAINING` for a training process, which does not
    start beside the example's build (:mod:`ui.common.jobqueue`)."""
    queue, conf = queue or job_queue(), settings()
    address = conf.ray_address if cluster is not None else None
    if cluster is not None and conf.ray_error:  # a bad address: said, and run here
        st.warning(plain(conf.ray_error), icon=":material/cloud_off:")
    work = fn if address is None else _on_cluster(cluster, address, queue, fn)
    try:
        ticket = queue.join(label, key, visitor_keys(), conf.max_jobs_per_visitor,
                            cluster=address is not None, lane=lane, kind=kind, size=size,
                            unit=unit, exclusive=exclusive)
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
            queue.stop(ticket)
    if job.error is not None:
        raise job.error
    return job.result


def measured_words(kind: str, unit: str = "", size: int = 0,
                   queue: JobQueue | None = None) -> str:
    """How fast ``kind`` runs on this server, measured (never a constant): with ``size``, how
    long ``size`` units take; else the time per ``unit``; or that it was not measured yet."""
    per_unit = (queue or job_queue()).measured(kind)
    return expected_words(per_unit, size) if size else rate_words(per_unit, unit)


# ---------------------------------------------------------------------------------------------
# Background jobs: work no visitor waits for (the example checkpoint's build, Head importance's
# first visit) takes its ticket in the background lane (its own slot: it never holds a
# visitor's) and runs in its own lowest-priority thread, which owns the ticket while it waits.


class BackgroundJob:
    """``fn(progress)`` queued and run in a daemon thread; read ``fraction``, ``text``,
    ``error``, ``result`` and ``done`` from any thread, and :meth:`left_s`."""

    def __init__(self, label: str, fn: Callable, key: str, queue: JobQueue, nice: int,
                 on_progress: Callable[[float, str], None] | None = None, kind: str = "",
                 size: int = 0, unit: str = "", exclusive: str = ""):
        self.label, self.fn, self.key, self.queue, self.nice = label, fn, key, queue, nice
        self.on_progress = on_progress
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
        if self.on_progress is not None:
            self.on_progress(self.fraction, self.text)

    def left_s(self) -> float | None:
        """Seconds left, from its progress or its kind's measured rate (None: not yet)."""
        ticket = self.ticket
        return None if ticket is None else self.queue.left_s(ticket)

    def _work(self) -> None:
        ticket = self.queue.join(self.label, self.key, lane=BACKGROUND, **self.about)
        self.ticket = ticket  # owned by this thread
        try:
            lower_priority(self.nice)
            while self.queue.wait_turn(ticket, POLL_S) is not None:
                pass
            self.result = self.fn(self.progress)
        except BaseException as exc:  # kept for whoever reads the job
            self.error = exc
        finally:
            self.queue.leave(ticket, finished=self.error is None)
            self.done.set()
            release_memory()


def start_background_job(label: str, fn: Callable[[Callable[[float, str], None]], Any], *,
                         key: str, queue: JobQueue | None = None,
                         on_progress: Callable[[float, str], None] | None = None,
                         cluster=None, kind: str = "", size: int = 0, unit: str = "",
                         exclusive: str = "") -> BackgroundJob:
    """Queue ``fn(progress)`` in the background lane without a waiting visitor: it runs in its
    own lowest-priority thread (:data:`BACKGROUND_NICE`) once the lane's slot is free, beside
    the visitors' jobs and never in one of their slots (``on_progress(fraction, text)`` is told
    each step; ``cluster``: as for :func:`run_job`, a cluster ticket then; ``kind``, ``size``,
    ``unit``, ``exclusive``: as for :func:`run_job`). Call from the script thread; returns the
    job."""
    conf = settings()
    queue, fn = background(cluster, conf.ray_address, fn, queue or job_queue(), _on_cluster)
    job = BackgroundJob(label, fn, key, queue, max(conf.job_nice, BACKGROUND_NICE),
                        on_progress, kind, size, unit, exclusive)
    job.thread.start()
    return job
