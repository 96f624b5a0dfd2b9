"""Baselines of aspect-head discovery on hand-made pairs."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.aspects.baselines import baselines, best_position
from analysis.aspects.gold import PairGold


def pair(words, gold, kind="aspect", sep=None):
    n = len(words)
    sep = sep or []
    return PairGold(0, "food", "positive", "", "", [n + len(sep)], list(range(n)), sep,
                    {kind: gold}, words + ["[SEP]"] * len(sep) + ["food"])


def test_positional_frequent_word_uniform_and_random_head():
    pairs = [pair(["the", "pasta", "was", "good"], [1]), pair(["the", "soup"], [1]),
             pair(["nice", "the", "pizza"], [2])]
    scores = {k: np.zeros((0, 1, 2)) for k in ("aspect", "aspect_sentiment", "opposite", "noop")}
    hits = dict(scores)
    scores["aspect"] = np.array([[[0.2, 0.4]], [[0.6, 0.8]], [[0.0, 0.4]]])
    hits["aspect"] = np.array([[[1.0, 0.0]], [[0.0, 0.0]], [[1.0, 1.0]]])
    out = baselines(pairs, scores, hits)
    a = out["aspect"]
    assert a["n_pairs"] == 3 and out["noop"] == {"n_pairs": 0}
    assert a["random_head"] == {"score": pytest.approx(0.4), "accuracy": pytest.approx(0.5)}
    # offset 1 is gold in two pairs; offset -1 (the last word) also in two: the first wins
    assert a["positional"] == {"offset": 1, "score": 2 / 3, "accuracy": 2 / 3}
    # 'the' is the most frequent review word and never gold
    assert a["frequent_word"] == {"score": 0.0, "accuracy": 0.0}
    assert a["uniform"]["score"] == pytest.approx((1 / 4 + 1 / 2 + 1 / 3) / 3)
    assert "random_head" not in baselines(pairs)["aspect"]


def test_noop_candidates_include_the_separators():
    p = pair(["good", "food"], [2, 3], kind="noop", sep=[2, 3])
    assert best_position([p], "noop") == {"offset": 2, "score": 1.0, "accuracy": 1.0}
