"""analysis.core.execution.raydata's CPU tasks without Ray: the worker process's warm worker loads
a run's models once for all of that run's blocks, drops them for another run's and once the
run has been idle for WARM_S seconds; a block whose models cannot load, or whose input or data
is refused, comes back as its result (n = -1) carrying the error itself, which Ray Data would
otherwise keep only as text."""

from __future__ import annotations

import pickle
import time

import pyarrow as pa
import pytest

from analysis.core.errors import DataError
from analysis.core.execution import raydata
from analysis.core.execution.raydata import ROW, _map_block, _warm
from analysis.core.models import ModelLoadError


class CountingJob:
    """Loads a number (counting the loads in ``loads``); a shard -> the sum of its texts'
    lengths plus that number; a text "bad" is a DataError."""

    loads: list = []

    def __init__(self, base: int, fail: bool = False):
        self.base, self.fail = base, fail

    def load(self):
        if self.fail:
            raise ModelLoadError(f"The folder /nowhere/{self.base} does not exist.")
        CountingJob.loads.append(self.base)
        return self.base

    def map(self, models, shard, rows, progress=None):
        if "bad" in shard["text"]:
            raise DataError(f"row {rows[shard['text'].index('bad')]} is bad")
        return models + sum(len(t) for t in shard["text"])


def block(texts, first=0):
    return pa.table({"text": texts, ROW: list(range(first, first + len(texts)))})


def result(table):
    return pickle.loads(table.column("partial")[0].as_py()), table.column("n")[0].as_py()


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(raydata, "_WARM", {})
    CountingJob.loads = []


def test_one_load_per_run_and_process_for_all_its_blocks():
    job = CountingJob(100)
    assert result(_map_block(block(["ab", "cde"]), job, "run-1")) == (105, 2)
    assert result(_map_block(block(["f"], 2), job, "run-1")) == (101, 1)
    assert CountingJob.loads == [100]


def test_another_run_drops_the_first_runs_models_even_with_an_equal_job():
    first = _warm(CountingJob(100), "run-1")
    second = _warm(CountingJob(100), "run-2")  # equal job, another run: loaded again
    assert second is not first and list(raydata._WARM) == ["run-2"]
    assert CountingJob.loads == [100, 100]


def test_an_idle_runs_models_are_dropped_after_warm_s(monkeypatch):
    monkeypatch.setattr(raydata, "WARM_S", 0.2)
    _warm(CountingJob(1), "run-1")
    time.sleep(0.1)
    _warm(CountingJob(1), "run-1")  # a later block: the first timer no longer drops it
    time.sleep(0.15)
    assert list(raydata._WARM) == ["run-1"]
    deadline = time.monotonic() + 5
    while raydata._WARM and time.monotonic() < deadline:
        time.sleep(0.02)
    assert raydata._WARM == {} and CountingJob.loads == [1]


def test_a_model_that_cannot_load_comes_back_as_the_loaders_error():
    err, n = result(_map_block(block(["ab"]), CountingJob(7, fail=True), "run-1"))
    assert n == -1 and isinstance(err, ModelLoadError)
    assert str(err) == "The folder /nowhere/7 does not exist."
    assert raydata._WARM == {}  # nothing kept: the next block tries again


def test_a_refused_block_comes_back_as_its_data_error():
    err, n = result(_map_block(block(["ok", "bad"], 10), CountingJob(0), "run-1"))
    assert n == -1 and type(err) is DataError and str(err) == "row 11 is bad"


def test_a_task_cancelled_while_loading_ends_its_process(monkeypatch):
    """Ray cancels a task with a KeyboardInterrupt; one that lands in the first block's
    imports would leave torch half-registered in a process that serves later jobs (every later
    import fails), so the task ends its process instead of going on."""
    ended = []

    class Interrupted(CountingJob):
        def load(self):
            raise KeyboardInterrupt

    monkeypatch.setattr(raydata, "_end_process", lambda: ended.append(True))
    with pytest.raises(KeyboardInterrupt):
        _map_block(block(["ab"]), Interrupted(3), "run-cancelled")
    assert ended == [True]
    # a block refused as data is answered as before, and the process goes on
    err, n = result(_map_block(block(["ab"]), CountingJob(7, fail=True), "run-2"))
    assert n == -1 and isinstance(err, ModelLoadError) and ended == [True]
