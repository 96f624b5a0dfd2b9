"""The plain reading of a predictions result: how often the classifier is right, where it fails
(the slices whose interval lies below the whole set's), its most frequent mistake, what
changed against a second model, and how often counterfactuals flip its answer."""

from __future__ import annotations

import math

import numpy as np

from analysis.predictions.metrics import ABSA_METRICS, METRIC_NAMES, higher_is_better
from analysis.predictions.slices import ALL

MIN_SLICE = 10  # examples: a smaller slice's bootstrap interval says little


def _pct(x: float) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.1f}%"


def _ci(m: dict) -> str:
    lo, hi = m.get("low"), m.get("high")
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    return f" (95% interval {lo:.1f} to {hi:.1f})"


def overall(result) -> str:
    m = result.metrics[ALL]
    right = int((result.predictions == result.gold).sum())
    line = (f"{result.model} answers {right} of {result.n} examples right: accuracy "
            f"{_pct(m['accuracy']['value'])}{_ci(m['accuracy'])}, macro F1 "
            f"{_pct(m['macro_f1']['value'])}{_ci(m['macro_f1'])}.")
    if result.absa:
        parts = [f"{METRIC_NAMES[k]} {_pct(m[k]['value'])}{_ci(m[k])}" for k in ABSA_METRICS]
        line += " The paper's metrics: " + ", ".join(parts) + "."
    return line


def _examples(n: int) -> str:
    return f"{n} example" + ("" if n == 1 else "s")


def weakest(result, metric: str = "accuracy") -> str:
    """The slices of at least :data:`MIN_SLICE` examples whose whole interval lies below the
    set's value, worst first; else the weakest such slice, said to be within noise."""
    whole = result.metrics[ALL][metric]["value"]
    cuts = [(k, v) for k, v in result.metrics.items() if k != ALL
            and v[metric]["n"] >= MIN_SLICE and math.isfinite(v[metric]["value"])]
    if not cuts or not math.isfinite(whole):
        return f"No slice holds {MIN_SLICE} examples or more, so none is compared."
    below = sorted([(v[metric]["value"], v["name"], v[metric]) for k, v in cuts
                    if math.isfinite(v[metric]["high"]) and v[metric]["high"] < whole])
    name = METRIC_NAMES[metric]
    if below:
        shown = "; ".join(f"{n} ({_pct(v)}, {_examples(m['n'])})" for v, n, m in below[:3])
        return (f"It fails most on: {shown}, each below the {_pct(whole)} {name} of the whole "
                "set beyond its interval.")
    v, n, m = min((v[metric]["value"], v["name"], v[metric]) for _, v in cuts)
    return (f"No slice falls below the whole set beyond its interval: the weakest, {n}, has "
            f"{name} {_pct(v)}{_ci(m)} against {_pct(whole)}.")


def mistake(result) -> str:
    conf = np.asarray(result.confusion)
    off = conf.copy()
    np.fill_diagonal(off, 0)
    errors = int(off.sum())
    if not errors:
        return "It makes no mistake on this data."
    g, p = np.unravel_index(int(off.argmax()), off.shape)
    return (f"Its most frequent mistake: answering {result.classes[p]} where the gold label is "
            f"{result.classes[g]} ({int(off[g, p])} times, {100 * off[g, p] / errors:.0f}% of "
            f"its {errors} mistakes).")


def comparison(result) -> list[str]:
    if result.changes is None:
        return []
    ch = result.changes[ALL]
    beyond, within = [], []
    for m, v in ch.items():
        if not math.isfinite(v["change"]):
            continue
        unit = "" if m == "loss" else " points"
        text = f"{METRIC_NAMES[m]} {v['change']:+.{3 if m == 'loss' else 1}f}{unit}"
        lo, hi = v["low"], v["high"]
        if math.isfinite(lo) and math.isfinite(hi) and (lo > 0 or hi < 0):
            better = (v["change"] > 0) == higher_is_better(m)
            beyond.append(f"{text} ({'better' if better else 'worse'})")
        else:
            within.append(text)
    flips = result.flips or []
    fixed = sum(f["change"] == "fixed" for f in flips)
    broken = sum(f["change"] == "broken" for f in flips)
    lines = [f"{result.compare} against {result.model}: " + (
        "beyond the paired interval: " + ", ".join(beyond) if beyond
        else "no metric changes beyond its paired interval") + (
        f"; within noise: {', '.join(within)}." if within else ".")]
    lines.append(f"They answer {len(flips)} of {result.n} examples differently: "
                 f"{result.compare} fixes {fixed} and breaks {broken} of them.")
    return lines


def flips(result) -> str | None:
    rob = result.robustness
    if not rob:
        return None
    parts = []
    for kind, v in rob.items():
        r = v["rates"][ALL]
        if r["n"]:
            parts.append(f"{v['name']} flips {_pct(r['value'])}{_ci(r)} of {r['n']} answers")
    if not parts:
        return "No counterfactual could be generated for these examples."
    return "Counterfactuals: " + "; ".join(parts) + "."


def reading(result) -> list[str]:
    """The reading's lines, in order."""
    lines = [overall(result), weakest(result), mistake(result)]
    lines += comparison(result)
    more = flips(result)
    return lines + ([more] if more else [])
