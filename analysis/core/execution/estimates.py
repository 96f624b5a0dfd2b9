"""How long work takes on this server, measured, never assumed: the rates of finished jobs, the
wait of a queued job, and both in plain words.

:class:`Rates` keeps, per kind of job (its public name, e.g. "No-op statistics") and per place
(this server or the Ray cluster), the seconds per unit of work (example, sentence) of the last
few jobs of that kind that finished here. A job's time left comes from its own progress once it
is :data:`MIN_FRACTION` done (the time since it started per fraction done, times the fraction
left), else from its kind's rate; a waiting job's time from its kind's rate. :func:`wait_s`
turns the times of the jobs ahead into the wait for a free slot of their lane. Nothing is a
constant: before a kind has been measured the words say so ("no estimate yet: first job of its
kind on this server").

The machine's load is taken into account (issue 48): a job measured while other work shared
the cores ran slower than it would alone, and one started now runs at the speed the load now
leaves it. Each rate is kept as its idle-machine equivalent (its seconds divided by
:func:`slowdown` of the load average when it finished) and given back at the load now
(:meth:`Rates.per_unit`); a change of speed smaller than :data:`LOAD_STEP` leaves the measured
rate as it is (the load average's noise), and the load is read at most every
:data:`LOAD_EVERY_S` seconds. Cluster jobs are not scaled (their cores are elsewhere).

No Streamlit here (the queue, :mod:`analysis.core.execution.queue`, uses it from any thread,
under its own lock).
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

from analysis.core.execution.threads import cores, machine_load

KEEP = 5             # finished jobs of a kind whose rates are averaged
MIN_FRACTION = 0.05  # a running job's own progress is trusted past this share of its work
SHOWN_AHEAD = 3      # jobs ahead named one by one; the rest are counted
UNKNOWN = "no estimate yet: first job of its kind on this server"
LOAD_STEP = 0.25  # a change of speed by less than this share leaves a rate as measured
LOAD_EVERY_S = 10.0  # the load average is read at most this often (it moves every 5 s)


def slowdown(load: float, n_cores: int | None = None) -> float:
    """How many times longer a job takes at load average ``load`` (runnable threads, the job's
    own counted) than on an idle machine: ``max(1, load / cores)``, a job's fair share of the
    cores when it could use all of them. A job the thread policy runs on one thread at high load
    (analysis.core.execution.threads.job_threads) is slower still, by up to the cores: the
    estimate is optimistic there (docs/METHODS.md section 20)."""
    return max(1.0, float(load) / int(n_cores or cores()))


class Rates:
    """Seconds per unit of work of the last :data:`KEEP` finished jobs, per (kind, cluster),
    kept at their idle-machine equivalent and given at the load now (module docstring);
    ``load``: the load average's source (tests plant one), ``n_cores`` the cores (default:
    this process's)."""

    def __init__(self, load: Callable[[], float] | None = None, n_cores: int | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self._read, self.n_cores, self.clock = load or (lambda: machine_load()), n_cores, clock
        self._last: tuple[float, float] | None = None  # (when read, load)
        self._seen: dict[tuple[str, bool], deque] = {}

    def load(self) -> float:
        """The load average, read at most every :data:`LOAD_EVERY_S` seconds."""
        now = self.clock()
        if self._last is None or now - self._last[0] >= LOAD_EVERY_S:
            self._last = (now, float(self._read()))
        return self._last[1]

    def record(self, kind: str, cluster: bool, seconds: float, size: int) -> None:
        """A finished job of ``kind`` took ``seconds`` for ``size`` units (0: the job is one
        unit), at the load now."""
        if seconds < 0:
            return
        per = float(seconds) / max(int(size), 1)
        slow = 1.0 if cluster else slowdown(self.load(), self.n_cores)
        self._seen.setdefault((kind, bool(cluster)), deque(maxlen=KEEP)).append((per, slow))

    def per_unit(self, kind: str, cluster: bool = False) -> float | None:
        """The mean seconds per unit of ``kind``'s finished jobs at the load now (None: none
        finished yet): each measured rate as it was, unless the load now makes a job slower or
        faster than at its measurement by :data:`LOAD_STEP` or more, then rescaled."""
        seen = self._seen.get((kind, bool(cluster)))
        if not seen:
            return None
        now = 1.0 if cluster else slowdown(self.load(), self.n_cores)
        rates = [per if abs(now / slow - 1.0) < LOAD_STEP else per / slow * now
                 for per, slow in seen]
        return sum(rates) / len(rates)


@dataclass(frozen=True)
class Ahead:
    """One job ahead of a waiting one, as other visitors may see it: its kind's public name, its
    size, whether it runs and how far it is (never its label, which may hold a visitor's file
    or model name)."""

    kind: str
    size: int = 0
    unit: str = ""
    running: bool = False
    fraction: float = 0.0

    @property
    def words(self) -> str:
        what = f"{self.kind} over {self.size} {self.unit}" if self.size and self.unit \
            else self.kind
        if not self.running:
            return f"{what} (waiting)"
        done = int(self.fraction * 100)
        return f"{what} (running, {done}% done)" if done > 0 else f"{what} (running)"


@dataclass(frozen=True)
class Outlook:
    """What a waiting job is told: the jobs ahead of it in its lane, the wait in seconds (None
    when a job ahead is of a kind not measured yet), and those kinds."""

    ahead: tuple[Ahead, ...] = ()
    wait_s: float | None = None
    unmeasured: tuple[str, ...] = ()


def time_left(elapsed_s: float, fraction: float, per_unit: float | None,
              size: int) -> float | None:
    """Seconds left of a running job: from its own progress (``elapsed_s`` per ``fraction``
    done) once :data:`MIN_FRACTION` is done, else its kind's rate times the work left; None
    when neither is known."""
    if fraction >= MIN_FRACTION and elapsed_s > 0:
        return elapsed_s / fraction * max(0.0, 1.0 - fraction)
    if per_unit is None:
        return None
    return per_unit * max(int(size), 1) * max(0.0, 1.0 - fraction)


def wait_s(running_left: list[float], waiting: list[float], slots: int) -> float:
    """Seconds until a slot of the lane is free for the next job: ``running_left`` the time left
    of each running job, ``waiting`` the time of each job queued ahead (in order), ``slots`` the
    lane's running slots; each job ahead takes the slot that frees first."""
    slots = max(1, int(slots))
    left = sorted(max(0.0, s) for s in running_left)
    if len(left) >= slots:  # a slot frees once all but slots - 1 of the extra ones are done
        free = left[len(left) - slots:]
    else:
        free = left + [0.0] * (slots - len(left))
    heapq.heapify(free)
    for seconds in waiting:
        heapq.heappush(free, heapq.heappop(free) + max(0.0, seconds))
    return free[0]


def duration_words(seconds: float) -> str:
    """'a few seconds', 'about 40 seconds', 'about 3 minutes', 'about 2 hours'."""
    if seconds < 10:
        return "a few seconds"
    if seconds < 60:
        return f"about {int(seconds / 10 + 0.5) * 10} seconds"
    if seconds < 90 * 60:
        minutes = max(1, int(seconds / 60 + 0.5))
        return f"about {minutes} minute{'s' if minutes != 1 else ''}"
    hours = int(seconds / 3600 + 0.5)
    return f"about {hours} hours"


def outlook_words(outlook: Outlook) -> str:
    """The jobs ahead and the wait, in two plain sentences."""
    if not outlook.ahead:
        return ""
    named = [a.words for a in outlook.ahead[:SHOWN_AHEAD]]
    more = len(outlook.ahead) - len(named)
    behind = "; ".join(named) + (f"; and {more} more" if more > 0 else "")
    if outlook.wait_s is not None:
        wait = (f"Estimated wait: {duration_words(outlook.wait_s)}, from the speed measured "
                "on this server.")
    else:
        kinds = ", ".join(outlook.unmeasured)
        wait = f"No estimate yet: first job of its kind on this server ({kinds})."
    return f"Waiting behind: {behind}. {wait}"


def rate_words(per_unit: float | None, unit: str) -> str:
    """A kind's measured speed for a page's help ('On this server: about 9 seconds per
    example, measured on its last runs.'), or that it was not measured yet."""
    if per_unit is None:
        return "How long it takes on this server is not measured yet: the first run will tell."
    if per_unit < 1:
        return f"On this server: about {1 / per_unit:.0f} {unit}s a second, measured on its " \
               "last runs."
    return f"On this server: {duration_words(per_unit)} per {unit}, measured on its last runs."


def expected_words(per_unit: float | None, size: int) -> str:
    """How long a job of ``size`` units should take here ('It took about 3 minutes here last
    time.'), or that it was not measured yet."""
    if per_unit is None:
        return "How long it takes on this server is not measured yet."
    return (f"On this server it takes {duration_words(per_unit * max(int(size), 1))}, "
            "measured on its last runs.")
