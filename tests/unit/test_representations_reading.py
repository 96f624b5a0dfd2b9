"""analysis.representations.reading: the plain sentences follow the numbers."""

from __future__ import annotations

import numpy as np

from analysis.representations.corpus import CorpusResult, ModelSide
from analysis.representations.probes import ProbeCurve
from analysis.representations.reading import corpus_reading, input_reading
from analysis.representations.single import InputResult


def curve(name, layers, majority, recall=None):
    classes = sorted(recall[0]) if recall else ["a", "b"]
    return ProbeCurve(name, layers, majority, classes, {}, recall or [], n_words=100)


def test_corpus_reading_names_the_best_layers_and_the_change():
    rec = [{"NOUN": 0.8, "VERB": 0.6}, {"NOUN": 0.9, "VERB": 0.95}, {"NOUN": 0.9, "VERB": 0.7}]
    a = ModelSide("base", {"upos": curve("upos", [0.8, 0.95, 0.9], 0.2, rec)},
                  [0.1, 0.3, 0.2], [0.9, 0.7, 0.4], n_self_words=12)
    b = ModelSide("tuned", {"upos": curve("upos", [0.8, 0.9, 0.6], 0.2, rec)},
                  [0.1, 0.3, 0.5], [0.9, 0.7, 0.2])
    lines = corpus_reading(CorpusResult("treebank", a, b, None, 10, 100))
    text = "\n".join(lines)
    assert "best at layer 1: 95.0% of 100 words right, against 20.0%" in text
    assert "Layer 1 separates nouns from verbs best (90.0% of nouns and 95.0% of verbs" in text
    assert ("After fine-tuning (tuned) the top layer's upos probe goes from 90.0% to 60.0% "
            "(-30.0 points; no interval, so it cannot be told from noise)") in text
    assert "kept less of the part of speech" not in text  # no claim without an interval
    assert "most alike at layer 1 (two random words' mean cosine 0.30" in text
    assert "from 0.90 at the embeddings to 0.40 at the top layer (12 words" in text
    assert "In tuned the top layer's self-similarity is 0.20" in text


def counted(name, right, majority_right, words=20):
    """A curve with per-sentence counts: ``right`` per layer, each a list per sentence."""
    n = words * len(majority_right)
    return ProbeCurve(name, [sum(r) / n for r in right], sum(majority_right) / n, ["a", "b"],
                      {}, [], n_words=n, n_sentences=len(majority_right),
                      sentence_words=[words] * len(majority_right), sentence_right=right,
                      majority_right=majority_right)


# the issue's numbers: 1000 words in 50 sentences, majority 86.4%, 94.1% before, 95.0% after
# (30 words newly right, 21 newly wrong: the rise is churn)
BEFORE = [19, 19, 20, 18, 20, 18, 20, 20, 19, 18, 20, 20, 19, 20, 18, 14, 20, 19, 19, 20, 20, 19,
          19, 20, 17, 19, 20, 20, 16, 18, 17, 17, 20, 20, 18, 19, 20, 19, 19, 18, 18, 19, 18, 19,
          17, 20, 18, 18, 19, 20]
AFTER = [19, 19, 19, 18, 19, 20, 20, 20, 19, 19, 20, 20, 19, 19, 19, 18, 20, 19, 19, 18, 18, 19,
         20, 20, 18, 19, 20, 18, 19, 19, 18, 18, 19, 20, 20, 18, 19, 19, 19, 18, 17, 20, 18, 20,
         19, 20, 20, 18, 17, 20]
MAJORITY = [17, 16, 19, 17, 19, 15, 14, 17, 14, 15, 18, 18, 16, 17, 19, 18, 19, 19, 18, 17, 18,
            19, 15, 16, 19, 17, 18, 19, 19, 18, 16, 19, 18, 19, 16, 17, 18, 16, 17, 19, 15, 16,
            17, 14, 20, 15, 19, 18, 19, 16]


