"""Plain readings of the attribution study, computed from its numbers, in everyday words (the
page shows them and the CLI writes the corpus one into its JSON)."""

from __future__ import annotations

import math

import numpy as np
from analysis.attribution.run import agreement

# What each method is, said plainly (no internal names).
PLAIN = {
    "attention": "the raw attention weights",
    "norm": "attention weighted by the size of what each word passes on",
    "norm_resln": "attention with the size of what is passed on, the word's own copy and the "
                  "normalisation counted",
    "alti": "tracing each word's share of every layer's output (ALTI)",
    "value_zeroing": "blanking out one word at a time inside each layer (value zeroing)",
    "grad_input": "how sensitive the answer is to each word (gradient times input)",
    "integrated_gradients": "how much each word moves the answer from a blank input "
                            "(integrated gradients)",
}


def _quote(words) -> str:
    words = [f"\u201c{w}\u201d" for w in words]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def top_words(result, method: str, k: int = 3) -> list[str]:
    """The ``k`` distinct words (specials left out) with the highest summed token scores."""
    scores = np.asarray(result.methods[method].input, dtype=np.float64)
    totals: dict[int, float] = {}
    for i, w in enumerate(result.word_ids):
        if not result.special[i]:
            totals[w] = totals.get(w, 0.0) + float(scores[i])
    out: list[str] = []
    for w in sorted(totals, key=lambda w: -totals[w]):  # a word repeated is named once
        if result.words[w] not in out:
            out.append(result.words[w])
    return out[:k]


def input_reading(result) -> str:
    """A few sentences on one input: the prediction, the words the most faithful-looking
    methods point at, and whether raw attention agrees with them."""
    parts = []
    if result.prediction is not None:
        label = result.prediction["label"]
        p = result.prediction["probabilities"][label]
        parts.append(f"The model answers \u201c{label}\u201d, {100 * p:.0f}% sure.")
    names = list(result.methods)
    if not names:
        return " ".join(parts)
    ref = next((m for m in ("integrated_gradients", "alti", "value_zeroing") if m in names),
               names[0])
    parts.append(f"By {PLAIN[ref]}, the words that matter most here are "
                 f"{_quote(top_words(result, ref))}.")
    if "attention" in names and ref != "attention" and len(names) > 1:
        order, rho = agreement(result)
        r = rho[order.index("attention"), order.index(ref)]
        if math.isfinite(r):
            how = ("agree" if r >= 0.6 else "partly agree" if r >= 0.3 else "hardly agree")
            words = _quote(top_words(result, "attention"))
            parts.append(f"The raw attention weights point at {words}; "
                         f"the two rankings {how} (rank correlation {r:.2f}).")
    return " ".join(parts)


FEW_EXAMPLES = 10  # below this, the reading says the comparison is not reliable


def _change(drop: float) -> str:
    """A confidence drop in words: "falls by 3.1 points", "rises by 0.4 points"."""
    return (f"falls by {100 * drop:.1f} points" if drop >= 0
            else f"rises by {-100 * drop:.1f} points")


def points(x: float) -> float:
    """A share of the predicted class's probability in points (the unit of the reading and the
    page's table): 0.284 -> 28.4."""
    return 100.0 * x


def _interval(s: dict) -> str:
    """``95% interval 25.0 to 35.0 points`` of a summary's mean (a fall in points; "of the
    fall", signed, when the mean is a rise)."""
    if s["mean"] >= 0:
        return f"95% interval {points(s['low']):.1f} to {points(s['high']):.1f} points"
    return f"95% interval of the fall {points(s['low']):+.1f} to {points(s['high']):+.1f} points"


def _overlap(a: dict, b: dict) -> bool:
    return not (a["low"] > b["high"] or a["high"] < b["low"])


def faithfulness_reading(f) -> str:
    """Which method this model's predictions follow most (the largest comprehensiveness: the
    most confidence lost when its top words are removed), with its 95% interval against the
    random choice's and "within noise" when the two overlap; whether raw attention beats a
    random choice; every fall in points (as in the page's table)."""
    if not f.methods:
        return ""
    comp = {m: v["comprehensiveness"]["mean"] for m, v in f.methods.items()}
    best = max(comp, key=lambda m: comp[m] if math.isfinite(comp[m]) else -math.inf)
    r = f.random["comprehensiveness"]
    b = f.methods[best]["comprehensiveness"]
    how = "dropped" if f.removal == "drop" else "masked"
    n = f"{f.n_examples} example{'s' if f.n_examples != 1 else ''}"
    text = (f"Over {n}, this model's predictions follow {PLAIN[best]} most: "
            f"with the words it ranks highest {how}, the model's confidence in its answer "
            f"{_change(comp[best])} on average ({_interval(b)}; a random choice of words: "
            f"{_change(r['mean'])}, {_interval(r)}).")
    if f.n_examples < FEW_EXAMPLES:
        text += (f" With only {f.n_examples} example{'s' if f.n_examples != 1 else ''} these "
                 f"averages are not reliable: use at least {FEW_EXAMPLES}.")
        return text + _loo(f)
    if _overlap(b, r):
        text += (" That is within noise of a random choice: the two intervals overlap.")
    if "attention" in f.methods:
        a = f.methods["attention"]["comprehensiveness"]
        if a["low"] > r["high"]:
            text += (f" Raw attention weights beat a random choice ({points(a['mean']):.1f} "
                     f"points, {_interval(a)}; the intervals do not overlap).")
        elif a["high"] < r["low"]:
            text += (f" Raw attention weights do worse than a random choice "
                     f"({points(a['mean']):.1f} points, {_interval(a)}).")
        else:
            text += (f" Raw attention weights are not clearly better than a random choice: "
                     f"within noise ({points(a['mean']):.1f} points, {_interval(a)}; the "
                     "intervals overlap).")
    return text + _loo(f)


def _loo(f) -> str:
    loo = {m: v["loo_spearman"] for m, v in f.methods.items()}
    finite = {m: v for m, v in loo.items() if math.isfinite(v["mean"])}
    if not finite:
        return ""
    m = max(finite, key=lambda k: finite[k]["mean"])
    s = finite[m]
    ci = (f", 95% interval {s['low']:.2f} to {s['high']:.2f}"
          if math.isfinite(s.get("low", math.nan)) and math.isfinite(s.get("high", math.nan))
          else "")
    return (f" Removing one word at a time agrees best with {PLAIN[m]} (rank correlation "
            f"{s['mean']:.2f}{ci}).")
