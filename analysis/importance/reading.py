"""The plain reading of a head importance result (docs/METHODS.md section 12): how many heads
can go one at a time with no loss beyond noise, which ones hurt most, what the layers do, how
many can go together within one point, whether the gradient estimate agrees, what each way of
switching a head off removes (and where the two disagree), and whether the aspect and [SEP]
heads matter; every change with its 95% interval, "within noise" when it covers 0."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from analysis.atlas.facts import head_name, head_statement, importance_facts
from analysis.importance.links import ASPECT_DATA, SEP_DATA
from analysis.importance.scoring import LOSS, METRIC_LABELS, higher_is_better
from analysis.importance.pruning import n_removed

METHOD_WORDS = {"uniform": "its attention spread evenly over the words (Kovaleva et al.)",
                "mask": "its output set to zero (Michel et al.)"}


def name(layer: int, head: int) -> str:
    """``4-3``: layer 4, head 3, counted from 1 as on every page (the Head atlas's naming)."""
    return head_name(layer, head)


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


def free_heads(result, metric: str | None = None) -> int:
    """Heads that can go one at a time with no loss beyond noise: those whose removal does not
    hurt beyond the change's 95% interval (every head but :func:`beyond_interval`'s hurt ones).
    The page's "Heads free to go one at a time"."""
    L, H = result.shape
    return L * H - len(beyond_interval(result, metric)[0])


def removable_together(result) -> tuple[float, int] | None:
    """(fraction, heads) of the pruning curve in the order of the measured changes before the
    model loses more than the tolerance (1 point): the page's "Removable together within 1
    point"; None without pruning curves."""
    if result.pruning is None:
        return None
    L, H = result.shape
    f = float(result.pruning["prunable"]["by_importance"])
    return f, n_removed(f, L * H)


def _in_noise(low: float, high: float) -> bool:
    return bool(low <= 0 <= high)


def _with_ci(metric: str, x: float, low: float, high: float) -> str:
    """``-8.0 points, 95% -9.0 to -7.0`` (``: within noise`` when the interval covers 0)."""
    if metric == LOSS:
        body = f"{x:+.3f}, 95% {low:+.3f} to {high:+.3f}"
    else:
        body = f"{x:+.1f} points, 95% {low:+.1f} to {high:+.1f}"
    return body + (": within noise" if _in_noise(low, high) else "")


def _head(result, m: str, l: int, h: int) -> str:
    """``head 4-3 (attention spread evenly: -8.0 points of aspect F1, 95% ...)``: the Head
    atlas's statement of the head from this result (docs/METHODS.md section 18)."""
    imp = importance_facts(result.method, m, METRIC_LABELS.get(m, m), higher_is_better(m),
                           result.heads[m], result.heads_ci[m], l, h)
    return head_statement(l, h, {"importance": {result.method: imp}})


# what each way of switching a head off removes, and the question it answers
REMOVES = {"uniform": "keeps what the head passes on but spreads its attention evenly, so it "
                      "still writes a blend of every word, a signal the later layers never saw "
                      "in training",
           "mask": "sets what the head writes to zero, as if it were pruned away"}
ANSWERS = {"uniform": "whether the model needs where the head looks",
           "mask": "whether the model needs the head at all (whether it can be pruned)"}
OTHER = {"uniform": "mask", "mask": "uniform"}
SHORT = {"uniform": "its attention spread evenly", "mask": "its output zeroed"}


def disagreements(result, other, metric: str | None = None, most: int = 3) -> list[tuple]:
    """Heads the two methods read differently: beyond the 95% interval (hurts) by one and not by
    the other, as (layer, head, change here, change there), the largest gap first."""
    m = metric or result.metric
    if other is None or other.method == result.method or m not in other.heads \
            or other.shape != result.shape:
        return []
    here = {(l, h) for l, h, *_ in beyond_interval(result, m)[0]}
    there = {(l, h) for l, h, *_ in beyond_interval(other, m)[0]}
    rows = [(l, h, float(result.heads[m][l, h]), float(other.heads[m][l, h]))
            for l, h in here ^ there]
    rows.sort(key=lambda r: (-abs(r[2] - r[3]), r[0], r[1]))
    return rows[:most]


def methods_sentence(result, other=None, metric: str | None = None) -> str:
    """What this page's way of switching a head off removes against the other way, which
    question each answers, and, when the other method's result is at hand, the heads the two
    read differently and why."""
    m = metric or result.metric
    this, that = result.method, OTHER[result.method]
    text = (f"Here a head is switched off with {SHORT[this]}: that {REMOVES[this]}; with "
            f"{SHORT[that]} instead, the other method {REMOVES[that]}. The two answer different "
            f"questions: zeroing the output asks {ANSWERS['mask']}, spreading the attention "
            f"asks {ANSWERS['uniform']}; so one head can cost a lot by one and nothing by the "
            "other.")
    rows = disagreements(result, other, m)
    if rows:
        parts = []
        for l, h, a, b in rows:
            u, z = (a, b) if this == "uniform" else (b, a)
            why = ("the model copes without the head, not with a head that looks everywhere"
                   if abs(u) > abs(z) else
                   "what the head writes matters, not where it looks")
            parts.append(f"head {name(l, h)}: {_fmt(m, u)} with {SHORT['uniform']}, "
                         f"{_fmt(m, z)} with {SHORT['mask']} ({why})")
        text += " They disagree on " + "; ".join(parts) + "."
    return text


MARK_WORDS = {
    "aspect": (f"top-ranked aspect heads (Aspect heads page, {ASPECT_DATA})",
               ("That page picks heads by where they look (attention from the aspect word to the "
               "aspect's words, against simple baselines), and its causal check switches its "
               "top heads off together; here each head is switched off alone and the whole task "
               "is scored, so a head can look at the aspect and cost nothing alone when other "
               "heads carry the same information.")),
    "sep": (f"[SEP] heads ({SEP_DATA})",
            ("That page picks heads by how much attention they put on [SEP], a pattern rather "
            "than a use; here each head is switched off alone and the whole task is scored, "
            "so a head that parks its attention on [SEP] may or may not be needed.")),
}


def trained_sentence(trained, worst: Sequence[tuple[int, int]] = ()) -> str:
    """What the classifier's fine-tune trained (``trained``: an
    :class:`analysis.core.cards.Trained`)
    and what that means for the costliest heads ``worst`` (0-indexed, costliest first): a head
    in a frozen layer was made needed by pre-training, not by this fine-tune."""
    if not trained.known:
        return ("What this classifier's fine-tune trained is unknown (it has no fine-tuning "
                "card), so whether a head's cost comes from pre-training or from fine-tuning "
                "cannot be told here.")
    if not trained.frozen:
        return (f"Its card says every layer was fine-tuned ({trained.words()}), so any head's "
                "cost may come from pre-training or from fine-tuning alike.")
    text = (f"Only {trained.trained_words()} fine-tuned: {trained.frozen_words()} were "
            "frozen by the recipe and are the base model's")
    frozen = [(l, h) for l, h in worst if trained.is_frozen(int(l) + 1)]
    if frozen:
        l, h = frozen[0]
        first = "The costliest head" if (l, h) == tuple(worst[0]) else "Head"
        return (text + f". {first} {name(int(l), int(h))} sits in layer {int(l) + 1}, which the "
                "fine-tune never changed: the classifier on top learned to rely on it, but "
                "the head itself is as pre-training left it, so this is not a finding about "
                "what fine-tuning made of the model.")
    return text + ", so a head there that costs much was made by pre-training, not by this " \
        "fine-tune."


def reading(result, aspect: Sequence[tuple[int, int]] = (),
            sep: Sequence[tuple[int, int]] = (), other=None, trained=None) -> list[str]:
    """Plain sentences computed from ``result`` (an :class:`ImportanceResult`); ``aspect`` and
    ``sep`` are the heads the other studies name (0-indexed); ``other``: the same study with the
    other way of switching heads off, when at hand (the heads the two read differently);
    ``trained``: what the classifier's fine-tune trained (:func:`analysis.core.cards.trained_of`),
    said after the costliest heads."""
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
    free = free_heads(result, m)
    hurt, helped = beyond_interval(result, m)
    out.append(f"One at a time, {free} of the {L * H} heads can go with no loss beyond noise "
               f"(the change's 95% interval reaches zero; {int(np.sum(drops <= 0))} show no "
               f"loss at all): {len(hurt)} hurt beyond the 95% interval when removed and "
               f"{len(helped)} help (the model does better without them).")
    worst = np.argsort(-drops, axis=None)[:3]
    worst = [np.unravel_index(i, drops.shape) for i in worst if drops.flat[i] > 0]
    if worst:
        out.append("Removing these hurts most: " + "; ".join(
            _head(result, m, l, h) for l, h in worst) + ".")
    if trained is not None:
        out.append(trained_sentence(trained, [(int(l), int(h)) for l, h in worst]))
    lay = result.layers[m] * sign
    k = int(np.argmin(lay))
    lci = result.layers_ci[m]
    free_layers = int(sum(1 for i in range(L) if lay[i] >= 0 or _in_noise(*lci[i])))
    if not np.isfinite(lci).all():  # a result read back from its JSON: no layer intervals
        out.append(f"Switching off a whole layer: layer {k + 1} costs most "
                   f"({_fmt(m, float(result.layers[m][k]))}).")
    else:
        out.append(f"Switching off a whole layer: layer {k + 1} costs most "
                   f"({_with_ci(m, float(result.layers[m][k]), *lci[k])}); " + (
                       f"{free_layers} of {L} layers can go with no loss beyond noise." if
                       free_layers else "every layer is needed."))
    together = removable_together(result)
    if together is not None:
        pr = result.pruning
        p = pr["prunable"]
        f, n = together
        tol = "1 point" if m != LOSS else f"{pr['tolerance']} in loss"
        line = (f"Removed together, in the order of the measured changes, {f:.0%} of the heads "
                f"({n} of {L * H}) can go before the model loses more than {tol} of {label} "
                f"(gradient order {p['by_gradient']:.0%}, random orders "
                f"{p['random_mean']:.0%} on average)" + (
                    f"; the curve is measured in steps of {pr['fractions'][1]:.0%} of the "
                    "heads." if len(pr["fractions"]) > 1 else "."))
        if f >= pr["fractions"][-1]:
            line += (f" The curve never lost more than {tol} up to its last step "
                     f"({f:.0%}).")
        elif n < free:
            line += (f" That is fewer than the {free} heads that can go one at a time: each "
                     "alone costs little or nothing, but their losses add up, and heads that "
                     "stand in for each other can go alone but not together.")
        out.append(line)
    rho = result.spearman.get(m, float("nan"))
    if np.isfinite(rho):
        trust = "a usable shortcut" if rho >= 0.4 else "not a reliable shortcut"
        out.append(f"Gradient importance {_strength(rho)} agrees with the measured drops "
                   f"(Spearman {rho:.2f}): on this model it is {trust}.")
    else:
        out.append("The measured drops are all equal, so they cannot be compared with "
                   "gradient importance; try the mean loss as the metric.")
    out.append(methods_sentence(result, other, m))
    hurt_set = {(int(l), int(h)) for l, h, *_ in hurt}
    for heads, key in ((aspect, "aspect"), (sep, "sep")):
        if not heads:
            continue
        what, why = MARK_WORDS[key]
        among = [x for x in heads if x in hurt_set]
        shown = "; ".join(_head(result, m, l, h) for l, h in heads[:5])
        out.append(f"The {what} {shown}: " + (
            f"{len(among)} of them {'hurts' if len(among) == 1 else 'hurt'} beyond the 95% "
            "interval when switched off alone."
            if among else "none of them hurts beyond the 95% interval when switched off "
            "alone.") + f" {why}")
    return out
