"""The Head atlas's rules and words (analysis.atlas.facts) on hand-made facts with known
answers: each role rule at its threshold, "mixed" and "none", the use rule, the statements the
other pages take from it, and the disagreements in words."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.atlas import facts as F


def _noop(**kw) -> dict:
    base = {"cls": 0.05, "sep": 0.1, "punct": 0.05, "self": 0.1, "prev": 0.1, "next": 0.1,
            "entropy": 1.0, "uniform_entropy": 2.0}
    return {**base, **kw}


def _imp(change, lo, hi, method="uniform") -> dict:
    return {"method": method, "metric": "aspect_f1", "label": "aspect F1", "higher": True,
            "change": change, "ci": [lo, hi]}


@pytest.mark.parametrize("noop, want", [
    (_noop(prev=0.6), ["positional (previous)"]),
    (_noop(prev=0.5), []),  # above the threshold, not at it (Clark: "over half")
    (_noop(next=0.55), ["positional (next)"]),
    (_noop(entropy=1.8), ["broad"]),  # 1.8 >= 0.9 * 2.0
    (_noop(entropy=1.79), []),
    (_noop(sep=0.7), ["[SEP] no-op"]),
    (_noop(cls=0.51, punct=0.6), ["[CLS] no-op", "punctuation no-op"]),
    (_noop(prev=0.6, sep=0.7), ["positional (previous)", "[SEP] no-op"]),
])
def test_the_where_it_looks_rules(noop, want):
    found = F.roles({"noop": noop})
    assert found == want
    assert F.role_label(found) == (want[0] if len(want) == 1 else "mixed" if want else "none")


def test_the_thresholds_move_the_rules():
    facts = {"noop": _noop(prev=0.45, sep=0.45)}
    assert F.roles(facts) == []
    t = F.Thresholds(positional=0.4, noop=0.4)
    assert F.roles(facts, t) == ["positional (previous)", "[SEP] no-op"]
    assert F.Thresholds.from_dict({**t.to_dict(), "unknown": 1}) == t


def test_the_syntax_rule_takes_the_best_relation_above_its_baseline():
    L, H = 2, 2
    acc = lambda v: np.full((L, H), 0.1).tolist() if v is None else v  # noqa: E731
    rels = {"all": {"n": 500, "dep_to_head": np.full((L, H), 0.9).tolist(),
                    "head_to_dep": acc(None), "baseline": {"accuracy": 0.1}},
            "det": {"n": 40, "dep_to_head": [[0.1, 0.95], [0.1, 0.1]], "head_to_dep": acc(None),
                    "baseline": {"accuracy": 0.5}},
            "nsubj": {"n": 30, "dep_to_head": acc(None), "head_to_dep": [[0.1, 0.6], [0.1, 0.1]],
                      "baseline": {"accuracy": 0.05}},
            "obj": {"n": 5, "dep_to_head": [[0.1, 1.0], [0.1, 0.1]], "head_to_dep": acc(None),
                    "baseline": {"accuracy": 0.0}}}
    s = F.syntax_facts(rels, 0, 1)  # "all" and obj (5 < 10 dependents) left out
    assert s["relation"] == "nsubj" and s["direction"] == "head_to_dep"
    assert s["gap"] == pytest.approx(0.55) and s["n"] == 30
    assert F.roles({"syntax": s}) == ["syntactic (nsubj)"]
    assert F.roles({"syntax": s}, F.Thresholds(syntax=0.6)) == []
    weak = F.syntax_facts(rels, 1, 1)
    assert weak["gap"] < 0.15 and F.roles({"syntax": weak}) == []
    assert F.syntax_facts(rels, 0, 1, min_n=100) is None


def _ranked():
    rows = [{"layer": 1, "head": 0, "score": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n_pairs": 9},
            {"layer": 0, "head": 1, "score": 0.3, "ci_low": 0.2, "ci_high": 0.4, "n_pairs": 9}]
    verdict = {"heads": rows[:1], "baseline": "positional", "baseline_score": 0.25}
    return {"aspect": rows, "aspect_sentiment": list(reversed(rows))}, \
        {"aspect": verdict, "aspect_sentiment": {**verdict, "heads": rows[1:]}}


def test_aspect_and_opinion_follow_the_aspect_heads_verdict():
    ranked, verdicts = _ranked()
    a = F.aspect_facts(ranked, verdicts, 1, 0)
    assert a["aspect"]["rank"] == 1 and a["aspect"]["beats"]
    assert a["aspect_sentiment"]["rank"] == 2 and not a["aspect_sentiment"]["beats"]
    assert F.roles({"aspects": a}) == ["aspect"]
    b = F.aspect_facts(ranked, verdicts, 0, 1)
    # beats only with the opinion words counted: opinion
    assert F.roles({"aspects": b}) == ["opinion"]
    assert F.clauses({"aspects": b}) == [
        "aspect terms: score 0.300, 95% 0.200 to 0.400, rank 2, does not beat the best simple "
        "rule's 0.250",
        "aspect terms or opinion words: score 0.300, 95% 0.200 to 0.400, rank 1, beats the best "
        "simple rule's 0.250"]


def test_used_is_beyond_the_interval_either_way_or_carrying_a_patched_change():
    assert F.used({"noop": _noop()}) == "not measured"
    assert F.used({"importance": {"uniform": _imp(-0.2, -0.7, 0.3)}}) == "no"
    assert F.used({"importance": {"uniform": _imp(-0.2, -0.7, 0.3),
                                  "mask": _imp(-3.0, -5.0, -1.0, "mask")}}) == "yes"
    assert F.used({"importance": {"uniform": _imp(2.0, 0.5, 3.5)}}) == "yes"  # it helps
    pat = {"share": 0.2, "ci": [0.05, 0.3], "contrast": "aspect"}
    assert F.used({"patching": pat}) == "yes"
    assert F.used({"patching": {**pat, "ci": [-0.01, 0.3]}}) == "no"
    assert F.used({"patching": pat}, F.Thresholds(carry=0.25)) == "no"
    assert F.use_size({"importance": {"u": _imp(-0.2, -1, 1), "m": _imp(3.0, 1, 5)}}) == 3.0


def test_the_statement_every_page_says_about_a_head():
    facts = {"importance": {"uniform": _imp(-8.0, -9.0, -7.0)},
             "patching": {"share": 0.12, "ci": [0.08, 0.16], "contrast": "aspect"},
             "drift": {"cosine": 0.82}}
    assert F.head_statement(3, 4, facts) == (
        "head 4-5 (attention spread evenly: -8.0 points of aspect F1, 95% -9.0 to -7.0; "
        "patched: carries 12% of the change to another aspect, 95% 8% to 16%; cosine 0.820 "
        "before vs after fine-tuning, changed)")
    assert F.head_statement(3, 4, facts, only=("patching",)) == (
        "head 4-5 (patched: carries 12% of the change to another aspect, 95% 8% to 16%)")
    assert F.head_statement(0, 0, {}) == "head 1-1"


def test_disagreements_in_plain_words():
    ranked, verdicts = _ranked()
    finds = {"aspects": F.aspect_facts(ranked, verdicts, 1, 0),
             "importance": {"uniform": _imp(-0.2, -0.7, 0.3)}}
    assert F.disagreement(1, 0, finds) == (
        "Head 2-1 finds aspect terms, but switching it off costs nothing beyond noise "
        "(attention spread evenly: -0.2 points of aspect F1, 95% -0.7 to +0.3, within noise).")
    used = {"noop": _noop(), "importance": {"uniform": _imp(-8.0, -9.0, -7.0)}}
    assert F.disagreement(0, 0, used) == (
        "Head 1-1 matters to the task (attention spread evenly: -8.0 points of aspect F1, 95% "
        "-9.0 to -7.0), but none of the role rules holds for it.")
    noop_used = {"noop": _noop(sep=0.8), "importance": {"uniform": _imp(-8.0, -9.0, -7.0)}}
    assert F.disagreement(0, 0, noop_used).startswith(
        "Head 1-1 rests on [SEP], a pattern usually read as a no-op, yet the task uses it")
    # agreeing heads: a no-op head nothing needs, a used aspect head, an unmeasured one
    assert F.disagreement(0, 0, {"noop": _noop(sep=0.8),
                                 "importance": {"uniform": _imp(0, -1, 1)}}) is None
    assert F.disagreement(1, 0, {**finds, "importance": {"u": _imp(-8, -9, -7)}}) is None
    assert F.disagreement(1, 0, {"aspects": finds["aspects"]}) is None


def test_families_colour_each_role():
    assert [F.family(r) for r in ("positional (next)", "broad", "[CLS] no-op",
                                  "punctuation no-op", "syntactic (det)", "aspect", "opinion",
                                  "mixed", "none")] == [
        "positional", "broad", "no-op", "no-op", "syntactic", "aspect", "opinion", "mixed",
        "none"]
