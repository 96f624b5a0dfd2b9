"""The commands' progress bar: tqdm on stderr when it is a terminal, nothing otherwise; for the
library's ``(done, total)`` callbacks (:func:`progress_bar`) or a study's ``progress(fraction,
text)`` (:func:`study_bar`, what ``STUDY.run`` is told)."""

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


@contextmanager
def study_bar():
    """Yield ``progress(fraction, text)`` for :meth:`analysis.core.study.StudyDef.run` (a bar in
    percent with the study's own words beside it), or None when stderr is not a terminal; the
    bar closes on exit."""
    if not sys.stderr.isatty():
        yield None
        return
    bar = tqdm(total=100, unit="%", file=sys.stderr)

    def progress(fraction: float, text: str = "") -> None:
        bar.set_postfix_str(text, refresh=False)
        bar.update(max(0, min(100, round(100 * fraction))) - bar.n)

    try:
        yield progress
    finally:
        bar.close()
