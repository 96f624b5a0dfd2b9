"""Where the server's heavy work runs, chosen ONCE from its settings (:func:`placement`):

- :class:`InProcess`: in the queue's worker thread of this process (corpus jobs mapped as one
  shard, studies with :func:`analysis.core.execution.corpus.run_local`); a training process
  (:class:`analysis.core.execution.work.Apart`) in a child process of its own
  (:mod:`analysis.core.execution.child`), so that the server keeps its interpreter lock and cores
  (:class:`Away` with no address: the training process only says what to run);
- :class:`RayCluster`: corpus jobs and a study's corpus jobs on the Ray cluster at ``address``
  (:mod:`analysis.core.execution.cluster`; the worker thread only waits), a training process as one
  Ray task (:class:`Away` with the address); a model the workers cannot load runs in this
  process when the work allows it, and the next job of that model is placed here from the
  start (:meth:`RayCluster.refuses`).

A plain callable (light work on one input) runs in the worker thread under either placement.

A program that runs one corpus job and ends (the CLI's ``--ray auto|ADDRESS``, ``--ray-workers``)
chooses its placement the same way, once (:func:`placement` with ``workers``), and hands each
corpus job to :meth:`Placement.map_merge`: in this process over the whole corpus as one shard
(or the study's own in-process run, ``here``), on the cluster over shards
(:func:`analysis.core.execution.raydata.run_ray`, which connects and lets go itself).
A placement is a plain object with :meth:`Placement.run`; the queue (:mod:`.queue`) and the
worker (:mod:`.worker`) know nothing of where work runs beyond :attr:`Placement.cluster` (a
cluster ticket has its own lane). Ray is imported only when the Ray placement runs a job.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Protocol

# modules, not their functions: a placement looks them up when it runs (tests swap them there)
from analysis.core.execution import cluster, raydata
from analysis.core.execution.child import run_in_child
from analysis.core.execution.corpus import run_local
from analysis.core.execution.work import Apart, Corpus, Study, heavy

Progress = Callable[[float, str], None]
Count = Callable[[int, int], None] | None  # progress(done, total) of a corpus job


class Placement(Protocol):
    """Runs one description of work (:mod:`analysis.core.execution.work`)."""

    address: str | None  # the Ray cluster's address (None: nothing leaves this machine)

    def cluster(self, work) -> bool:
        """Whether ``work`` takes a cluster ticket (its worker thread only waits there)."""

    def run(self, work, progress: Progress,
            on_workers: Callable[[int], None] | None = None) -> Any:
        """``work``'s result; ``progress(fraction, text)`` moves its bar (and raises
        :class:`analysis.core.execution.queue.JobCancelled` once its visitor left);
        ``on_workers(n)``: told the cluster's workers once known."""

    def map_merge(self, job, models, dataset, progress: Count = None,
                  here: Callable[[], Any] | None = None) -> Any:
        """One corpus job over ``dataset`` for a program that runs it once (the CLI):
        ``job.merge`` of its partials; ``progress(done, total)``; ``models``: the loaded models
        (used in this process only); ``here()``: the study's own in-process run of the same
        work (default: :func:`analysis.core.execution.corpus.run_local`)."""


@dataclass(frozen=True)
class Away:
    """Where a training process (:class:`~analysis.core.execution.work.Apart`) runs, handed to it
    by its placement: ``away(fn, *args, on_message=..., on_poll=..., nice=..., **kwargs)`` calls
    the module-level ``fn(*args, send=send, **kwargs)`` there, each ``send(*message)`` reaching
    ``on_message(*message)`` here, ``on_poll()`` every 0.2 s (what it raises stops the work).

    ``address`` None: a child process of its own on this machine
    (:func:`analysis.core.execution.child.run_in_child`, at priority ``nice``), which shares this
    machine's disk (:attr:`here`); else one task on the Ray cluster at ``address``
    (:func:`analysis.core.execution.raydata.run_task`: a GPU where it has one), connected first
    (:func:`analysis.core.execution.cluster.connect`: one line when it cannot be reached), whose
    results come back as values only."""

    address: str | None = None

    @property
    def here(self) -> bool:
        """Whether it runs on this machine (a folder it writes can be read here)."""
        return self.address is None

    def __call__(self, fn, *args, on_message=None, on_poll=None, nice: int | None = 10,
                 **kwargs):
        if self.address is None:
            return run_in_child(fn, *args, on_message=on_message, on_poll=on_poll, nice=nice,
                                **kwargs)
        cluster.connect(self.address)
        return raydata.run_task(fn, *args, address=self.address, on_message=on_message,
                                on_poll=on_poll, **kwargs)


@dataclass(frozen=True)
class InProcess:
    """Everything in this process (a training process: in a child process of its own)."""

    address: None = None

    def cluster(self, work) -> bool:
        return False

    def run(self, work, progress: Progress, on_workers=None):
        if isinstance(work, Apart):
            return work.fn(progress, Away())
        if heavy(work):
            return work.run_here(progress)
        return work(progress)

    def map_merge(self, job, models, dataset, progress: Count = None, here=None):
        if here is not None:
            return here()
        return run_local(job, models, dataset, progress)


@dataclass(frozen=True)
class RayCluster:
    """Heavy work on the Ray cluster at ``address`` (see the module docstring)."""

    address: str
    workers: int | None = None  # map_merge's workers (None: one per GPU, else one per CPU)

    def refuses(self, work) -> bool:
        """Whether ``work``'s model is one this cluster's workers could not load (it then runs
        in this process from the start)."""
        return (isinstance(work, (Corpus, Study))
                and not cluster.workers_may_load(work, self.address))

    def cluster(self, work) -> bool:
        return heavy(work) and not self.refuses(work)

    def run(self, work, progress: Progress, on_workers=None):
        if not self.cluster(work):
            return InProcess().run(work, progress)
        if isinstance(work, Apart):  # it connects, once its bar says where it goes
            return work.fn(progress, Away(self.address))
        return cluster.run_on_cluster(work, progress, self.address, on_workers,
                                      self.workers)

    def map_merge(self, job, models, dataset, progress: Count = None, here=None):
        return raydata.run_ray(job, dataset, self.address, progress=progress, workers=self.workers)


@lru_cache(maxsize=None)
def placement(address: str | None, workers: int | None = None) -> InProcess | RayCluster:
    """The placement of the server's settings (``DASHBOARD_RAY_ADDRESS``, checked: None when
    unset or refused), or of the CLI's ``--ray`` and ``--ray-workers``; one per value."""
    return RayCluster(address, workers) if address else InProcess()
