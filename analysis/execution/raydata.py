"""Corpus jobs (:mod:`analysis.execution.corpus`) on a Ray cluster through Ray Data.

The corpus (a ``datasets.Dataset``, with its row numbers added) becomes a Ray Dataset
(``ray.data.from_huggingface``); ``map_batches`` runs a pool of actors, each loading the job's
models once (``job.load()``, on a GPU with ``num_gpus=1`` where the cluster has GPUs, else on
one CPU) and mapping every block it is given (``job.map``) to a pickled partial; the driver
reads the partials as they come (the progress callback counts their examples) and merges them
(``job.merge``). Ray is optional: nothing here imports it until a job runs on a cluster, and
:func:`check_address` says so in one line when it is not installed.

Addresses: ``auto`` = the cluster already running on this machine (``ray start``, or
``RAY_ADDRESS``), else a local one for this run, bound to 127.0.0.1 and shut down at the end;
``HOST:PORT`` or ``ray://HOST:PORT`` = that cluster.
"""

from __future__ import annotations

import gc
import importlib.util
import logging
import math
import os
import pickle
import re
import threading
import time
import warnings
from pathlib import Path

from analysis.errors import DataError, InputError
from analysis.models import ModelLoadError

ROW = "__row__"
ADDRESS = re.compile(r"^(ray://)?[A-Za-z0-9._-]+:\d{1,5}$")
NOT_INSTALLED = ("cannot be used: Ray is not installed (install it with "
                 "'pip install -r requirements-ray.txt').")
ROOT = Path(__file__).resolve().parents[2]


class WorkerLost(DataError):
    """A Ray worker died mid-job (message is user-facing)."""


def check_address(text: str) -> str:
    """``auto`` or ``[ray://]HOST:PORT``, with Ray installed (raises InputError otherwise)."""
    text = (text or "").strip()
    if text != "auto" and not (ADDRESS.match(text) and 0 < int(text.rsplit(":", 1)[1]) < 65536):
        raise InputError(f"must be 'auto' or a Ray address HOST:PORT (or ray://HOST:PORT), "
                         f"not {text!r}")
    if importlib.util.find_spec("ray") is None:
        raise InputError(NOT_INSTALLED)
    return text


