"""Independent pieces of one study run side by side on threads of this process, their results
taken in order (the study's probes' fits and trainings: analysis.representations.probes and
analysis.syntax.probes)."""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator


@contextlib.contextmanager
def side_by_side(fn: Callable, tasks: Iterable, workers: int) -> Iterator[Iterator]:
    """``fn`` over ``tasks`` on ``workers`` threads: yields the results in the tasks' order.
    Each task must be independent of the others (and deterministic, for the numbers to be those
    of one at a time). When the block ends early (the caller stopped: its progress raised),
    the tasks not started are dropped and those running are waited for."""
    pool = ThreadPoolExecutor(max_workers=max(1, int(workers)))
    try:
        yield pool.map(fn, tasks)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
