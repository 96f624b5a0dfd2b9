"""analysis.core.cost: a corpus job's estimated seconds from the model's shape and each
example's tokens (hand-computed on a made-up shape and rate), the one-line refusal of a job
past the host's budget saying what fits, the estimate a page shows, and the tokens counted by
the tokenizer alone (the demo's per-study caps, issue 50)."""

from __future__ import annotations

import pytest

from analysis.core import cost
from analysis.core.errors import InputError

SHAPE = cost.Shape(layers=2, heads=4, hidden=8, inner=32)


@pytest.fixture
def rate(monkeypatch):
    monkeypatch.setitem(cost.RATES, "toy", cost.Rate(per_example=0.5, per_flop=1e-3,
                                                     per_cell=1e-2))
    monkeypatch.setattr(cost, "TWO_THREADS", 2.0)


def test_forward_flops_by_hand():
    # 2 L n (4 D^2 + 2 D F) + 4 L n^2 D at n = 10: 2*2*10*(256 + 512) + 4*2*100*8
    assert cost.forward_flops(SHAPE, 10) == 30_720 + 6_400


def test_seconds_sum_the_examples_and_split_over_two_threads(rate):
    one = 0.5 + 1e-3 * 37_120 + 1e-2 * 2 * 4 * 100  # per example, n = 10, one thread
    assert cost.example_seconds("toy", SHAPE, 10) == pytest.approx(one)
    assert cost.seconds("toy", SHAPE, [10, 10, 10], threads=1) == pytest.approx(3 * one)
    assert cost.seconds("toy", SHAPE, [10, 10, 10]) == pytest.approx(3 * one / 2.0)
    assert cost.admitted("toy", SHAPE, 10, cap=300, budget_s=10 * one / 2.0) == 10
    assert cost.admitted("toy", SHAPE, 10, cap=4, budget_s=1e9) == 4


def test_a_job_past_the_budget_is_refused_in_one_line_saying_what_fits(rate):
    per = cost.seconds("toy", SHAPE, [10])  # (0.5 + 37.12 + 8) / 2 = 22.81 s on two threads
    assert per == pytest.approx(22.81)
    assert cost.check_job("toy", SHAPE, [10] * 2, 120.0, "Indexing this corpus") == \
        pytest.approx(2 * per)
    assert cost.check_job("toy", SHAPE, [10] * 50, None, "x") == pytest.approx(50 * per)
    with pytest.raises(InputError) as err:
        cost.check_job("toy", SHAPE, [10] * 50, 120.0, "Indexing this corpus", "sentences")
    assert str(err.value) == (
        "Indexing this corpus would take about 19 minutes on this server (50 sentences, 500 "
        "tokens); a job may take at most about 2 minutes here. Use at most 5 sentences of "
        "this length (10 tokens), or shorter ones.")
    assert "\n" not in str(err.value)


def test_the_estimate_in_words():
    assert cost.estimate_words(25.4, 300, 76_800, "sentences") == (
        "Estimated time: about 30 seconds for 300 sentences (76,800 tokens) on this server's "
        "two cores when idle; longer while other jobs run.")
    assert [cost.duration(s) for s in (0.2, 12.4, 44, 119, 3600)] == [
        "1 second", "12 seconds", "about 40 seconds", "about 2 minutes", "about 60 minutes"]


def test_tokens_are_counted_by_the_tokenizer_with_the_cap():
    from transformers import AutoTokenizer

    from analysis.core.models import default_model_path

    tok = AutoTokenizer.from_pretrained(default_model_path())
    long = " ".join(["soup"] * 600)
    assert cost.lengths_of(tok, ["The soup was cold.", long], [None, None], 256) == [7, 256]
    assert cost.lengths_of(tok, ["The soup"], ["was cold"], 64) == [7]


def test_the_demo_caps_fit_the_budget_for_the_embedded_model():
    """The rates as measured: the embedded model's Search index and Drift at the demo's caps
    (300 examples of 256 tokens) are estimated within 120 s on two idle cores."""
    shape = cost.Shape(layers=6, heads=12, hidden=384, inner=1536)
    assert cost.seconds("search", shape, [256] * 300) < 120
    assert cost.seconds("drift", shape, [256] * 300) < 120
    # BERT-base's Drift does not: the cap then admits fewer examples of that length
    base = cost.Shape(layers=12, heads=12, hidden=768, inner=3072)
    assert 50 < cost.admitted("drift", base, 256, 300) < 300
