"""The progress line of a job that counts items: ``done / total`` and the rate so far."""

from __future__ import annotations

import time
from typing import Callable


def rate_step(progress: Callable[[float, str], None], unit: str = "examples", where: str = "",
              digits: int = 1) -> Callable[[int, int], None]:
    """A ``(done, total)`` callback for a library function's progress that reports to the job's
    ``progress(fraction, text)`` as "done / total UNIT[WHERE], RATE UNIT/s", the rate counted
    from this call."""
    t0 = time.perf_counter()

    def step(done: int, total: int) -> None:
        rate = done / max(time.perf_counter() - t0, 1e-9)
        progress(done / max(total, 1),
                 f"{done} / {total} {unit}{where}, {rate:.{digits}f} {unit}/s")

    return step
