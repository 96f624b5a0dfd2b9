"""The Aspect heads page's plain reading (docs/METHODS.md section 8): which heads find the
aspect or its opinion words better than every baseline they can beat, by how much, or that none
does; and, when the model before fine-tuning was scored too, whether fine-tuning made the best
head better beyond noise. Builds on :func:`analysis.aspects.heads.verdict` (its headline and one
sentence per kind). Also the causal check in words (its change's interval against the random
heads' band, "within noise", and what it measures against the ranking and Head importance) and
the page's explanation for the shown checkpoint's task."""

from __future__ import annotations

from typing import Sequence
import math

import numpy as np

from analysis.aspects.heads import BASELINE_WORDS, KIND_WORDS, kind_verdict, verdict
from analysis.atlas.facts import head_name
from analysis.absa.tasks import LABELS, TASK_NAMES, auxiliary_sentence, is_binary

FOCUS = ("aspect", "aspect_sentiment")  # the kinds the reading leads with


def margin(v: dict) -> float:
    """How far the best head's interval lies above the strongest baseline: its lower 95% bound
    minus the baseline score (negative when it does not beat it)."""
    return float(v["best"]["ci_low"] - v["baseline_score"])


# the baselines as the simple rules they are (the verdict's "fixed-position baseline" etc.)
RULE_WORDS = {"random_head": "a head picked at random",
              "positional": "always looking a fixed number of words away",
              "frequent_word": "always looking at the most frequent word",
              "uniform": "spreading attention evenly over the words"}


def margin_sentence(kind: str, v: dict | None) -> str | None:
    """By how much the best head of ``kind`` beats (or misses) the strongest baseline, in
    words first (the baseline named as the simple rule it is), the numbers after."""
    if v is None:
        return None
    best = v["best"]
    rule = RULE_WORDS.get(v["baseline"], BASELINE_WORDS[v["baseline"]])
    where = f"head {head_name(best['layer'], best['head'])}"
    gap, low = best["score"] - v["baseline_score"], margin(v)
    if v["beats"]:
        ratio = (f", {best['score'] / v['baseline_score']:.1f} times as much"
                 if v["baseline_score"] > 0 else "")
        return (f"For {KIND_WORDS[kind]}, {where} does clearly better than the best simple rule "
                f"({rule}): it scores {gap:.3f} more{ratio}, and even at the low end of its 95% "
                f"interval it is {low:.3f} ahead.")
    if gap > 0:
        return (f"For {KIND_WORDS[kind]}, no head is clearly better than the best simple rule "
                f"({rule}): the best, {where}, scores {gap:.3f} more, but at the low end of its "
                f"95% interval it is {-low:.3f} behind, so the lead may be chance.")
    return (f"For {KIND_WORDS[kind]}, no head does better than the simple rule of {rule}: the "
            f"best, {where}, scores {-gap:.3f} less than the rule ({-low:.3f} less at the low "
            "end of its 95% interval).")


def change_sentence(kind: str, after: Sequence[dict], before: Sequence[dict]) -> str | None:
    """Whether fine-tuning raised the best score of ``kind`` (each model's own best head):
    raised or lowered only when the two best heads' 95% intervals do not overlap, else within
    noise; each score with its interval."""
    if not after or not before:
        return None
    a, b = after[0], before[0]
    if "ci_low" in a and "ci_low" in b:
        trend = ("raised" if a["ci_low"] > b["ci_high"] else
                 "lowered" if a["ci_high"] < b["ci_low"] else
                 "changed, within noise,")
    else:
        d = a["score"] - b["score"]
        trend = "raised" if d > 0.005 else "lowered" if d < -0.005 else "barely changed"

    def score(r):
        ci = (f", 95% interval {r['ci_low']:.3f}–{r['ci_high']:.3f}" if "ci_low" in r else "")
        return f"{r['score']:.3f} (head {r['layer'] + 1}-{r['head'] + 1}{ci})"

    overlap = " (the two 95% intervals overlap)" if trend.startswith("changed") else ""
    return (f"Fine-tuning {trend} the best score for {KIND_WORDS[kind]}: {score(b)} before, "
            f"{score(a)} after{overlap}.")


