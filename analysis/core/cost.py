"""What a corpus job costs before it runs (issue 50): seconds on the server's cores, from the
model's shape and each example's tokens, measured once per study and kept here as constants
(bench/server/caps.py measures them; deploy/README.md, "Caps from measured cost").

The model: an encoder of L layers, hidden size D and feed-forward size F spends, per example of
n tokens, ``2 L n (4 D^2 + 2 D F)`` floating-point operations in its projections and
``4 L n^2 D`` in its attention (:func:`forward_flops`); a study's time per example is

    t(n) = (C + A * forward_flops(n) + B * L * H * n^2) / threads_speedup

with ``C`` (seconds per example: reading, tokenising, the per-example bookkeeping), ``A``
(seconds per floating-point operation: the forward and what the study adds per token) and
``B`` (seconds per attention cell: the maps a study reads, compares or keeps) fitted per study
to one-thread CPU seconds at 32 to 256 tokens (:data:`RATES`), and the speedup of two torch
threads over one (:data:`TWO_THREADS`). A job's estimate is the sum over its examples
(:func:`seconds`); :func:`check_job` refuses, in one line saying what fits, a job whose
estimate passes the host's budget (``max_job_seconds``: 120 s in demo mode, the longest a
visitor's job may take on the server's two idle cores), and :func:`admitted` is how many
examples of a length fit in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from analysis.core.errors import InputError

BUDGET_S = 120.0  # the longest a demo visitor's job may run on 2 idle cores (issue 50)


@dataclass(frozen=True)
class Shape:
    """What the cost depends on: layers, heads, hidden and feed-forward sizes."""

    layers: int
    heads: int
    hidden: int
    inner: int


@dataclass(frozen=True)
class Rate:
    """One study's measured constants (seconds on one thread): per example, per floating-point
    operation of the forward and per attention cell."""

    per_example: float
    per_flop: float
    per_cell: float


# Fitted to bench/server/caps.py's one-thread CPU seconds per example on the embedded model
# (6 x 12, D 384) at 32, 64, 128 and 256 tokens, 2026-12-07 08:52 UTC, the 2-core machine with
# no other work on it (load 0.8; deploy/README.md, "Caps from measured cost"): the fits are
# within 2.5% of every row. forward: 8.2, 13.9, 27.2, 69.6 ms; search: 8.6, 14.5, 27.8, 71.5
# ms; drift (the example checkpoint against the embedded model): 19.8, 33.4, 70.2, 180.6 ms.
# (The first fit, at load 13 to 17 on a shared machine, was 1.6-3x these: the estimates said
# twice what the worst admitted jobs then took on idle cores.)
RATES = {
    "forward": Rate(3.98e-3, 5.48e-12, 6.79e-9),
    "search": Rate(4.36e-3, 5.51e-12, 7.04e-9),
    "drift": Rate(9.24e-3, 13.2e-12, 19.4e-9),
}
# Two torch threads against one on two idle cores: measured 1.26-1.41 at 32 tokens and
# 1.69-1.91 at 256 (python -m bench.server.caps --threads 2 against --threads 1, the same day);
# 1.6 keeps every length's estimate within 1.3x.
TWO_THREADS = 1.6


def shape_of(loaded) -> Shape:
    """The shape of a loaded model (its config)."""
    config = getattr(loaded.model, "config", None)
    hidden = int(getattr(config, "hidden_size", 0) or getattr(config, "dim", 0) or 0)
    inner = int(getattr(config, "intermediate_size", 0) or getattr(config, "hidden_dim", 0)
                or 4 * hidden)
    return Shape(int(loaded.n_layers), int(loaded.n_heads), hidden, inner)


def forward_flops(shape: Shape, n: int) -> float:
    """Floating-point operations of one example of ``n`` tokens through the encoder."""
    L, D, F = shape.layers, shape.hidden, shape.inner
    return 2.0 * L * n * (4 * D * D + 2 * D * F) + 4.0 * L * n * n * D


def example_seconds(study: str, shape: Shape, n: int) -> float:
    """One example of ``n`` tokens, on one thread."""
    rate = RATES[study]
    return rate.per_example + rate.per_flop * forward_flops(shape, n) + \
        rate.per_cell * shape.layers * shape.heads * n * n


def seconds(study: str, shape: Shape, lengths: Iterable[int], threads: int = 2) -> float:
    """The estimated seconds of ``study`` over examples of ``lengths`` tokens on ``threads``
    idle cores (1 or 2)."""
    total = sum(example_seconds(study, shape, int(n)) for n in lengths)
    return total / (TWO_THREADS if threads >= 2 else 1.0)


def admitted(study: str, shape: Shape, n: int, cap: int, budget_s: float = BUDGET_S) -> int:
    """How many examples of ``n`` tokens fit in ``budget_s`` on two idle cores (at most
    ``cap``)."""
    one = seconds(study, shape, [n])
    return max(1, min(int(cap), int(budget_s // one) if one > 0 else int(cap)))


def lengths_of(tokenizer, texts: Sequence[str], pairs: Sequence[str | None] | None,
               max_length: int) -> list[int]:
    """Each example's tokens as the model reads it (specials included, cut at
    ``max_length``): what the job will cost, told by the tokenizer alone."""
    pairs = list(pairs) if pairs is not None else [None] * len(texts)
    out = []
    for text, pair in zip(texts, pairs):
        enc = tokenizer(text, pair, truncation=True, max_length=int(max_length))
        out.append(len(enc["input_ids"]))
    return out


def duration(seconds_: float) -> str:
    """'1 second', '12 seconds', 'about 40 seconds', 'about 3 minutes'."""
    if seconds_ < 20:
        n = max(1, round(seconds_))
        return f"{n} second{'s' if n != 1 else ''}"
    if seconds_ < 90:
        return f"about {int(seconds_ / 10 + 0.5) * 10} seconds"
    return f"about {max(1, round(seconds_ / 60))} minutes"


def check_job(study: str, shape: Shape, lengths: Sequence[int], budget_s: float | None,
              what: str, unit: str = "examples") -> float:
    """The estimated seconds of ``study`` over examples of ``lengths`` tokens on two idle
    cores; :class:`InputError` (one line: the estimate, the budget and what fits) when it
    passes ``budget_s`` (None: no budget). ``what`` names the work ("Drift over this
    corpus")."""
    estimate = seconds(study, shape, lengths)
    if budget_s is None or estimate <= budget_s:
        return estimate
    n, tokens = len(lengths), int(sum(lengths))
    typical = sorted(lengths)[len(lengths) // 2] if lengths else 1
    fits = int(budget_s // max(seconds(study, shape, [typical]), 1e-9))
    raise InputError(
        f"{what} would take {duration(estimate)} on this server ({n:,} {unit}, {tokens:,} "
        f"tokens); a job may take at most {duration(budget_s)} here. Use at most {fits:,} "
        f"{unit} of this length ({typical} tokens), or shorter ones.")


def estimate_words(estimate_s: float, n: int, tokens: int, unit: str = "examples") -> str:
    """The estimate a page shows before a job runs."""
    return (f"Estimated time: {duration(estimate_s)} for {n:,} {unit} ({tokens:,} tokens) on "
            "this server's two cores when idle; longer while other jobs run.")
