"""The server-wide job queue itself (no Streamlit: :mod:`ui.common.jobs` puts it on the page):
tickets in lanes, each lane with running slots of its own, FIFO within a lane, the per-visitor
cap across all lanes, and what a waiting ticket is told about the jobs ahead of it.

Lanes, so that no kind of work waits behind another it has nothing to do with:

- ``corpus`` (:data:`CORPUS`, ``queue_slots`` slots): a visitor's heavy work over many inputs
  (corpus statistics, fine-tuning, drift, head discovery, probes, faithfulness).
- ``short`` (:data:`SHORT`, :data:`SHORT_SLOTS`): a visitor's work on one input (one text's
  attributions, one input's t-SNE / UMAP of every layer, loading one uploaded checkpoint),
  bounded by the token and upload caps: it never waits behind a corpus job, only behind other
  short ones (seconds).
- ``background`` (:data:`BACKGROUND`, :data:`BACKGROUND_SLOTS`): work no visitor waits for (the
  example checkpoint's build, Head importance's first-visit job); it never takes a visitor's
  slot, and runs at the lowest priority (``analysis.core.execution.worker.BACKGROUND_NICE``).
- ``cluster`` (:data:`CLUSTER`, ``cluster_slots``: the Ray cluster's workers): jobs whose worker
  thread only waits on the cluster (``DASHBOARD_RAY_ADDRESS``).

Memory: a training process (a visitor's fine-tune, the example's build; about 0.5 GB each,
deploy/README.md) joins with ``exclusive=TRAINING`` and does not start while one of that group
runs in another lane, so the background lane adds no second training process to what
``queue_slots`` allows; a ticket held up so lets the next one of its lane pass, so a visitor's
corpus job still never waits behind the build (a fine-tune waiting for the build is told so).

No job holds its lane for long (issue 50): a running ticket that has held its slot for
:data:`QUANTUM_S` seconds gives it up at its job's next progress step when another ticket of its
lane waits (:meth:`JobQueue.checkpoint`, called by the worker): it goes back to the end of its
lane, paused where it was (its thread blocked, its state kept), and resumes in turn. So a
first visitor's small job waits at most a quantum and a step behind a stranger's corpus, and
long jobs of one lane take turns. Memory: a paused job keeps what it holds (its sums, at most
one batch), so a lane holds at most :data:`MAX_PAUSED` paused jobs besides its running ones: a
running job yields to a newcomer only while fewer are paused, and to a paused one always
(round robin); a training process (its own child process, 0.5 GB) and a cluster ticket (its
work is on the cluster) never pause.

Every ticket also carries its kind of work's public name (``kind``, e.g. "No-op statistics"),
its size and unit ("300 examples"); the queue times each running ticket and records the rate of
each one that finishes (:class:`analysis.core.execution.estimates.Rates`), and
:meth:`JobQueue.outlook` tells a waiting ticket the jobs ahead of it in its lane and the wait
estimated from those measured rates (:mod:`analysis.core.execution.estimates`). Other visitors see
only the kind, never the label (which may name a visitor's file or model).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from analysis.core.errors import DataError, InputError
from analysis.core.execution.estimates import MIN_FRACTION, Ahead, Outlook, Rates, time_left, wait_s

EXPIRE_S = 30.0  # a waiting ticket not checked for this long is dropped
CORPUS, SHORT, BACKGROUND, CLUSTER = "corpus", "short", "background", "cluster"
LANES = (CORPUS, SHORT, BACKGROUND, CLUSTER)
SHORT_SLOTS = 1       # one input's work: bounded and short, so one at a time beside the corpus
BACKGROUND_SLOTS = 1  # the example's build and the first-visit jobs, one at a time
TRAINING = "training"  # the exclusive group of a training child process (about 0.5 GB each)
QUANTUM_S = 5.0  # a running job yields its slot after this long when its lane has a waiting one
MAX_PAUSED = 1   # jobs a lane keeps paused (each holds its state) besides its running ones


class JobLimit(InputError, DataError):
    """A visitor already holds as many queued or running jobs as the server allows."""


class JobCancelled(BaseException):
    """Raised inside a job's ``progress`` when its visitor left or restarted the page (a
    BaseException, so that no ``except Exception`` in the work swallows it)."""


@dataclass(eq=False)
class Ticket:
    label: str
    key: str
    owner: threading.Thread
    visitors: tuple = ()
    seen: float = field(default_factory=time.monotonic)
    running: bool = False
    lane: str = CORPUS
    kind: str = ""      # the public name of its kind of work (shown to others; its rates)
    size: int = 0       # units of work (0: the job is one unit)
    unit: str = ""      # "examples", "sentences"
    exclusive: str = ""  # a group (TRAINING) of which one ticket runs at a time across lanes
    started: float | None = None  # when it first got its slot (the queue's clock)
    stopping: bool = False  # its visitor's run stopped or restarted: it ends at its next step
    fraction: float = 0.0         # its progress, set by the job's progress callback
    paused: bool = False          # it ran, gave its slot up at a step and waits to resume
    slice_start: float | None = None  # when its current turn with the slot began
    active_s: float = 0.0         # seconds it held a slot in its turns before the current one
    # its own estimate of the seconds left, where the work knows better than its progress since
    # it got its slot (the example's build: the speed of its training steps, which its pages
    # say too); None: from its progress and its kind's measured rate
    estimate: Callable[[], float | None] | None = None

    @property
    def cluster(self) -> bool:
        """Whether it runs on the Ray cluster (its own slots)."""
        return self.lane == CLUSTER


class JobQueue:
    """FIFO of tickets per lane under one condition variable; ``slots`` running slots for the
    corpus lane, ``short_slots``, ``background_slots`` and ``cluster_slots`` for the others.
    ``clock``: the time source of the measurements (``time.monotonic``; tests plant one)."""

    def __init__(self, slots: int = 1, expire_s: float = EXPIRE_S, cluster_slots: int = 1,
                 short_slots: int = SHORT_SLOTS, background_slots: int = BACKGROUND_SLOTS,
                 clock: Callable[[], float] = time.monotonic, quantum_s: float = QUANTUM_S,
                 max_paused: int = MAX_PAUSED):
        self.quantum_s, self.max_paused = float(quantum_s), int(max_paused)
        self.slots = int(slots)
        self.cluster_slots = int(cluster_slots)
        self.short_slots, self.background_slots = int(short_slots), int(background_slots)
        self.expire_s = float(expire_s)
        self.clock = clock
        self.rates = Rates()
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []
        self._running: list[Ticket] = []

    def lane_slots(self, lane: str) -> int:
        return {CORPUS: self.slots, SHORT: self.short_slots, BACKGROUND: self.background_slots,
                CLUSTER: self.cluster_slots}[lane]

    def join(self, label: str, key: str, visitors: tuple = (), limit: int | None = None,
             cluster: bool = False, *, lane: str = CORPUS, kind: str = "", size: int = 0,
             unit: str = "", exclusive: str = "",
             estimate: Callable[[], float | None] | None = None) -> Ticket:
        """A new ticket at the end of its lane (``cluster``: the cluster lane, whatever
        ``lane`` says), owned by the calling thread; :class:`JobLimit` when one of ``visitors``
        already holds ``limit`` tickets (waiting or running, in any lane). ``kind`` (default:
        the label), ``size`` and ``unit`` describe the work to other visitors and key its
        measured rate. ``exclusive``: its group (:data:`TRAINING`); it does not start while a
        ticket of that group runs in another lane (a cluster ticket has none: nothing runs
        here). ``estimate``: the job's own seconds left once it runs (module docstring of
        :class:`Ticket`), where it knows better than its progress."""
        lane = CLUSTER if cluster else lane
        exclusive = "" if lane == CLUSTER else exclusive
        if lane not in LANES:
            raise ValueError(f"unknown lane {lane!r}")
        ticket = Ticket(label, key, threading.current_thread(), tuple(visitors), lane=lane,
                        kind=kind or label, size=max(int(size or 0), 0), unit=unit,
                        exclusive=exclusive, estimate=estimate)
        with self._cond:
            self._expire()
            if limit is not None:
                for v in ticket.visitors:
                    # a job whose run was stopped or restarted (a rerun, a changed widget)
                    # still holds its slot until its next progress step, but no longer counts:
                    # the rerun asking for it again is not refused
                    held = sum(v in t.visitors and not t.stopping
                               for t in self._waiting + self._running)
                    if held >= limit:
                        raise JobLimit(
                            f"You already have {held} job(s) waiting or running; this server "
                            f"runs at most {limit} per visitor at a time. {label} can start "
                            "when yours has finished (other tabs count too).")
            self._waiting.append(ticket)
            self._cond.notify_all()
        return ticket

    def _expire(self) -> None:
        now = time.monotonic()
        dead = [t for t in self._waiting
                if not t.owner.is_alive() or now - t.seen > self.expire_s]
        dead += [t for t in self._running if not t.owner.is_alive()]
        for t in dead:
            (self._running if t.running else self._waiting).remove(t)
        if dead:
            self._cond.notify_all()

    def _blockers(self, ticket: Ticket) -> list[Ticket]:
        """Running tickets of another lane in the ticket's ``exclusive`` group (a training
        process: one at a time across lanes, for memory)."""
        if not ticket.exclusive:
            return []
        return [t for t in self._running
                if t.exclusive == ticket.exclusive and t.lane != ticket.lane]

    def _before(self, ticket: Ticket) -> tuple[list[Ticket], list[Ticket]]:
        """(running, waiting before it) of the ticket's lane, and the running tickets of its
        exclusive group: nothing else holds it up (nor does a ticket before it that is held up
        by its own group: it lets the ticket pass)."""
        running = [t for t in self._running if t.lane == ticket.lane] + self._blockers(ticket)
        waiting = [t for t in self._waiting[:self._waiting.index(ticket)]
                   if t.lane == ticket.lane and not self._blockers(t)]
        return running, waiting

    def _ahead(self, ticket: Ticket) -> int:
        running, waiting = self._before(ticket)
        return len(running) + len(waiting)

    def _may_run(self, ticket: Ticket) -> bool:
        """A free slot in its lane, first of its lane among the tickets not held up by their
        exclusive group (a held-up one lets the next pass), and nothing of its group running
        elsewhere."""
        if self._blockers(ticket):
            return False
        running = sum(t.lane == ticket.lane for t in self._running)
        first = next(t for t in self._waiting
                     if t.lane == ticket.lane and not self._blockers(t))
        return running < self.lane_slots(ticket.lane) and first is ticket

    def set_cluster_slots(self, n: int) -> None:
        """Running slots for cluster tickets (the cluster's workers, once known)."""
        with self._cond:
            self.cluster_slots = max(1, int(n))
            self._cond.notify_all()

    def wait_turn(self, ticket: Ticket, timeout: float = 0.0) -> int | None:
        """Check in, then wait up to ``timeout`` s for the ticket's turn. Returns None once the
        ticket holds a running slot, else the number of jobs ahead of it in its lane (running
        ones included). A ticket that expired meanwhile goes back to the end of its lane."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                ticket.seen = time.monotonic()
                self._expire()
                if ticket.running:
                    return None
                if ticket not in self._waiting:
                    self._waiting.append(ticket)
                if self._may_run(ticket):
                    self._waiting.remove(ticket)
                    now = self.clock()
                    ticket.running, ticket.paused, ticket.slice_start = True, False, now
                    if ticket.started is None:
                        ticket.started = now
                    self._running.append(ticket)
                    self._cond.notify_all()
                    return None
                left = deadline - time.monotonic()
                if left <= 0:
                    return self._ahead(ticket)
                self._cond.wait(left)

    # -- taking turns ------------------------------------------------------------------------

    def _active(self, t: Ticket) -> float:
        """Seconds ``t`` has held a slot in all its turns (paused time left out)."""
        now = self.clock()
        return t.active_s + (now - t.slice_start if t.running and t.slice_start is not None
                             else 0.0)

    def _next_of(self, lane: str) -> Ticket | None:
        """The waiting ticket of ``lane`` that takes the next free slot."""
        return next((t for t in self._waiting if t.lane == lane and not self._blockers(t)), None)

    def _may_pause(self, ticket: Ticket) -> bool:
        return ticket.lane != CLUSTER and not ticket.exclusive and not ticket.stopping

    def _yields_to(self, ticket: Ticket) -> Ticket | None:
        """The waiting ticket a running ``ticket`` gives its slot to now, or None: it has held
        the slot for a quantum, it may pause, and the next of its lane is a paused ticket or
        fewer than ``max_paused`` of its lane are paused."""
        if not ticket.running or not self._may_pause(ticket) or ticket.slice_start is None \
                or self.clock() - ticket.slice_start < self.quantum_s:
            return None
        nxt = self._next_of(ticket.lane)
        if nxt is None:
            return None
        paused = sum(t.paused for t in self._waiting if t.lane == ticket.lane)
        return nxt if nxt.paused or paused < self.max_paused else None

    def checkpoint(self, ticket: Ticket) -> bool:
        """Called by the running ticket's worker at each step of its job: True when it gave its
        slot up (it is paused at the end of its lane and must :meth:`wait_turn` again before
        its next step), False to go on."""
        with self._cond:
            if self._yields_to(ticket) is None:
                return False
            ticket.active_s = self._active(ticket)
            self._running.remove(ticket)
            ticket.running, ticket.paused, ticket.slice_start = False, True, None
            ticket.seen = time.monotonic()
            self._waiting.append(ticket)
            self._cond.notify_all()
            return True

    def hand_over(self, ticket: Ticket, thread: threading.Thread) -> None:
        """The running ticket is now owned by ``thread`` (the job's worker)."""
        with self._cond:
            ticket.owner = thread

    def stop(self, ticket: Ticket) -> None:
        """``ticket``'s run was stopped or restarted: its worker ends at its next progress step
        (then leaves); until then it keeps its slot but no longer counts against its visitors'
        cap."""
        with self._cond:
            ticket.stopping = True

    def leave(self, ticket: Ticket, finished: bool = False) -> None:
        """Give the ticket back (waiting or running); safe to call twice. ``finished``: the job
        ran to its end, and its time counts towards its kind's rate."""
        with self._cond:
            if finished and ticket in self._running and ticket.started is not None:
                self.rates.record(ticket.kind, ticket.cluster, self._active(ticket),
                                  ticket.size)
            for queue in (self._waiting, self._running):
                if ticket in queue:
                    queue.remove(ticket)
            ticket.running = False
            self._cond.notify_all()

    def state(self) -> dict:
        """Labels of the running jobs and the number waiting (expired tickets dropped)."""
        with self._cond:
            self._expire()
            return {"running": [t.label for t in self._running], "waiting": len(self._waiting)}

    # -- measurements -----------------------------------------------------------------------

    def _per_unit(self, kind: str, cluster: bool) -> float | None:
        """``kind``'s seconds per unit: its finished jobs', else a running one's progress."""
        measured = self.rates.per_unit(kind, cluster)
        if measured is not None:
            return measured
        for t in self._running:
            active = self._active(t)
            if (t.kind, t.cluster) == (kind, cluster) and t.started is not None \
                    and t.fraction >= MIN_FRACTION and active > 0:
                return active / (t.fraction * max(t.size, 1))
        return None

    def measured(self, kind: str, cluster: bool = False) -> float | None:
        """Seconds per unit of ``kind`` measured on this server (None: not yet)."""
        with self._cond:
            return self._per_unit(kind, cluster)

    def left_s(self, ticket: Ticket) -> float | None:
        """Seconds left of a running ticket's job (None: not running, or not measured yet)."""
        with self._cond:
            return self._left(ticket) if ticket.running else None

    def _left(self, t: Ticket) -> float | None:
        if t.estimate is not None:
            try:
                return t.estimate()
            except Exception:  # noqa: BLE001 - an estimate that fails is no estimate
                return None
        elapsed = self._active(t) if t.started is not None else 0.0
        return time_left(elapsed, t.fraction, self._per_unit(t.kind, t.cluster), t.size)

    def _turn_in(self, ticket: Ticket) -> float | None:
        """Seconds until a running job of the waiting ``ticket``'s lane yields its slot to it
        (it is the next of its lane and may be yielded to), or None."""
        if self._next_of(ticket.lane) is not ticket or not math.isfinite(self.quantum_s):
            return None
        paused = sum(t.paused for t in self._waiting if t.lane == ticket.lane)
        if not (ticket.paused or paused < self.max_paused):
            return None
        turns = [max(0.0, self.quantum_s - (self.clock() - t.slice_start))
                 for t in self._running if t.lane == ticket.lane and self._may_pause(t)
                 and t.slice_start is not None]
        return min(turns) if turns else None

    def outlook(self, ticket: Ticket) -> Outlook:
        """The jobs ahead of a waiting ticket in its lane and the estimated wait (empty for a
        running ticket or one no longer queued)."""
        with self._cond:
            if ticket.running or ticket not in self._waiting:
                return Outlook()
            running, waiting = self._before(ticket)
            ahead = tuple(Ahead(t.kind, t.size, t.unit, t.running, t.fraction)
                          for t in running + waiting)
            left = [self._left(t) for t in running]
            rates = [self._per_unit(t.kind, t.cluster) for t in waiting]
            times = [r * max(t.size, 1) if r is not None else None
                     for r, t in zip(rates, waiting)]
            # a running job of its lane yields to it within this (none held up by its group)
            turn = None if self._blockers(ticket) else self._turn_in(ticket)
            unknown = [t.kind for t, s in zip(running + waiting, left + times) if s is None]
            if unknown:
                if turn is not None:
                    return Outlook(ahead, turn)
                return Outlook(ahead, None, tuple(dict.fromkeys(unknown)))
            mine = [s for t, s in zip(running, left) if t.lane == ticket.lane]
            held = [s for t, s in zip(running, left) if t.lane != ticket.lane]  # its group's
            wait = max([wait_s(mine, times, self.lane_slots(ticket.lane))] + held)
            return Outlook(ahead, wait if turn is None else min(wait, turn))
