"""The job queue on the page: what a visitor sees of the server-wide queue
(:mod:`analysis.core.execution`, which holds the queue, the placements and the workers, and no
Streamlit). This package only draws: the place in the queue and the jobs ahead, the progress
bar, where the job runs, and cancel (a visitor who leaves or reruns stops the job).

``run_job(label, work, key=..., lane=..., kind=..., size=..., unit=...)`` takes ``work``, ONE
description of the job (:mod:`analysis.core.execution.work`: a plain ``fn(progress)``, a
:class:`~analysis.core.execution.work.Corpus` job, a :class:`~analysis.core.execution.work.Study`,
an
:class:`~analysis.core.execution.work.Apart` training process; or a bare CorpusJob with its
dataset: ``run_job(label, NoopJob(...), dataset, ...)``), takes a ticket in the queue and,
while it waits, shows the visitor "waiting for N job(s) ahead of yours", which jobs those are
("Waiting behind: No-op statistics over 300 examples (running, 40% done)") and the wait
estimated from the speed this server measured for their kinds (:mod:`analysis.core.execution.
estimates`). Once a running slot of its lane is free the work runs in a low-priority worker
thread (:mod:`analysis.core.execution.worker`) where the server's placement puts it (chosen once
from the settings: :func:`analysis.core.execution.placements.placement`), with a progress bar, and a
caption under it when it runs on the Ray cluster. Lanes, caps and the exclusive training group
are the queue's (:mod:`analysis.core.execution.queue`). :func:`measured_words` gives a page the
measured speed of a kind in words.

Leaving: a visitor whose session ends or whose run is stopped or restarted while waiting gives
the ticket back (``finally``); while the job runs, the next ``progress`` call of the worker
raises :class:`JobCancelled` and the slot is freed when the worker ends. Waiting messages and
the bar are sent again at least every ``HEARTBEAT_S``: Streamlit stops a run whose visitor left
when an element is sent. A visitor over ``max_jobs_per_visitor`` gets one line
(:class:`JobLimit`) and the page stops there. Background jobs (:func:`start_background_job`)
are watched by the pages that need them.
"""

from __future__ import annotations

import time
from typing import Callable

import streamlit as st

from analysis.core.execution.cluster import HERE, WHERE
from analysis.core.execution.estimates import (duration_words, expected_words, outlook_words,
                                              rate_words)
from analysis.core.execution.placements import RayCluster, placement
from analysis.core.execution.queue import (BACKGROUND, CLUSTER, CORPUS, EXPIRE_S, SHORT, TRAINING,
                                      JobCancelled, JobLimit, JobQueue, Ticket)
from analysis.core.execution.work import Apart, Corpus, Study, describe, heavy
from analysis.core.execution.worker import BACKGROUND_NICE, BackgroundJob, Worker
from ui.common.errors import plain
from ui.server.housekeeping import release_after_job
from ui.server.settings import settings
from ui.server.visitors import visitor_keys

__all__ = ["BACKGROUND", "BACKGROUND_NICE", "CLUSTER", "CORPUS", "EXPIRE_S", "SHORT",
           "TRAINING", "Apart", "BackgroundJob", "Corpus", "JobCancelled", "JobLimit",
           "JobQueue", "Study", "Ticket", "background_words", "run_job", "start_background_job",
           "job_queue", "measured_words"]

POLL_S = 0.2         # how often a waiting / running visitor's job is checked
HEARTBEAT_S = 1.0    # an unchanged message or bar is sent again after this long


@st.cache_resource(show_spinner=False)
def _shared_queue(slots: int) -> JobQueue:
    return JobQueue(slots)


def job_queue() -> JobQueue:
    """The server's queue (one per process, shared by every session)."""
    return _shared_queue(settings().queue_slots)


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


def background_words(job: BackgroundJob) -> str:
    """What a page says of a background job no visitor queued (Head importance's first visit):
    while it waits, what it waits behind and for how long (as :func:`waiting_words` tells a
    visitor's job: "Waiting behind: The example checkpoint's build (running, 40% done).
    Estimated wait: about 3 minutes..."); while it runs, its own progress text and time left."""
    if job.ticket is not None and not job.ticket.running and not job.done.is_set():
        behind = outlook_words(job.outlook())
        return f"{job.label}: waiting for its turn. " + (
            behind or "Nothing is ahead of it; it starts in a moment.")
    left = job.left_s()
    text = job.text or f"{job.label}: starting..."
    return text + (f" ({duration_words(left)} left, measured on this server)"
                   if left is not None else "")


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