def _connect(address: str) -> bool:
    """Connect to ``address`` (see the module docstring); True when this call started a
    local cluster (which the caller then shuts down)."""
    # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
    import ray

    if ray.is_initialized():  # this process already holds a Ray session: use it
        return False
    env = {"env_vars": {"PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}}
    common = dict(include_dashboard=False, log_to_driver=False, runtime_env=env,
                  logging_level="ERROR")
    try:
        if address == "auto":
            try:
                ray.init(address="auto", **common)
                return False
            except ConnectionError:
                ray.init(_node_ip_address="127.0.0.1", **common)
                return True
        ray.init(address=address, **common)
        return False
    except ConnectionError as exc:
        raise InputError(f"Cannot reach the Ray cluster at {address}: {exc}".split("\n")[0])
    except Exception as exc:  # ray raises RuntimeError / ValueError for bad addresses
        raise InputError(f"Cannot connect to the Ray cluster at {address}: "
                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")


class _Worker:
    """One Ray actor: the job's models, loaded once; every block -> one pickled partial."""

    def __init__(self, job):
        self.job = job
        self.models = job.load()

    def __call__(self, table):
        # lazy: imported when used: datasets (heavy), pyarrow (heavy)
        import datasets
        import pyarrow as pa

        rows = table.column(ROW).to_pylist()
        shard = datasets.Dataset.from_dict(table.drop_columns([ROW]).to_pydict())
        part = self.job.map(self.models, shard, rows)
        return pa.table({"partial": pa.array([pickle.dumps(part)], type=pa.binary()),
                         "n": pa.array([len(rows)], type=pa.int64())})


def cluster_workers() -> tuple[int, bool]:
    """(workers, on GPUs): one worker per GPU where the cluster has GPUs, else one per CPU."""
    # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
    import ray

    res = ray.cluster_resources()
    gpus = int(res.get("GPU", 0))
    return (gpus, True) if gpus else (max(1, int(res.get("CPU", 1))), False)


def _chain(exc: BaseException | None, context: bool = False):
    """``exc`` and what caused it, in order (Ray keeps a worker's exception as ``cause``); with
    ``context`` also the exception being handled when it was raised."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or getattr(exc, "cause", None) or (exc.__context__ if context
                                                               else None)


def _lost(exc: BaseException) -> WorkerLost | None:
    """A clear error when ``exc`` (or what caused it) says a worker or node died."""
    # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
    import ray.exceptions as rx

    died = tuple(getattr(rx, n) for n in ("ActorDiedError", "ActorUnavailableError",
                                          "WorkerCrashedError", "NodeDiedError",
                                          "ObjectLostError", "OwnerDiedError") if hasattr(rx, n))
    for e in _chain(exc):
        if isinstance(e, died) or "died" in type(e).__name__.lower():
            return WorkerLost("A Ray worker died mid-job (killed, out of memory or its node "
                              "was lost); nothing was written. Rerun the command, with fewer "
                              "examples per worker (--batch-size) if memory ran out.")
    return None


def model_error(exc: BaseException | None):
    """The :class:`analysis.models.ModelLoadError` behind ``exc``, or None: Ray wraps a task's
    exception in its own, keeping it as ``cause``; a Ray Data actor whose model failed to load
    dies in its creation task, which Ray keeps only as text (``ActorDiedError.error_msg``)."""
    name = f"{ModelLoadError.__module__}.{ModelLoadError.__name__}: "
    for e in _chain(exc, context=True):
        if isinstance(e, ModelLoadError):
            return e
        if getattr(e, "actor_init_failed", False):  # ray.exceptions.ActorDiedError
            said = [line for line in str(getattr(e, "error_msg", "")).splitlines()
                    if line.startswith(name)]
            if said:
                return ModelLoadError(said[-1][len(name):])
    return None


def _user_error(exc: BaseException) -> BaseException | None:
    return next((e for e in _chain(exc) if isinstance(e, (InputError, DataError))), None)


def _said(exc: BaseException) -> BaseException | None:
    """What a failed job or task says, in this order: the loader's words (an actor that could
    not load the model also "died"), a lost worker, the job's own InputError / DataError; None
    for anything else (raised as it is)."""
    return model_error(exc) or _lost(exc) or _user_error(exc)


def run_ray(job, dataset, address: str | None = "auto", *, progress=None,
            workers: int | None = None, rows_per_block: int | None = None,
            min_workers: int | None = None):
    """``job`` over ``dataset`` on a Ray cluster (see the module docstring); ``address`` None
    uses the Ray session this process already started. Returns ``job.merge(partials)``.
    ``min_workers``: an actor pool that Ray Data grows from this many workers up to
    ``workers`` as the cluster has room (the app, where jobs share the cluster); default: a
    fixed pool of ``workers``."""
    # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
    import ray

    started = False if address is None and ray.is_initialized() else _connect(address or "auto")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _run(job, dataset, progress, workers, rows_per_block, min_workers)
    finally:
        settle()
        if started:
            ray.shutdown()


def settle(timeout_s: float = 5.0) -> None:
    """Wait for the threads a finished Ray Data iteration leaves behind in this process (its
    block prefetcher, stopped when the iterator is collected) to end. One still running when
    ``ray.shutdown()`` is called calls into the shut-down worker, and Ray then ends the whole
    process ("The core worker has already been shutdown ... The process will exit"): a CLI run
    with ``--ray`` that started its own cluster, or a server or test that shuts one down."""
    gc.collect()  # the finished iterators' prefetchers stop when collected
    deadline = time.monotonic() + timeout_s
    for thread in threading.enumerate():
        if thread.name == "Prefetcher" and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))


def _pool(n_workers: int, min_workers: int | None):
    # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
    import ray

    if min_workers is None:
        return ray.data.ActorPoolStrategy(size=n_workers)
    return ray.data.ActorPoolStrategy(min_size=max(1, min(int(min_workers), n_workers)),
                                      max_size=n_workers)


def connect(address: str) -> tuple[int, bool]:
    """Connect this process to ``address`` for as long as it lives (a server: the app's job
    queue; a local cluster started for ``auto`` stays up with it) and return
    :func:`cluster_workers`. A process already connected keeps its session."""
    _connect(address)
    return cluster_workers()


def _with_rows(dataset):
    """The corpus without an indices mapping, with its row numbers as a column."""
    # lazy: imported when used: datasets (heavy)
    import datasets

    quiet = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        return dataset.flatten_indices().add_column(ROW, list(range(len(dataset))))
    finally:
        if quiet:
            datasets.enable_progress_bars()


def _run(job, dataset, progress, workers, rows_per_block, min_workers=None):
    # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
    import ray

    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    n = len(dataset) if dataset is not None else 0
    if not n:
        return job.merge([job.map(job.load(), dataset, [])])
    n_workers, gpu = cluster_workers()
    n_workers = max(1, min(int(workers or n_workers), n))
    block = int(rows_per_block or max(1, min(256, math.ceil(n / (4 * n_workers)))))
    parts = ray.data.from_huggingface(
        _with_rows(dataset), override_num_blocks=math.ceil(n / block)).map_batches(
        _Worker, fn_constructor_args=(job,), batch_size=block, batch_format="pyarrow",
        compute=_pool(n_workers, min_workers), num_gpus=1 if gpu else 0,
        num_cpus=0 if gpu else 1, max_restarts=0, max_task_retries=0)
    partials, done = [], 0
    try:
        for row in parts.iter_rows():
            partials.append(pickle.loads(row["partial"]))
            done += int(row["n"])
            if progress is not None:
                progress(done, n)
    except Exception as exc:
        said = _said(exc)
        if said is not None:
            raise said from None
        raise
    return job.merge(partials)


# ---------------------------------------------------------------------------------------------
# One task on the cluster (a fine-tune): the same shape as analysis.execution.child.run_in_child


def _task_main(queue, fn, args: tuple, kwargs: dict, send_as: str):
    def send(*message) -> None:
        queue.put(message)

    return fn(*args, **{send_as: send}, **kwargs)


def task_resources() -> dict:
    """What one heavy task asks for: a GPU where the cluster has one, else every CPU of its
    largest node (torch's threads follow the task's CPUs)."""
    # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
    import ray

    if ray.cluster_resources().get("GPU", 0) >= 1:
        return {"num_gpus": 1, "num_cpus": 1}
    cpus = [n["Resources"].get("CPU", 1) for n in ray.nodes() if n.get("Alive")]
    return {"num_cpus": max(1, int(max(cpus, default=1)))}


def _drain(queue, on_message) -> None:
    n = queue.qsize()
    if n and on_message is not None:
        for message in queue.get_nowait_batch(n):
            on_message(*message)


def run_task(fn, *args, address: str | None = None, on_message=None, on_poll=None,
             poll_s: float = 0.2, send_as: str = "send", **kwargs):
    """``fn(*args, send=send, **kwargs)`` as one Ray task (:func:`task_resources`) on the
    cluster at ``address`` (None: the session this process holds); each ``send(*message)``
    reaches ``on_message(*message)`` here, ``on_poll()`` is called every ``poll_s`` seconds, and
    whatever either raises cancels the task. Returns what ``fn`` returns; its InputError,
    DataError or ModelLoadError is raised again as it was, a lost worker as
    :class:`WorkerLost`. ``fn`` must be importable on the workers (a module-level function)."""
    # lazy: imported when used: Ray (optional: requirements-ray.txt; heavy)
    import ray
    from ray.util.queue import Queue

    started = False if address is None and ray.is_initialized() else _connect(address or "auto")
    queue, ref = Queue(), None
    try:
        task = ray.remote(_task_main).options(max_retries=0, **task_resources())
        ref = task.remote(queue, fn, args, kwargs, send_as)
        while True:
            ready, _ = ray.wait([ref], timeout=poll_s)
            _drain(queue, on_message)
            if ready:
                try:
                    return ray.get(ref)
                except Exception as exc:
                    said = _said(exc)
                    if said is not None:
                        raise said from None
                    raise
                finally:
                    ref = None
            if on_poll is not None:
                on_poll()
    finally:
        if ref is not None:
            ray.cancel(ref, force=True)
        queue.shutdown()
        if started:
            ray.shutdown()
