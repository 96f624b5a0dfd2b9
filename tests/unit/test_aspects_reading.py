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
    assert lines[0].startswith("A head beats every baseline for the Aspect kind (aspect terms); "
                               "no head does for the Aspect-sentiment kind (aspect terms or "
                               "their opinion words)")
    assert lines[1] == ("For aspect terms, head 3-5 does clearly better than the best simple "
                        "rule (always looking a fixed number of words away): it scores 0.400 "
                        "more, 3.0 times as much, and even at the low end of its 95% interval "
                        "it is 0.300 ahead.")
    assert lines[2] == ("For aspect terms or their opinion words, no head is clearly better "
                        "than the best simple rule (always looking a fixed number of words "
                        "away): the best, head 2-2, scores 0.050 more, but at the low end of "
                        "its 95% interval it is 0.020 behind, so the lead may be chance.")
    assert any("the other aspect's terms: no pairs" in s.lower() for s in lines)


def test_none_does_and_fine_tuning_change():
    ranked = {"aspect": [_h(0, 0, 0.18, 0.12, 0.22)],
              "aspect_sentiment": [_h(0, 1, 0.1, 0.05, 0.2)],
              "opposite": [], "noop": []}
    before = {"aspect": [_h(5, 5, 0.10, 0.05, 0.11)], "aspect_sentiment": []}
    lines = reading(ranked, {k: BASE for k in ranked}, before)
    assert lines[0].startswith("No head beats every baseline")
    assert margin({"best": ranked["aspect"][0], "baseline_score": 0.2}) < 0
    assert lines[1] == ("For aspect terms, no head does better than the simple rule of always "
                        "looking a fixed number of words away: the best, head 1-1, scores 0.020 "
                        "less than the rule (0.080 less at the low end of its 95% interval).")
    assert lines[-1] == ("Fine-tuning raised the best score for aspect terms: 0.100 (head 6-6, "
                         "95% interval 0.050–0.110) before, 0.180 (head 1-1, 95% interval "
                         "0.120–0.220) after.")


def test_a_change_from_fine_tuning_within_the_intervals_is_within_noise():
    from analysis.aspects.reading import change_sentence

    after = [_h(0, 0, 0.18, 0.12, 0.22)]
    assert change_sentence("aspect", after, [_h(5, 5, 0.15, 0.10, 0.20)]) == (
        "Fine-tuning changed, within noise, the best score for aspect terms: 0.150 (head 6-6, "
        "95% interval 0.100–0.200) before, 0.180 (head 1-1, 95% interval 0.120–0.220) after "
        "(the two 95% intervals overlap).")
    assert change_sentence("aspect", after, [_h(5, 5, 0.30, 0.25, 0.35)]).startswith(
        "Fine-tuning lowered the best score for aspect terms")


def test_one_label_hint_when_every_pair_gets_the_same_label():
    """Planted scores: 'none' for every pair -> top_label_share 100, F1 0 and a hint that
    says so; a model that finds one aspect gets no hint."""
    import numpy as np

    from analysis.aspects.reading import one_label_hint
    from analysis.absa.tasks import LABELS, NONE, metrics_from_scores

    gold = [LABELS.index("positive"), NONE, NONE, LABELS.index("negative"), NONE]
    scores = np.zeros((5, len(LABELS)))
    scores[:, NONE] = 1.0
    m = metrics_from_scores(gold, scores)
    assert m["top_label_share"] == 100.0 and m["top_label"] == "none" and m["aspect_f1"] == 0
    hint = one_label_hint(m)
    assert "'none'" in hint and "for every pair" in hint and "--epochs" in hint
    scores[0] = 0.0
    scores[0, LABELS.index("positive")] = 1.0
    m = metrics_from_scores(gold, scores)
    assert m["top_label_share"] == 80.0 and one_label_hint(m) is None
    same = np.zeros((5, len(LABELS)))
    same[:, LABELS.index("positive")] = 1.0
    assert "'positive'" in one_label_hint(metrics_from_scores(gold, same))


def test_the_explanation_follows_the_checkpoints_task():
    """'What am I looking at?' names the shown checkpoint's task and quotes its own auxiliary
    sentence: an NLI-M checkpoint's text has no QA-M question in it, and the reverse."""
    from analysis.aspects.reading import task_explanation

    nli = task_explanation("nli_m")
    assert "this checkpoint's task, NLI-M: for example \"service\"" in nli
    assert "what do you think" not in nli and "QA-M" not in nli
    qa = task_explanation("qa_m", "food")
    assert "QA-M: for example \"what do you think of the food of it ?\"" in qa
    assert "NLI" not in qa
    assert "\"the polarity of the aspect service is positive .\"" in task_explanation("qa_b")
    assert "\"positive - service\"" in task_explanation("nli_b")
    assert "a baseline that scores 1.000, the most any head can, is left out" in nli
