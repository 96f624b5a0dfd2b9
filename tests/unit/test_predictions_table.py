"""The predictions table in the library (not only through AppTest): its columns, every filter,
the orders (errors first, disagreements first, a column), the filter in a link, and 10,000 rows
filtered and sorted without answering again."""

from __future__ import annotations

import time

import numpy as np

from analysis.predictions.result import Result
from analysis.predictions.table import Filter, apply, frame, mask, order, view

CLASSES = ("neg", "pos")


def _result(texts, gold, pred_p, pred_b=None, tokens=None, aspects=None) -> Result:
    """A hand-made result: ``pred_p`` is each row's P(pos) (the loss follows from it)."""
    n = len(texts)
    p = np.asarray(pred_p, float)
    scores = np.stack([1 - p, p], 1)
    gold = np.asarray(gold)
    losses = -np.log(scores[np.arange(n), gold])
    extra = {}
    if pred_b is not None:
        pb = np.asarray(pred_b, float)
        sb = np.stack([1 - pb, pb], 1)
        extra = dict(scores_b=sb, losses_b=-np.log(sb[np.arange(n), gold]))
    if aspects is not None:
        extra.update(reviews=list(texts), categories=list(aspects),
                     sentence=np.arange(n) // 5)
    return Result("a", "b" if pred_b is not None else None, "hand-made",
                  "nli_m" if aspects is not None else None, CLASSES, list(texts), [None] * n,
                  gold, np.asarray(tokens if tokens is not None else [5] * n), np.arange(n),
                  scores, losses, {}, np.zeros((2, 2), int), **extra)


TEXTS = ["good food", "bad service", "goodness me", "The food was GOOD.", "slow and bad"]
GOLD = [1, 0, 1, 1, 0]
P = [0.9, 0.6, 0.2, 0.45, 0.1]  # predictions: pos, pos, neg, neg, neg


def test_frame_columns_and_every_filter():
    df = frame(_result(TEXTS, GOLD, P, tokens=[4, 5, 6, 9, 12]))
    assert list(df.columns) == ["row", "text", "pair", "gold", "prediction", "confidence",
                                "loss", "right", "tokens"]
    assert df["prediction"].tolist() == ["pos", "pos", "neg", "neg", "neg"]
    assert df["right"].tolist() == [True, False, False, False, True]
    assert np.allclose(df["confidence"], [0.9, 0.6, 0.8, 0.55, 0.9])

    def rows(**kw):
        return apply(df, Filter(**kw))["row"].tolist()

    assert rows(label="pos") == [0, 2, 3]
    assert rows(prediction="neg") == [2, 3, 4]
    assert rows(outcome="wrong") == [1, 2, 3] and rows(outcome="right") == [0, 4]
    # a whole word, any case: "goodness" is not "good"
    assert rows(contains="good") == [0, 3] and rows(contains="GOOD") == [0, 3]
    assert rows(contains="and bad") == [4] and rows(contains="(") == []
    assert rows(min_tokens=5, max_tokens=9) == [1, 2, 3]
    assert rows(label="pos", outcome="wrong", contains="food") == [3]
    assert not Filter().active and Filter(label="pos").active


def test_errors_first_then_disagreements_then_a_column():
    res = _result(TEXTS, GOLD, P, pred_b=[0.9, 0.2, 0.7, 0.45, 0.1])
    df = frame(res)
    # wrong first, the most confidently wrong (highest loss) first, then right, least sure first
    losses = df["loss"].to_numpy()
    assert order(df)["row"].tolist() == [2, 1, 3, 0, 4]
    assert losses[2] > losses[1] > losses[3] and losses[0] == losses[4]  # a tie: data order
    # b answers rows 1 and 2 otherwise: those first
    assert df["agree"].tolist() == [True, False, False, True, True]
    assert order(df, "disagreements")["row"].tolist() == [2, 1, 3, 0, 4]
    assert apply(df, Filter(outcome="disagree"))["row"].tolist() == [1, 2]
    assert apply(df, Filter(prediction_b="pos"))["row"].tolist() == [0, 2]
    assert order(df, "tokens")["row"].tolist() == [0, 1, 2, 3, 4]  # ties: data order
    assert order(df, "confidence", descending=False)["row"].tolist()[0] == 3
    assert view(df, Filter(outcome="wrong"), limit=2)["row"].tolist() == [2, 1]


def test_aspect_filter_on_absa_rows():
    res = _result(TEXTS, GOLD, P, aspects=["food", "service", "food", "food", "service"])
    df = frame(res)
    assert {"review", "aspect"} <= set(df.columns)
    assert apply(df, Filter(aspect="service"))["row"].tolist() == [1, 4]
    assert mask(df, Filter(aspect="food", outcome="right")).tolist() == [True, False, False,
                                                                          False, False]


def test_the_filter_travels_in_a_link():
    f = Filter(label="pos", outcome="wrong", contains="the food & <b>", min_tokens=3)
    params = f.to_params("pf_")
    assert params == {"pf_label": "pos", "pf_outcome": "wrong",
                      "pf_contains": "the food & <b>", "pf_min_tokens": "3"}
    assert Filter.from_params(params, "pf_") == f
    # malformed values are ignored, unknown keys too
    bad = {"pf_outcome": "everything", "pf_min_tokens": "-4", "pf_max_tokens": "x",
           "pf_nope": "1", "pf_label": "neg"}
    assert Filter.from_params(bad, "pf_") == Filter(label="neg")
    assert Filter().to_params("pf_") == {}


def test_ten_thousand_rows_filter_and_sort_in_a_blink():
    rng = np.random.default_rng(0)
    words = np.array(["good", "bad", "food", "service", "slow", "the", "was", "great"])
    texts = [" ".join(rng.choice(words, 12)) for _ in range(10_000)]
    res = _result(texts, rng.integers(0, 2, 10_000), rng.random(10_000),
                  pred_b=rng.random(10_000), tokens=rng.integers(3, 60, 10_000))
    df = frame(res)
    t0 = time.perf_counter()
    for f, by in ((Filter(), "errors"), (Filter(outcome="wrong", contains="great"), "loss"),
                  (Filter(label="pos", min_tokens=10, max_tokens=40), "disagreements")):
        shown = view(df, f, by)
        assert len(shown) <= len(df)
    took = time.perf_counter() - t0
    assert took < 1.0, took  # measured ~0.05 s: no answer is recomputed
    got = view(df, Filter(outcome="wrong", contains="great"))
    assert got["text"].str.contains(r"\bgreat\b").all() and not got["right"].any()
    assert len(got) == int(((~df["right"]) & df["text"].str.contains(r"\bgreat\b")).sum())
