"""Sentence-pair ABSA tasks (Sun et al. 2019): templates, labels, pairs, metrics."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.absa import tasks as A
from analysis.absa.data import to_dataset
from analysis.core.errors import DataError, InputError


def one_sentence():
    return to_dataset([{
        "id": "1", "text": "The pasta was great but the waiter was rude.",
        "terms": [], "source": "json",
        "categories": [{"category": "food", "polarity": "positive"},
                       {"category": "service", "polarity": "negative"}]}])


def review(e: A.PairExample) -> str:
    """The review side of a pair, whichever order it is in."""
    return e.text_b if e.aux_first else e.text_a


def test_auxiliary_sentences_are_the_papers():
    assert A.auxiliary_sentence("qa_m", "service") == "what do you think of the service of it ?"
    assert A.auxiliary_sentence("nli_m", "anecdotes/miscellaneous") == "anecdotes"
    assert A.auxiliary_sentence("qa_b", "price", "negative") == \
        "the polarity of the aspect price is negative ."
    assert A.auxiliary_sentence("nli_b", "ambience", "none") == "none - ambience"
    with pytest.raises(InputError):
        A.auxiliary_sentence("qa_b", "price")
    with pytest.raises(InputError, match="Unknown task"):
        A.check_task("qa_x")


def test_m_task_examples_labels_and_pair_order():
    ex = A.build_examples(one_sentence(), "qa_m")
    assert [e.category for e in ex] == ["price", "anecdotes/miscellaneous", "food", "ambience",
                                        "service"]
    assert [A.LABELS[e.label] for e in ex] == ["none", "none", "positive", "none", "negative"]
    assert ex[2].text_a.startswith("The pasta") and ex[2].text_b == \
        "what do you think of the food of it ?"
    flipped = A.build_examples(one_sentence(), "qa_m", "aux-review")
    assert flipped[2].text_a == "what do you think of the food of it ?"
    assert review(flipped[2]) == review(ex[2])


def test_b_task_examples_have_five_rows_per_aspect():
    ex = A.build_examples(one_sentence(), "nli_b")
    assert len(ex) == 25
    food = [e for e in ex if e.category == "food"]
    assert [e.text_a for e in food] == ["positive - food", "neutral - food", "negative - food",
                                        "conflict - food", "none - food"]
    assert [e.label for e in food] == [1, 0, 0, 0, 0]
    assert food[0].text_b.startswith("The pasta")  # B tasks: (aux, review)
    price = [e.label for e in ex if e.category == "price"]
    assert price == [0, 0, 0, 0, 1]


def test_data_without_categories_is_refused():
    ds = to_dataset([{"id": "1", "text": "Good food.", "terms": [], "categories": [],
                      "source": "aste"}])
    with pytest.raises(DataError, match="no sentence-level category"):
        A.build_examples(ds, "qa_m")


def test_aspect_prf_by_hand():
    N = A.NONE
    # sentence 1: gold {food, service}, predicted {food, price}; sentence 2: gold {ambience},
    # predicted {ambience}; sentence 3: no gold aspect -> skipped (its prediction too).
    y_true = [N, N, 0, N, 2,   N, N, N, 1, N,   N, N, N, N, N]
    y_pred = [0, N, 0, N, N,   N, N, N, 2, N,   0, 0, N, N, N]
    p, r, f = A.aspect_prf(y_true, y_pred)
    assert p == pytest.approx(100 * 2 / 3)
    assert r == pytest.approx(100 * 2 / 3)
    assert f == pytest.approx(100 * 2 / 3)


def test_sentiment_accuracies_by_hand():
    N = A.NONE
    y_true = [0, 2, 1, 3, N]
    scores = np.array([
        [.1, .1, .1, .1, .6],   # predicted none -> argmax of 4 = 0 (ties: first) -> right
        [.5, .0, .4, .0, .1],   # predicted positive, gold negative -> wrong
        [.1, .5, .2, .1, .1],   # neutral right
        [.1, .0, .0, .2, .7],   # none -> argmax of 4 = conflict -> right (4-way only)
        [.9, 0, 0, 0, .1],      # gold none: ignored
    ])
    m = A.metrics_from_scores(y_true, scores)
    assert m["acc_4way"] == pytest.approx(75.0)
    assert m["acc_3way"] == pytest.approx(100 * 2 / 3)
    assert m["acc_binary"] == pytest.approx(50.0)
    # binary: a neutral prediction falls back to the larger of positive and negative
    assert A.sentiment_accuracy([2], [1], np.array([[.2, .5, .3, 0, 0]]), 2) == 100.0


def test_b_task_scores_are_softmaxed_yes_probabilities():
    ex = A.build_examples(one_sentence(), "qa_b")
    probs = np.zeros((25, 2))
    probs[:, 1] = 0.1
    probs[2 * 5 + 0, 1] = 0.9  # food: positive row says yes
    gold, scores = A.pair_scores(ex, probs, "qa_b")
    assert gold == [4, 4, 0, 4, 2]
    assert scores.shape == (5, 5)
    np.testing.assert_allclose(scores.sum(1), 1.0)
    e = np.exp([0.9, 0.1, 0.1, 0.1, 0.1])
    np.testing.assert_allclose(scores[2], e / e.sum())
    assert scores[0].argmax() == 0  # all rows tie -> first
