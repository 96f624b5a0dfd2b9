"""The Ray side of the placements (:class:`analysis.core.execution.placements.RayCluster`;
``DASHBOARD_RAY_ADDRESS``, deploy/README.md, "The app on a Ray cluster"): connect this process
to the cluster once (:func:`analysis.core.execution.raydata.connect`), send a corpus job there
(:func:`analysis.core.execution.raydata.run_ray`: one copy of the model per Ray worker, the partials
merged here with the job's own merge, so the numbers are the in-process ones), and turn the
cluster's progress into the job's ``progress(fraction, text)``; the server process only waits.
Nothing here imports Ray until a job runs on the cluster.

Slots: cluster jobs have their own lane in the queue (:mod:`analysis.core.execution.queue`), with as
many running slots as the cluster has workers (one per GPU, else one per CPU; known once
connected, one before). Each job's actor pool grows from one worker up to all of them as the
cluster has room, so a visitor alone gets the whole cluster and a second visitor's job still
starts at once, behind no server job.

The workers load the models by their spec (``job.load()``), so a spec must resolve on them: the
embedded default, hub ids, folders on a disk the workers share; the page's token cap travels
with the job (:class:`analysis.core.execution.work.Capped`). A job that allows it
(``here_if_unloadable``: Head importance, Attribution faithfulness) runs in this process
instead when the workers cannot load its model (a folder or the example checkpoint built on
this server only): the spec is remembered (:func:`workers_may_load`), and the next job of that
model is queued here from the start (the page says so: :data:`HERE`).
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Callable

from analysis.core.errors import DataError, InputError
from analysis.core.execution.progress import rate_step
from analysis.core.execution.work import Capped, Corpus, Study
from analysis.core.execution.raydata import (
    WorkerLost, cluster_workers, connect as ray_connect, model_error, run_ray,
)

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
        # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
        import ray

        if not ray.is_initialized():
            reachable(address)
            try:
                return ray_connect(address)[0]
            except InputError as exc:
                raise ClusterError(str(exc)) from None
        return cluster_workers()[0]


def _run_ray(job, dataset, **kw):
    return run_ray(job, dataset, None, **kw)


def _send(job, dataset, progress, workers: int):
    """``job`` over ``dataset`` on the connected cluster, its failures in the page's words."""
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


def _here(progress: Callable[[float, str], None]) -> Callable[[float, str], None]:
    def said(fraction: float, text: str = "") -> None:
        progress(fraction, f"{text} ({HERE_BAR})" if text else HERE)

    return said


def run_on_cluster(work: Corpus | Study, progress: Callable[[float, str], None],
                   address: str, on_workers: Callable[[int], None] | None = None,
                   workers: int | None = None):
    """``work`` on the cluster at ``address`` with ``progress(fraction, text)`` moved as its
    partials come back; ``on_workers(n)`` is told the cluster's workers once connected. A
    worker lost mid-job raises :class:`analysis.core.execution.raydata.WorkerLost` in the page's
    words, a cluster that cannot be reached or cannot load the model :class:`ClusterError`
    (both are DataErrors, which every corpus page shows); a model the workers cannot load runs
    in this process instead (``work.run_here``, the bar saying so) when
    ``work.here_if_unloadable`` (the spec is remembered: :func:`workers_may_load`).
    ``workers``: how many of the cluster's workers the job uses (the CLI's ``--ray-workers``;
    None: all of them)."""
    n = work.size
    progress(0.0, f"Connecting to the Ray cluster for {n} {work.unit}...")
    connected = connect(address)
    workers = workers or connected
    if on_workers is not None:
        on_workers(connected)
    progress(0.0, f"Sending {n} {work.unit} to the cluster ({workers} worker(s))...")
    t0 = time.perf_counter()
    try:
        if isinstance(work, Study):
            return work.study(progress, lambda job, models, dataset, told=None:
                              _send(job, dataset, told, workers))
        step = rate_step(progress, work.unit, " on the cluster")
        job = Capped(work.job, work.max_length) if work.max_length else work.job
        result = _send(job, work.dataset, step, workers)
    except Unloadable:
        if not work.here_if_unloadable:
            raise
        _UNLOADABLE.add((address, work.spec))
        return work.run_here(_here(progress))
    if hasattr(result, "seconds"):  # the page's "N examples in S s" counts the cluster's time
        result.seconds = time.perf_counter() - t0
    return result
