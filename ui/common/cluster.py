"""Heavy corpus jobs on a Ray cluster (``DASHBOARD_RAY_ADDRESS``; deploy/README.md, "The app on
a Ray cluster").

A corpus study hands the job queue (:func:`ui.common.jobs.run_job`, ``cluster=``) a
:class:`ClusterJob` beside its own function: its map/merge job (:mod:`analysis.shards`) and its
corpus Dataset. With the address set, the queue's worker thread runs :func:`run_on_cluster`
instead of the study's function: it connects this process to the cluster once
(:func:`analysis.raydata.connect`), sends the job there (:func:`analysis.raydata.run_ray`: one
copy of the model per Ray worker, the partials merged here with the job's own merge, so the
numbers are the in-process ones) and turns the cluster's progress into the visitor's bar; the
server process only waits. Without the address none of this runs and nothing is imported from
Ray.

Slots: cluster jobs have their own lane in the queue (:mod:`ui.common.jobqueue`), with as many
running slots as the cluster has workers (one per GPU, else one per CPU; known once connected,
one before). Each job's actor pool grows from one worker up to all of them as the cluster has
room, so a visitor alone gets the whole cluster and a second visitor's job still starts at once,
behind no server job. Work that stays in the process keeps its lane there (fine-tuning and
corpus jobs: ``queue_slots``; one input's work: the short lane; the example's build: the
background lane); a background job sent to the cluster joins with a cluster ticket
(:class:`ClusterTickets`).

The workers load the models by their spec (``job.load()``), so a spec must resolve on them: the
embedded default, hub ids, folders on a disk the workers share; the page's token cap is applied
on the workers too (:class:`Capped`). A job that allows it (``here_if_unloadable``: Head
importance, Attribution faithfulness) runs in this process instead when the workers cannot load
its model (a folder or the example checkpoint built on this server only): the spec is
remembered, and the next job of that model is queued here from the start (:func:`or_here`, with
the caption :data:`HERE`).

A study whose arithmetic lies between several corpus jobs (Head importance: the ablations, then
the pruning masks chosen from their result) is a :class:`ClusterStudy`: it runs here, in the
queue's worker thread, and sends each of its jobs to the cluster through ``run=``.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from analysis.errors import DataError
from ui.common.progress import rate_step

LOST = ("A Ray worker died while running this job (stopped, out of memory, or its machine was "
        "lost), so nothing was kept. Run it again; on fewer examples if memory ran out.")
HERE = ("Runs on this server: the Ray cluster's workers cannot load this model (a folder or "
        "checkpoint made on this server).")
HERE_BAR = "on this server: the cluster's workers cannot load this model"
WHERE = ("Runs on the Ray cluster ({address}): the cluster's workers compute, this server only "
         "waits and shows the progress.")

PROBE_S = 5.0  # seconds to wait for the cluster's port before saying it cannot be reached

_lock = threading.Lock()
_UNLOADABLE: set[tuple[str, str]] = set()  # (address, spec) the workers could not load


class ClusterError(DataError):
    """The cluster cannot run the job (unreachable, or its workers cannot load the model); the
    message is the visitor's (every corpus page shows a DataError)."""


class Unloadable(ClusterError):
    """The cluster's workers cannot load the job's model (the loader's words)."""


@dataclass(frozen=True)
class ClusterJob:
    """What a study sends to the cluster: ``job`` (a CorpusJob) over ``dataset`` (a
    ``datasets.Dataset``); ``unit`` names its rows in the progress text; ``max_length`` is the
    token cap the in-process path gives the (first) model, None for the model's own."""

    job: Any
    dataset: Any
    unit: str = "examples"
    max_length: int | None = None
    here_if_unloadable: bool = False  # run in this process when the workers cannot load it

    @property
    def spec(self) -> str | None:
        return getattr(self.job, "spec", None)

    @property
    def size(self) -> int:
        return len(self.dataset) if self.dataset is not None else 0


@dataclass(frozen=True)
class ClusterStudy:
    """A study computed here whose corpus jobs go to the cluster: ``study(progress, run)``
    with ``run(job, models, dataset, progress)`` (the signature of
    :func:`analysis.shards.run_local`, which it is in process; ``models`` is not used on the
    cluster), ``progress(done, total)``. ``spec``: the model its jobs load; ``size``: its rows
    (said while connecting)."""

    study: Callable
    spec: str
    size: int = 0
    unit: str = "examples"
    here_if_unloadable: bool = False


@dataclass
class Capped:
    """``job`` whose first model reads at most ``max_length`` tokens, as the page's in-process
    path has it (``dataclasses.replace(loaded, max_length=...)``): a LoadedModel, or the drift
    job's (before, after, meta), whose meta is made again from the capped pair."""

    job: Any
    max_length: int

    def load(self):
        models = self.job.load()
        if isinstance(models, tuple):  # drift: (before, after, meta)
            from analysis.drift.job import models_of

            return models_of(replace(models[0], max_length=self.max_length), models[1])
        return replace(models, max_length=self.max_length)

    def map(self, models, shard, rows, progress=None):
        return self.job.map(models, shard, rows, progress)

    def merge(self, partials):
        return self.job.merge(partials)


