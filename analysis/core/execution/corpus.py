"""One map/merge shape for corpus jobs (docs/METHODS.md, "Shards merge exactly").

Every corpus study is a sum of per-example or per-batch sufficient statistics, so it splits
into

- ``job.load()``: the models the job needs, loaded once per process (the CLI's process, or
  each Ray worker);
- ``job.map(models, shard, rows, progress)``: one shard of the corpus (a ``datasets.Dataset``
  slice; ``rows`` its rows in the whole corpus) -> a *partial* (sums, counts and per-example
  rows; small, picklable, no attention map);
- ``job.merge(partials)``: the partials (any order, empty shards included) -> the study's
  result, equal to the whole-corpus computation (to float rounding for sums; exactly for
  counts).

:func:`run_local` is the in-process path (one shard: the whole corpus, so its numbers are
exactly today's); :func:`run_sharded` cuts the corpus at given boundaries (tests, and the
check that shards merge); :mod:`analysis.core.execution.raydata` runs the same job on a Ray cluster.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

Progress = Callable[[int, int], None]


class CorpusJob(Protocol):
    """A corpus study as map/merge (see the module docstring). A job object holds only
    plain parameters (model specs, batch size), so it pickles to a Ray worker."""

    def load(self) -> Any: ...

    def map(self, models: Any, shard, rows: Sequence[int],
            progress: Progress | None = None) -> Any: ...

    def merge(self, partials: Sequence[Any]) -> Any: ...


def run_local(job: CorpusJob, models, dataset, progress: Progress | None = None):
    """The whole corpus as one shard, in this process."""
    n = len(dataset) if dataset is not None else 0
    return job.merge([job.map(models, dataset, range(n), progress)])


def shard_bounds(n: int, n_shards: int) -> list[int]:
    """Boundaries cutting ``n`` rows into ``n_shards`` contiguous shards as even as can be."""
    n_shards = max(1, int(n_shards))
    return [round(k * n / n_shards) for k in range(n_shards + 1)]


def run_sharded(job: CorpusJob, models, dataset, bounds: Sequence[int]):
    """Map the shards ``dataset[bounds[k]:bounds[k+1]]`` (empty ones too) one by one and
    merge them; the partials are merged in reverse order, so nothing leans on the order."""
    partials = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        partials.append(job.map(models, rows_of(dataset, lo, hi), range(lo, hi)))
    return job.merge(partials[::-1])


def rows_of(dataset, lo: int, hi: int):
    """Rows ``lo:hi`` of a Dataset (an empty Dataset with the same columns when lo >= hi)."""
    return dataset.select(range(lo, hi)) if hi > lo else dataset.select([])


def add_arrays(total: dict, part: dict) -> dict:
    """``total[k] += part[k]`` for every key (a key missing from ``total`` is taken as is)."""
    for k, v in part.items():
        total[k] = total[k] + v if k in total else v
    return total