def reading(ranked: dict, base: dict, ranked_before: dict | None = None) -> list[str]:
    """The verdict's headline, then for the aspect and opinion-word kinds the margin over the
    strongest baseline, then the other kinds' verdicts, then the change from fine-tuning."""
    lines = verdict(ranked, base)
    out = [lines[0]]
    for kind in FOCUS:
        s = margin_sentence(kind, kind_verdict(ranked.get(kind) or [], base.get(kind) or {}))
        if s:
            out.append(s)
    out += [s for s in lines[1:] if not any(KIND_WORDS[k] + ":" in s or
                                            f"for {KIND_WORDS[k]}" in s for k in FOCUS)]
    if ranked_before:
        for kind in FOCUS:
            s = change_sentence(kind, ranked.get(kind) or [], ranked_before.get(kind) or [])
            if s:
                out.append(s)
    return out


TASK_FORMS = {"qa_m": "a question about one aspect", "nli_m": "the aspect's name alone",
              "qa_b": "a statement of one aspect's sentiment",
              "nli_b": "a short label-aspect phrase"}


def task_explanation(task: str, category: str = "service") -> str:
    """What the Aspect heads page's heads section shows, for the shown checkpoint's task (read
    from its card): the auxiliary sentence the review is paired with, as that task writes it."""
    aux = auxiliary_sentence(task, category, LABELS[0] if is_binary(task) else None)
    rows = (" (one pair per candidate label; the heads are scored on the pair of the label "
            f"'{LABELS[0]}', whose aspect word is the same)" if is_binary(task) else "")
    return (f"Each review is paired with {TASK_FORMS[task]} (this checkpoint's task, "
            f"{TASK_NAMES[task]}: for example \"{aux}\"){rows}. For every attention head we "
            "measure how much attention goes from the aspect word of that auxiliary sentence to "
            "the aspect's words in the review (or its opinion words, the other aspect's words, "
            "or [SEP] when the aspect is absent). A head counts only when it beats every "
            "baseline it can beat: a random head, always the same position, the most frequent "
            "word, even attention (a baseline that scores 1.000, the most any head can, is "
            "left out).")


def one_label_hint(metrics: dict, recipe_hint: str = "") -> str | None:
    """A plain hint when a classifier gives one label to every held-out pair (its metrics'
    ``top_label_share`` is 100): what that means and what to try; None otherwise."""
    share, label = metrics.get("top_label_share"), metrics.get("top_label")
    if share is None or not math.isfinite(share) or share < 100.0 or label is None:
        return None
    if label == "none":
        what = ("The model answers 'none' (the aspect is not mentioned) for every pair, so it "
                "finds no aspect and its aspect F1 is 0: it has not learned the task yet.")
    else:
        what = (f"The model gives every pair the same label, '{label}': it has not learned to "
                "tell the pairs apart yet.")
    return (f"{what} Train for more steps or with a larger learning rate, e.g. --epochs 10 "
            f"--lr 1e-4 --batch-size 16{recipe_hint}.")


CAUSAL_METRIC_WORDS = {"aspect_f1": "finding the aspects (F1)",
                       "acc_4way": "the 4-way sentiment accuracy"}


def _noise(result: dict, key: str) -> float:
    """The largest change of ``key`` that masking k random heads caused in any draw."""
    draws = result.get("delta_random_draws") or [result.get("delta_random_k", {})]
    vals = [abs(d[key]) for d in draws if key in d and d[key] == d[key]]
    return max(vals) if vals else 0.0


def _band(result: dict, key: str) -> tuple[float, float] | None:
    """[smallest, largest] change of ``key`` over the random draws (``random_band``, else from
    ``delta_random_draws``); None without draws."""
    band = (result.get("random_band") or {}).get(key)
    if band is None:
        vals = [d[key] for d in result.get("delta_random_draws") or [] if key in d]
        band = [min(vals), max(vals)] if vals else None
    return (float(band[0]), float(band[1])) if band is not None else None