def _sides(before, after, majority=MAJORITY):
    a = ModelSide("base", {"aspect": counted("aspect", [majority, before], majority)},
                  [0.1, 0.2], [0.9, 0.5])
    b = ModelSide("tuned", {"aspect": counted("aspect", [majority, after], majority)},
                  [0.1, 0.2], [0.9, 0.5])
    return CorpusResult("absa", a, b, None, len(majority), 20 * len(majority))


def test_the_issues_aspect_probe_rise_is_within_noise():
    """94.1% -> 95.0% over a majority of 86.4%: the change's paired interval covers 0, so the
    reading says 'within noise' with the interval, and claims nothing about the top layers."""
    from analysis.representations.probes import paired_ci

    assert (sum(BEFORE), sum(AFTER), sum(MAJORITY)) == (941, 950, 864)
    low, high = paired_ci([20] * 50, BEFORE, AFTER)
    assert low < 0 < high
    lines = corpus_reading(_sides(BEFORE, AFTER))
    text = " ".join(lines)
    assert "group the review's words" not in text
    assert (f"the top layer's aspect probe goes from 94.1% to 95.0%, within noise (+0.9 points, "
            f"95% interval {100 * low:+.1f} to {100 * high:+.1f} points)") in text
    lead = paired_ci([20] * 50, MAJORITY, BEFORE)
    assert ("best at layer 1: 94.1% of 1000 words right (95% interval "
            f"{100 * _ci(BEFORE)[0]:.1f}% to {100 * _ci(BEFORE)[1]:.1f}%), against 86.4% by "
            "always guessing the most frequent class: a lead of 7.7 points beyond noise (95% "
            f"interval {100 * lead[0]:+.1f} to {100 * lead[1]:+.1f} points).") in text


def _ci(right):
    from analysis.representations.probes import accuracy_ci

    return accuracy_ci([20] * 50, right)


def test_aspect_probe_that_rises_beyond_noise_and_above_the_baseline():
    """Every sentence gains two right words (+10 points in every resample): the rise is beyond
    noise and the top layer leads the majority: the reading may say the top layers now group
    the words by aspect; the same rise over a baseline as high is 'no sign'."""
    before = [16] * 50
    after = [18] * 50
    text = " ".join(corpus_reading(_sides(before, after)))
    assert "rises from 80.0% to 90.0% (+10.0 points, 95% interval +10.0 to +10.0 points)" in text
    assert "The top layers now group the review's words by whether they name the asked aspect" \
        in text
    text = " ".join(corpus_reading(_sides(before, after, majority=after)))
    assert "rises from 80.0% to 90.0%" in text
    assert "group the review's words" not in text
    assert "But 90.0% is not clearly above the majority baseline's 90.0%" in text
    assert "no sign that the top layers group the words by aspect" in text


def test_input_reading():
    pts = [np.zeros((3, 2))] * 3
    r = InputResult(["[CLS]", "a", "[SEP]"], [0] * 3, [True, False, True], [""] * 3, "aligned",
                    pts, "base", pts, "tuned", steps=[0.9, 0.5], agreement=[1.0, 0.8, 0.4])
    text = " ".join(input_reading(r))
    assert "rotated onto the one before" in text
    assert "changes most from layer 1 to layer 2 (linear CKA 0.50" in text
    assert "most differently at layer 2 (CKA 0.40, against 1.00 at the embeddings)" in text


def test_a_probe_that_barely_moves_stays_about_the_same():
    a = ModelSide("base", {"aspect": curve("aspect", [0.9, 0.945], 0.85)}, [0.1, 0.2],
                  [0.9, 0.5])
    b = ModelSide("tuned", {"aspect": curve("aspect", [0.9, 0.942], 0.85)}, [0.1, 0.2],
                  [0.9, 0.5])
    text = " ".join(corpus_reading(CorpusResult("absa", a, b, None, 5, 100)))
    assert "aspect probe goes from 94.5% to 94.2% (-0.3 points; no interval" in text
    assert "its best layer is layer 1" in text


def test_one_word_is_not_words():
    """The self-similarity sentence counts its words in good English ("1 word", "4 words")."""
    from analysis.representations.reading import _words

    assert (_words(1), _words(4), _words(0)) == ("1 word", "4 words", "0 words")
