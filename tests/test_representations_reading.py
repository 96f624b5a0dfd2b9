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
    assert "After fine-tuning (tuned) the top layer's upos probe falls from 90.0% to 60.0%" \
        in text
    assert "most alike at layer 1 (two random words' mean cosine 0.30" in text
    assert "from 0.90 at the embeddings to 0.40 at the top layer (12 words" in text
    assert "In tuned the top layer's self-similarity is 0.20" in text


def test_aspect_probe_that_rises_after_fine_tuning():
    a = ModelSide("base", {"aspect": curve("aspect", [0.9, 0.9], 0.85)}, [0.1, 0.2], [0.9, 0.5])
    b = ModelSide("tuned", {"aspect": curve("aspect", [0.9, 0.97], 0.85)}, [0.1, 0.2],
                  [0.9, 0.5])
    text = " ".join(corpus_reading(CorpusResult("absa", a, b, None, 5, 100)))
    assert "rises from 90.0% to 97.0%" in text and "group the review's words" in text


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
    assert "aspect probe stays about the same (94.5%, then 94.2%); its best layer is layer 1" \
        in text


def test_one_word_is_not_words():
    """The self-similarity sentence counts its words in good English ("1 word", "4 words")."""
    from analysis.representations.reading import _words

    assert (_words(1), _words(4), _words(0)) == ("1 word", "4 words", "0 words")
