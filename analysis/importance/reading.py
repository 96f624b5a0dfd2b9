"""The plain reading of a head importance result (docs/METHODS.md section 12): how many heads
can go without loss, which ones hurt most, what the layers do, how far pruning goes within one
point, whether the gradient estimate agrees, and whether the aspect and [SEP] heads matter."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from analysis.importance.scoring import LOSS, METRIC_LABELS, higher_is_better

METHOD_WORDS = {"uniform": "its attention spread evenly over the words (Kovaleva et al.)",
                "mask": "its output set to zero (Michel et al.)"}


def name(layer: int, head: int) -> str:
    """``4-3``: layer 4, head 3, counted from 1 as on every page."""
    return f"{layer + 1}-{head + 1}"


def _fmt(metric: str, x: float) -> str:
    return f"{x:+.3f}" if metric == LOSS else f"{x:+.1f} points"


def beyond_interval(result, metric: str | None = None) -> tuple[list, list]:
    """(heads whose removal hurts, heads whose removal helps) beyond the 95% interval, as
    (layer, head, change, low, high), the largest effect first."""
    m = metric or result.metric
    ch, ci = result.heads[m], result.heads_ci[m]
    sign = 1 if higher_is_better(m) else -1
    hurt, helped = [], []
    for (l, h), c in np.ndenumerate(ch):
        low, high = ci[l, h]
        row = (l, h, float(c), float(low), float(high))
        worse, better = (high < 0, low > 0) if sign > 0 else (low > 0, high < 0)
        if worse:
            hurt.append(row)
        elif better:
            helped.append(row)
    hurt.sort(key=lambda r: sign * r[2])
    helped.sort(key=lambda r: -sign * r[2])
    return hurt, helped


def _strength(rho: float) -> str:
    a = abs(rho)
    return ("strongly" if a >= 0.7 else "moderately" if a >= 0.4 else "weakly" if a >= 0.2
            else "hardly")


def reading(result, aspect: Sequence[tuple[int, int]] = (),
            sep: Sequence[tuple[int, int]] = ()) -> list[str]:
    """Plain sentences computed from ``result`` (an :class:`ImportanceResult`); ``aspect`` and
    ``sep`` are the heads the other studies name (0-indexed)."""
    m = result.metric
    label = METRIC_LABELS.get(m, m)
    L, H = result.shape
    drops = result.drops(m)
    sign = 1 if higher_is_better(m) else -1
    out = [f"Each of the {L * H} heads was switched off in turn, {METHOD_WORDS[result.method]},"
           f" on {result.description}; the intact model's {label} is "
           f"{result.intact[m]:.3f}." if m == LOSS else
           f"Each of the {L * H} heads was switched off in turn, {METHOD_WORDS[result.method]},"
           f" on {result.description}; the intact model's {label} is {result.intact[m]:.1f}."]
    free = int(np.sum(drops <= 0))
    hurt, helped = beyond_interval(result, m)
    out.append(f"{free} of the {L * H} heads can go one at a time without any loss of {label}; "
               f"{len(hurt)} hurt beyond the 95% interval when removed and {len(helped)} "
               "help (the model does better without them).")
    worst = np.argsort(-drops, axis=None)[:3]
    worst = [np.unravel_index(i, drops.shape) for i in worst if drops.flat[i] > 0]
    if worst:
        out.append("Removing these hurts most: " + ", ".join(
            f"head {name(l, h)} ({_fmt(m, result.heads[m][l, h])})" for l, h in worst) + ".")
    lay = result.layers[m] * sign
    k = int(np.argmin(lay))
    out.append(f"Switching off a whole layer: layer {k + 1} costs most "
               f"({_fmt(m, result.layers[m][k])}); " + (
                   f"{int(np.sum(lay >= 0))} of {L} layers can go without loss." if
                   np.any(lay >= 0) else "every layer is needed."))
    pr = result.pruning
    if pr is not None:
        p = pr["prunable"]
        tol = "1 point" if m != LOSS else f"{pr['tolerance']} in loss"
        out.append(f"Pruning in the order of the measured drops, {p['by_importance']:.0%} of the "
                   f"heads can go before the model loses more than {tol} of {label} "
                   f"(gradient order {p['by_gradient']:.0%}, random orders "
                   f"{p['random_mean']:.0%} on average).")
    rho = result.spearman.get(m, float("nan"))
    if np.isfinite(rho):
        trust = "a usable shortcut" if rho >= 0.4 else "not a reliable shortcut"
        out.append(f"Gradient importance {_strength(rho)} agrees with the measured drops "
                   f"(Spearman {rho:.2f}): on this model it is {trust}.")
    else:
        out.append("The measured drops are all equal, so they cannot be compared with "
                   "gradient importance; try the mean loss as the metric.")
    top = {(int(l), int(h)) for l, h in (np.unravel_index(i, drops.shape)
                                         for i in np.argsort(-drops, axis=None)[:10])
           if drops[l, h] > 0}
    for heads, what in ((aspect, "aspect heads (Aspect heads page)"),
                        (sep, "[SEP] heads (No-op statistics)")):
        if not heads:
            continue
        among = [x for x in heads if x in top]
        shown = ", ".join(f"{name(l, h)} ({_fmt(m, result.heads[m][l, h])})" for l, h in heads[:5])
        out.append(f"The {what} {shown}: " + (
            f"{len(among)} of them are among the 10 heads whose removal hurts most."
            if among else "none of them is among the 10 heads whose removal hurts most."))
    return out