def reachable(address: str) -> None:
    """Raise :class:`ClusterError` at once when nothing answers on the address's port (Ray
    itself keeps retrying an unreachable address for minutes, holding the job's slot)."""
    if address == "auto":
        return
    host, port = address.removeprefix("ray://").rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_S).close()
    except OSError as exc:
        raise ClusterError(f"Cannot reach the Ray cluster at {address} "
                           f"({exc.strerror or type(exc).__name__}); this job was not run. The "
                           "host's DASHBOARD_RAY_ADDRESS may be wrong, or the cluster down."
                           ) from None


def connect(address: str) -> int:
    """Connect this process to the cluster (the first job does; later ones reuse the session)
    and return its workers now."""
    with _lock:
        import ray

        from analysis.errors import InputError
        from analysis.raydata import cluster_workers, connect as ray_connect

        if not ray.is_initialized():
            reachable(address)
            try:
                return ray_connect(address)[0]
            except InputError as exc:
                raise ClusterError(str(exc)) from None
        return cluster_workers()[0]


def _run_ray(job, dataset, **kw):
    from analysis.raydata import run_ray

    return run_ray(job, dataset, None, **kw)


def _send(job, dataset, progress, workers: int):
    """``job`` over ``dataset`` on the connected cluster, its failures in the page's words."""
    from analysis.raydata import WorkerLost, model_error

    try:
        return _run_ray(job, dataset, progress=progress, workers=workers, min_workers=1)
    except Exception as exc:  # a model the workers cannot load: the loader's own message
        said = model_error(exc)
        if said is not None:
            raise Unloadable(f"The Ray cluster's workers cannot load the model: {said}"
                             ) from None
        if isinstance(exc, WorkerLost):
            raise WorkerLost(LOST) from None
        raise


def workers_may_load(cj, address: str | None) -> bool:
    """False when the workers of the cluster at ``address`` already failed to load ``cj``'s
    model in this process (it then runs here; the next server start asks again)."""
    return address is None or (address, cj.spec) not in _UNLOADABLE


def or_here(cj, say: bool = True):
    """``cj`` for :func:`ui.common.jobs.run_job`'s ``cluster=``, or None when its model is one
    the cluster's workers could not load (then, with ``say``, the caption :data:`HERE` is drawn:
    call it from the script thread)."""
    from ui.common.settings import settings

    if workers_may_load(cj, settings().ray_address):
        return cj
    if say:
        import streamlit as st

        st.caption(HERE)
    return None


def _here(progress: Callable[[float, str], None]) -> Callable[[float, str], None]:
    def said(fraction: float, text: str = "") -> None:
        progress(fraction, f"{text} ({HERE_BAR})" if text else HERE)

    return said


def run_on_cluster(cj: ClusterJob | ClusterStudy, progress: Callable[[float, str], None],
                   address: str, on_workers: Callable[[int], None] | None = None,
                   here: Callable | None = None):
    """``cj`` on the cluster at ``address`` with ``progress(fraction, text)`` moved as its
    partials come back; ``on_workers(n)`` is told the cluster's workers once connected. A
    worker lost mid-job raises :class:`analysis.raydata.WorkerLost` in the page's words, a
    cluster that cannot be reached or cannot load the model :class:`ClusterError` (both are
    DataErrors, which every corpus page shows); a model the workers cannot load runs
    ``here(progress)`` instead when ``cj.here_if_unloadable`` (the spec is remembered:
    :func:`or_here`)."""
    n = cj.size
    progress(0.0, f"Connecting to the Ray cluster for {n} {cj.unit}...")
    workers = connect(address)
    if on_workers is not None:
        on_workers(workers)
    progress(0.0, f"Sending {n} {cj.unit} to the cluster ({workers} worker(s))...")
    t0 = time.perf_counter()
    try:
        if isinstance(cj, ClusterStudy):
            return cj.study(progress, lambda job, models, dataset, told=None:
                            _send(job, dataset, told, workers))
        step = rate_step(progress, cj.unit, " on the cluster")
        job = Capped(cj.job, cj.max_length) if cj.max_length else cj.job
        result = _send(job, cj.dataset, step, workers)
    except Unloadable:
        if here is None or not cj.here_if_unloadable:
            raise
        _UNLOADABLE.add((address, cj.spec))
        return here(_here(progress))
    if hasattr(result, "seconds"):  # the page's "N examples in S s" counts the cluster's time
        result.seconds = time.perf_counter() - t0
    return result


class ClusterTickets:
    """The queue as a job sent to the cluster sees it: its tickets are cluster tickets (their
    own slots); everything else is the queue's (a background job joins through this)."""

    def __init__(self, queue):
        self._queue = queue

    def join(self, label: str, key: str, visitors: tuple = (), limit: int | None = None,
             cluster: bool = True, **about):
        return self._queue.join(label, key, visitors, limit, cluster=True, **about)

    def __getattr__(self, name: str):
        return getattr(self._queue, name)


def background(cluster, address: str | None, fn: Callable, queue, on_cluster: Callable):
    """(queue, fn) of a background job (:func:`ui.common.jobs.start_background_job`): with
    ``cluster`` and the cluster's ``address`` (DASHBOARD_RAY_ADDRESS), :class:`ClusterTickets`
    and ``on_cluster(cluster, address, queue, fn)`` (the job's thread waits on the cluster;
    ``fn`` is its fallback); else as given (a bad address: the job runs here, unsaid)."""
    if cluster is None or address is None:
        return queue, fn
    return ClusterTickets(queue), on_cluster(cluster, address, queue, fn)
