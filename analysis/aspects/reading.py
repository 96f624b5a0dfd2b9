"""The Aspect heads page's plain reading (docs/METHODS.md section 8): which heads find the
aspect or its opinion words better than every baseline, by how much, or that none does; and,
when the model before fine-tuning was scored too, whether fine-tuning made the best head better.
Builds on :func:`analysis.aspects.heads.verdict` (its headline and one sentence per kind)."""

from __future__ import annotations

from typing import Sequence

from analysis.aspects.heads import BASELINE_WORDS, KIND_WORDS, kind_verdict, verdict

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
    where = f"head {best['layer'] + 1}-{best['head'] + 1}"
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
    """Whether fine-tuning raised the best score of ``kind`` (each model's own best head)."""
    if not after or not before:
        return None
    a, b = after[0], before[0]
    d = a["score"] - b["score"]
    trend = "raised" if d > 0.005 else "lowered" if d < -0.005 else "barely changed"
    return (f"Fine-tuning {trend} the best score for {KIND_WORDS[kind]}: {b['score']:.3f} "
            f"(head {b['layer'] + 1}-{b['head'] + 1}) before, {a['score']:.3f} (head "
            f"{a['layer'] + 1}-{a['head'] + 1}) after.")


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


def one_label_hint(metrics: dict, recipe_hint: str = "") -> str | None:
    """A plain hint when a classifier gives one label to every held-out pair (its metrics'
    ``top_label_share`` is 100): what that means and what to try; None otherwise."""
    import math

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


def causal_reading(result: dict, kind_words: str) -> list[str]:
    """The causal check in words: did masking the top-k heads of a kind hurt the model more
    than masking k random heads, with the numbers after the words; a change no larger than
    what random heads caused is said to be within noise; and whether the mask reached the
    predictions at all (how far the predicted probabilities moved)."""
    k, n = result["k"], result.get("n_pairs")
    pairs = f" of {n}" if n else ""
    lines = []
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
        rand = result["delta_random_k"].get(key)
        if top is None or top != top:
            continue
        noise = _noise(result, key)
        if abs(top) <= noise or abs(top) < 1e-9:
            lines.append(f"For {words}, the change is within noise: {top:+.1f} points with "
                         f"these heads off, against up to {noise:.1f} points with random "
                         "ones.")
        elif top < 0:
            lines.append(f"For {words}, these heads matter: switching them off costs "
                         f"{-top:.1f} points, more than random heads do ({rand:+.1f}).")
        else:
            lines.append(f"For {words}, switching these heads off helps: {top:+.1f} points, "
                         f"more than random heads ({rand:+.1f}).")
    return lines