def _placed(work, conf, say: bool = True):
    """The server's placement for ``work``: a bad address is said (the work runs here), and
    so is a model the cluster's workers could not load before (with ``say``)."""
    if heavy(work) and conf.ray_error and say:  # a bad address: said, and run here
        st.warning(plain(conf.ray_error), icon=":material/cloud_off:")
    where = placement(conf.ray_address)
    if isinstance(where, RayCluster) and where.refuses(work) and say:
        st.caption(HERE)
    return where


def run_job(label: str, work, dataset=None, *, key: str, queue: JobQueue | None = None,
            lane: str = CORPUS, kind: str = "", size: int = 0, unit: str = "",
            exclusive: str = "", **corpus):
    """Run ``work`` (one description of the job: module docstring) through the server-wide
    queue and return its result (its exception is raised here). ``label`` names the job for
    the visitor, ``key`` identifies it (thread name, logs). Call it only for work that is not
    cached yet. A visitor over the per-visitor limit gets a warning saying so and the page
    stops there. ``dataset`` and ``corpus`` (:class:`Corpus`'s options): with a bare CorpusJob.
    ``lane``: :data:`CORPUS` (work over many
    inputs) or :data:`SHORT` (work on one input, bounded by the caps); ``kind``, ``size``,
    ``unit``: the work's public description and the key of its measured rate; ``exclusive``:
    :data:`TRAINING` for a training process, which does not start beside the example's build
    (:mod:`analysis.core.execution.queue`)."""
    queue, conf = queue or job_queue(), settings()
    work = describe(work, dataset, **{"unit": unit or "examples", **corpus})
    where = _placed(work, conf)
    on_cluster = where.cluster(work)
    try:
        ticket = queue.join(label, key, visitor_keys(), conf.max_jobs_per_visitor,
                            cluster=on_cluster, lane=lane, kind=kind, size=size, unit=unit,
                            exclusive=exclusive)
    except JobLimit as exc:  # said in words, and the page stops here (nothing is queued)
        st.warning(plain(str(exc)), icon=":material/block:")
        st.stop()
    job = None
    try:
        _wait_in_line(queue, ticket, label)
        job = Worker(lambda progress: where.run(work, progress, queue.set_cluster_slots),
                     queue, ticket, conf.job_nice, free=release_after_job)
        job.start()
        bar = st.progress(0.0, text=plain(label))
        caption = None
        if on_cluster:  # under the bar: a visitor or host can tell where it runs
            caption = st.empty()
            caption.caption(plain(WHERE.format(address=where.address)))
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
        if caption is not None:
            caption.empty()
    finally:
        if job is None or not (job.thread.is_alive() or job.done.is_set()):
            queue.leave(ticket)
        elif not job.done.is_set():
            job.stop()  # the worker stops at its next progress call, then leaves
    if job.error is not None:
        raise job.error
    return job.result


def measured_words(kind: str, unit: str = "", size: int = 0,
                   queue: JobQueue | None = None) -> str:
    """How fast ``kind`` runs on this server, measured (never a constant): with ``size``, how
    long ``size`` units take; else the time per ``unit``; or that it was not measured yet."""
    per_unit = (queue or job_queue()).measured(kind)
    return expected_words(per_unit, size) if size else rate_words(per_unit, unit)


def start_background_job(label: str, work, *, key: str, queue: JobQueue | None = None,
                         on_progress: Callable[[float, str], None] | None = None,
                         kind: str = "", size: int = 0, unit: str = "",
                         exclusive: str = "", lane: str = BACKGROUND,
                         estimate: Callable[[], float | None] | None = None) -> BackgroundJob:
    """Queue ``work`` (as for :func:`run_job`) in the background lane without a waiting
    visitor (work no visitor waits for: the example checkpoint's build, Head importance's
    first visit): it runs in its own lowest-priority thread (:data:`BACKGROUND_NICE`) once the
    lane's slot is free, beside the visitors' jobs and never in one of their slots; on the
    cluster it takes a cluster ticket. ``lane=SHORT``: bounded work of a second or two shared
    by every visitor (Search's index of a bundled corpus), which would otherwise wait behind
    the background lane's minutes-long jobs; it takes the one-input lane's slot instead.
    ``on_progress(fraction, text)`` is told each step; ``estimate()``: the job's own seconds
    left once it runs (the example's build: the number its pages say), for the jobs waiting
    behind it. Call from the script thread; returns the job."""
    conf, queue = settings(), queue or job_queue()
    work = describe(work)
    where = _placed(work, conf, say=False)
    return BackgroundJob(label, lambda progress: where.run(work, progress,
                                                           queue.set_cluster_slots),
                         key, queue, max(conf.job_nice, BACKGROUND_NICE), on_progress, kind,
                         size, unit, exclusive, cluster=where.cluster(work), lane=lane,
                         free=release_after_job, estimate=estimate).start()
