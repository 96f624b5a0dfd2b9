"""analysis.aspects.reading on synthetic ranked heads and baselines."""

from analysis.aspects.reading import margin, reading


def _h(l, h, s, lo, hi):
    return {"layer": l, "head": h, "score": s, "ci_low": lo, "ci_high": hi, "accuracy": 0.5}


BASE = {"random_head": {"score": 0.10}, "positional": {"score": 0.20, "offset": 1},
        "frequent_word": {"score": 0.15}, "uniform": {"score": 0.12}}


def test_a_head_beats_every_baseline_and_by_how_much():
    ranked = {"aspect": [_h(2, 4, 0.60, 0.50, 0.70), _h(0, 0, 0.3, 0.1, 0.4)],
              "aspect_sentiment": [_h(1, 1, 0.25, 0.18, 0.32)],
              "opposite": [], "noop": []}
    base = {k: BASE for k in ranked}
    lines = reading(ranked, base)
    assert lines[0].startswith("A head beats every baseline for aspect terms; no head does for "
                               "aspect terms or their opinion words")
    assert lines[1] == ("For aspect terms, head 3-5 is the clearest: +0.400 above the "
                        "fixed-position baseline, 3.0 times its score, and even its interval's "
                        "lower end is +0.300 above it.")
    assert lines[2].startswith("For aspect terms or their opinion words, no head does better "
                               "than every baseline: the best, head 2-2, is +0.050 from the "
                               "fixed-position baseline and its interval reaches down -0.020")
    assert any("the other aspect's terms: no pairs" in s.lower() for s in lines)


def test_none_does_and_fine_tuning_change():
    ranked = {"aspect": [_h(0, 0, 0.18, 0.12, 0.22)],
              "aspect_sentiment": [_h(0, 1, 0.1, 0.05, 0.2)],
              "opposite": [], "noop": []}
    before = {"aspect": [_h(5, 5, 0.10, 0.05, 0.15)], "aspect_sentiment": []}
    lines = reading(ranked, {k: BASE for k in ranked}, before)
    assert lines[0].startswith("No head beats every baseline")
    assert margin({"best": ranked["aspect"][0], "baseline_score": 0.2}) < 0
    assert lines[-1] == ("Fine-tuning raised the best score for aspect terms: 0.100 (head 6-6) "
                         "before, 0.180 (head 1-1) after.")
