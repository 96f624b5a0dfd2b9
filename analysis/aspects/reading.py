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


def margin_sentence(kind: str, v: dict | None) -> str | None:
    """By how much the best head of ``kind`` beats (or misses) the strongest baseline."""
    if v is None:
        return None
    best, b = v["best"], BASELINE_WORDS[v["baseline"]]
    where = f"head {best['layer'] + 1}-{best['head'] + 1}"
    gap = best["score"] - v["baseline_score"]
    if v["beats"]:
        ratio = (f", {best['score'] / v['baseline_score']:.1f} times its score"
                 if v["baseline_score"] > 0 else "")
        return (f"For {KIND_WORDS[kind]}, {where} is the clearest: {gap:+.3f} above the {b} "
                f"baseline{ratio}, and even its interval's lower end is {margin(v):+.3f} "
                "above it.")
    return (f"For {KIND_WORDS[kind]}, no head does better than every baseline: the best, "
            f"{where}, is {gap:+.3f} from the {b} baseline and its interval reaches down "
            f"{margin(v):+.3f} from it.")


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