def within_noise(result: dict, key: str) -> bool:
    """Whether the top-k change of ``key`` is within noise: its 95% interval (``ci_top_k``)
    covers 0 or overlaps the band of changes k random heads caused; without an interval (a
    result from before it was computed), whether the change is no larger than the largest
    random one."""
    top = result["delta_top_k"][key]
    ci = (result.get("ci_top_k") or {}).get(key)
    if ci is None or not all(np.isfinite(ci)):
        return abs(top) <= _noise(result, key) or abs(top) < 1e-9
    low, high = ci
    band = _band(result, key)
    overlaps = band is not None and low <= band[1] and high >= band[0]
    return bool(low <= 0 <= high or overlaps or abs(top) < 1e-9)


def _interval_words(result: dict, key: str) -> str:
    ci = (result.get("ci_top_k") or {}).get(key)
    if ci is None or not all(np.isfinite(ci)):
        return ""
    return f" (95% interval {ci[0]:+.1f} to {ci[1]:+.1f})"


def _random_words(result: dict, key: str) -> str:
    band, n = _band(result, key), len(result.get("delta_random_draws") or [])
    if band is None:
        return f"{result['delta_random_k'][key]:+.1f}"
    return f"{band[0]:+.1f} to {band[1]:+.1f} points in {n} draw{'s' if n != 1 else ''}"


def what_it_measures(k: int, kind_words: str) -> str:
    """How this check differs from the verdict above it and from the Head importance page,
    and why they can disagree."""
    return (f"This check asks whether the model's answers need these {k} heads together, "
            "which is not what the ranking above measures: a head beats the baselines by "
            f"where it looks (its attention on {kind_words}, against simple rules), and a head "
            "can look at the right words while other heads carry the same information, or be "
            "needed without looking there. The Head importance page switches off one head at "
            "a time and scores the whole task, so a head that matters here only together with "
            "the others can show no loss of its own there, and the reverse.")


def causal_reading(result: dict, kind_words: str) -> list[str]:
    """The causal check in words: did masking the top-k heads of a kind hurt the model more
    than masking k random heads, with the numbers after the words (the change's paired
    bootstrap 95% interval and the random draws' band): within noise when the interval covers
    0 or overlaps the random heads' band (:func:`within_noise`); whether the mask reached the
    predictions at all (how far the predicted probabilities moved); and what the check
    measures against the ranking and the Head importance page."""
    k, n = result["k"], result.get("n_pairs")
    pairs = f" of {n}" if n else ""
    lines = []
    masked = [head_name(*h) for h in result.get("masked_heads") or []]
    if masked:  # the heads by the Head atlas's names: the top-ranked ones it names too
        kind_words = f"{kind_words} ({', '.join(masked)})"
    moved, flipped = result.get("moved_top_k"), result.get("flipped_top_k")
    if moved is not None:
        if flipped == 0:
            lines.append(f"Switching off the {k} heads that best track {kind_words} changed no "
                         f"answer{pairs}: the model's confidence moved by "
                         f"{100 * moved:.1f} points on average, so the heads do reach the "
                         "prediction, but the model does without them.")
        else:
            lines.append(f"Switching off the {k} heads that best track {kind_words} changed "
                         f"{flipped} answer{'s' if flipped != 1 else ''}{pairs} (confidence "
                         f"moved by {100 * moved:.1f} points on average; {k} random heads "
                         f"changed {result.get('flipped_random_k', 0):.1f}).")
    for key, words in CAUSAL_METRIC_WORDS.items():
        top = result["delta_top_k"].get(key)
        if top is None or top != top:
            continue
        ci, rand = _interval_words(result, key), _random_words(result, key)
        if within_noise(result, key):
            if ci:
                lines.append(f"For {words}, the change is within noise: {top:+.1f} points with "
                             f"these heads off{ci}, against {rand} with {k} random heads.")
            else:
                lines.append(f"For {words}, the change is within noise: {top:+.1f} points "
                             f"with these heads off, against up to {_noise(result, key):.1f} "
                             "points with random ones.")
        elif top < 0:
            lines.append(f"For {words}, these heads matter: switching them off costs "
                         f"{-top:.1f} points{ci}, more than {k} random heads do ({rand}).")
        else:
            lines.append(f"For {words}, switching these heads off helps: {top:+.1f} points"
                         f"{ci}, more than {k} random heads ({rand}).")
    lines.append(what_it_measures(k, kind_words))
    return lines
