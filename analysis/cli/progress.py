"""The commands' progress bar: tqdm on stderr when it is a terminal, nothing otherwise."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def progress_bar(total: int, unit: str = "it"):
    """Yield ``update(done, total)`` for the library's ``progress=`` callbacks (the bar's total
    follows the callback's), or None when stderr is not a terminal; the bar closes on exit."""
    if not sys.stderr.isatty():
        yield None
        return
    bar = tqdm(total=total, unit=unit, file=sys.stderr)

    def update(done: int, new_total: int) -> None:
        if bar.total != new_total:
            bar.total = new_total
        bar.update(done - bar.n)

    try:
        yield update
    finally:
        bar.close()
