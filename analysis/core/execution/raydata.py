"""Corpus jobs (:mod:`analysis.core.execution.corpus`) on a Ray cluster through Ray Data.

The corpus (a ``datasets.Dataset``, with its row numbers added) becomes a Ray Dataset
(``ray.data.from_huggingface``) and ``map_batches`` maps every block (``job.map``) to a pickled
partial; the driver reads the partials as they come (the progress callback counts their
examples) and merges them (``job.merge``). Each worker loads the job's models once
(``job.load()``):

- on CPUs, blocks are Ray tasks of one CPU each, at most ``workers`` at a time. Ray keeps its
  worker processes between tasks, so a worker process pays Python's imports (torch and
  transformers: about 4 CPU-seconds) once for the driver's life, not once a job; each keeps the
  models of the run it last served (:func:`_warm`), for the run's later blocks, and drops them
  once no block of that run has come for :data:`WARM_S` seconds (nothing stays loaded between
  jobs; a run's models are never served to another run);
- on GPUs, a pool of actors (``num_gpus=1`` each), ended with the job: a process that has used
  a GPU keeps its CUDA context, which an idle worker would hold for good.

Ray is optional: nothing here imports it until a job runs on a cluster, and
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
import uuid
import warnings
from pathlib import Path

from analysis.core.errors import DataError, InputError
from analysis.core.models import ModelLoadError

ROW = "__row__"
ADDRESS = re.compile(r"^(ray://)?[A-Za-z0-9._-]+:\d{1,5}$")
NOT_INSTALLED = ("cannot be used: Ray is not installed (install it with "
                 "'pip install -r requirements-ray.txt').")
ROOT = Path(__file__).resolve().parents[3]


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
    """The job's models, loaded once; every block -> one pickled partial (a GPU actor, or the
    warm worker of a CPU task: :func:`_warm`)."""

    def __init__(self, job):
        self.job = job
        self.models = job.load()

    def __call__(self, table):
        # lazy: imported when used: datasets (heavy)
        import datasets

        rows = table.column(ROW).to_pylist()
        shard = datasets.Dataset.from_dict(table.drop_columns([ROW]).to_pydict())
        try:
            part = self.job.map(self.models, shard, rows)
        except SAID as exc:
            return _block(exc, -1)
        return _block(part, len(rows))


# The errors a block hands back as its result (n = -1) for the driver to raise as they are: Ray
# Data keeps only the text of an exception raised in a task (a UserCodeException).
SAID = (ModelLoadError, InputError, DataError)


def _block(obj, n: int):
    """One result row: ``obj`` pickled, and the examples it covers (-1: ``obj`` is an error
    of :data:`SAID`)."""
    # lazy: imported when used: pyarrow (heavy)
    import pyarrow as pa

    return pa.table({"partial": pa.array([pickle.dumps(obj)], type=pa.binary()),
                     "n": pa.array([n], type=pa.int64())})


# The CPU tasks' warm workers, in each Ray worker process: run key -> [_Worker, last use].
WARM_S = 30.0
_WARM: dict = {}
_WARM_LOCK = threading.Lock()


def _warm(job, run: str) -> _Worker:
    """The :class:`_Worker` of run ``run`` in this process, loaded by its first block here; a
    worker of another run is dropped first (one run's models at a time), and this one is
    dropped once no block of it has come for :data:`WARM_S` seconds (:func:`_cool`: one timer
    a run, not one a block)."""
    with _WARM_LOCK:
        for key in [k for k in _WARM if k != run]:
            del _WARM[key]
        entry = _WARM.get(run)
        if entry is None:
            gc.collect()  # the dropped run's models, before this run's are loaded
            entry = _WARM[run] = [_Worker(job), 0.0]  # stamped below, as every block
            _cool_in(run, WARM_S)
        entry[1] = time.monotonic()
    return entry[0]


def _cool_in(run: str, seconds: float) -> None:
    timer = threading.Timer(seconds, _cool, args=(run,))
    timer.daemon = True
    timer.start()


def _cool(run: str) -> None:
    """Drop run ``run``'s worker if no block of it has come for :data:`WARM_S` seconds, else
    look again when that many will have passed since its last block."""
    with _WARM_LOCK:
        entry = _WARM.get(run)
        if entry is None:
            return
        idle = time.monotonic() - entry[1]
        if idle < WARM_S:
            _cool_in(run, WARM_S - idle)
            return
        del _WARM[run]
    gc.collect()


def _map_block(table, job, run: str):
    """One CPU task: a block -> one pickled partial, with this process's warm worker.

    A task Ray cancels (the job stopped, or another block's error ended it) gets a
    KeyboardInterrupt wherever it is, often while its first block imports torch and
    transformers. An import cut short cannot be run again in the same process (torch
    registers its operators once: "Only a single TORCH_LIBRARY can be used to register the
    namespace prims", or "partially initialized module 'torch'"), and this process serves
    later jobs' tasks, so an interrupted task ends its process (:func:`_end_process`): Ray
    starts a fresh one, and the cancelled task's result was not wanted anyway."""
    try:
        try:
            worker = _warm(job, run)
        except SAID as exc:  # the models could not be loaded here
            return _block(exc, -1)
        return worker(table)
    except KeyboardInterrupt:
        _end_process()
        raise


def _end_process() -> None:
    """End this Ray worker process now (no clean-up that could import or wait)."""
    logging.getLogger(__name__).warning(
        "A cancelled task ended its Ray worker process (an import may have been cut short).")
    os._exit(1)


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
    """The :class:`analysis.core.models.ModelLoadError` behind ``exc``, or None: Ray wraps a task's
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
    On GPUs, ``min_workers``: an actor pool that Ray Data grows from this many workers up to
    ``workers`` as the cluster has room (the app, where jobs share the cluster); default: a
    fixed pool of ``workers``. (On CPUs the tasks take the cluster's CPUs as they are free, at
    most ``workers`` at a time.)"""
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
    """End the threads a Ray Data iteration leaves behind in this process (its block
    prefetcher) and wait for them. One still running when ``ray.shutdown()`` is called calls
    into the shut-down worker, and Ray then ends the whole process ("The core worker has
    already been shutdown ... The process will exit"): a CLI run with ``--ray`` that started
    its own cluster, or a server or test that shuts one down. A finished iteration stops its
    prefetcher when the iterator is collected; one cut short (a block's error, a lost worker)
    never does, since the thread holds its prefetcher (Ray 2.60), so it is stopped here."""
    gc.collect()  # the finished iterators' prefetchers stop when collected
    deadline = time.monotonic() + timeout_s
    for thread in threading.enumerate():
        if thread.name == "Prefetcher" and thread is not threading.current_thread():
            owner = getattr(getattr(thread, "_target", None), "__self__", None)
            if callable(getattr(owner, "stop", None)):
                owner.stop()
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
    blocks = ray.data.from_huggingface(_with_rows(dataset),
                                       override_num_blocks=math.ceil(n / block))
    if gpu:
        parts = blocks.map_batches(
            _Worker, fn_constructor_args=(job,), batch_size=block, batch_format="pyarrow",
            compute=_pool(n_workers, min_workers), num_gpus=1, num_cpus=0, max_restarts=0,
            max_task_retries=0)
    else:
        parts = blocks.map_batches(
            _map_block, fn_args=(job, uuid.uuid4().hex), batch_size=block,
            batch_format="pyarrow", concurrency=n_workers, num_cpus=1, max_retries=0)
    partials, done, error = [], 0, None
    rows = iter(parts.iter_rows())
    try:
        for row in rows:
            if int(row["n"]) < 0:
                error = pickle.loads(row["partial"])
                break
            partials.append(pickle.loads(row["partial"]))
            done += int(row["n"])
            if progress is not None:
                progress(done, n)
    except Exception as exc:
        error = _said(exc)
        if error is None:
            raise
    finally:
        rows.close()
    if error is not None:
        # the traceback keeps this frame: without the dataset and its iterator in it, the run's
        # prefetcher thread stops when settle() collects them (one left running ends the
        # process at ray.shutdown())
        del rows, parts, blocks
        raise error from None
    return job.merge(partials)


# ---------------------------------------------------------------------------------------------
# One task on the cluster (a fine-tune): the same shape as
# analysis.core.execution.child.run_in_child


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
