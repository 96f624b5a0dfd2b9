"""The slow attribution methods' time estimate (analysis.attribution.cost, issue 30), checked
against hand-computed values and against what bench/sizes/run.py measured."""

from __future__ import annotations

import pytest

from analysis.attribution.cost import (duration_words, estimate_seconds, forwards_needed,
                                       slow_methods)


def test_forwards_per_method():
    assert forwards_needed("value_zeroing", 126) == pytest.approx(0.95 * 126)
    assert forwards_needed("value_zeroing", 504) == pytest.approx(0.95 * 504 * 0.25 ** 0.3)
    assert forwards_needed("integrated_gradients", 126, steps=50) == 3.5 * 50 + 2
    assert forwards_needed("attention", 512) == 1.0
    assert forwards_needed("norm", 126) == 1.0 and forwards_needed("norm", 504) == 2.0
    assert forwards_needed("norm_resln", 504) == pytest.approx(1.4 * 2)
    assert forwards_needed("alti", 126) == 3.0
    assert forwards_needed("alti", 504) == pytest.approx(3.0 * 4 ** 0.1)  # 3.4 forwards
    assert forwards_needed("alti", 1) == pytest.approx(3.0 * 126 ** -0.1)


def test_the_growing_methods_against_what_was_measured():
    """bench/README.md, "Attribution at 512 tokens" (2026-11-28 04:31, after the norms and
    ALTI stopped forming T; ALTI's rows again after its distances stopped being stored, issue
    48, CPU seconds on one thread at BERT-base): (tokens, forward s, method, measured s) at
    BERT-base and BERT-large; the estimate is within a fifth of each, and none of these is held
    back at 512 tokens (BERT-large's ALTI, 17.9 s before issue 48, is ~6 s now)."""
    rows = [(126, 0.38, "alti", 1.02), (512, 1.50, "alti", 4.53),
            (126, 0.18, "norm_resln", 0.25), (512, 0.57, "norm_resln", 1.59),
            (512, 0.61, "norm", 1.21),
            (512, 1.73, "norm_resln", 5.59), (512, 1.76, "norm", 4.27)]
    for n, fwd, method, measured in rows:
        est = estimate_seconds([method], n, fwd)[method]
        assert abs(est - measured) / measured < 0.2, (n, fwd, method, est, measured)
    large = estimate_seconds(["alti", "norm_resln", "norm"], 512, 1.88)
    assert slow_methods(large) == {} and 5 < large["alti"] < 8


def test_estimate_and_which_are_slow():
    est = estimate_seconds(["attention", "value_zeroing", "integrated_gradients"], 512, 1.16)
    assert est["attention"] == pytest.approx(1.16)
    assert est["value_zeroing"] == pytest.approx(0.95 * 512 * (126 / 512) ** 0.3 * 1.16)
    assert est["integrated_gradients"] == pytest.approx(177 * 1.16)
    assert slow_methods(est) == {"value_zeroing": est["value_zeroing"],
                                 "integrated_gradients": est["integrated_gradients"]}
    assert slow_methods(estimate_seconds(["value_zeroing"], 20, 0.04)) == {}  # 0.8 s


def test_value_zeroing_estimate_is_within_a_fifth_of_every_measured_row():
    """bench/README.md, Sizes (time, the forward timed at about the same load, tokens): 9.89 s
    on the embedded model (0.07 s) and 33.09 s at BERT-base (0.26 s) on 126 tokens; 171.87 s
    at BERT-base (0.58 s) and 606.36 s at BERT-large (1.73-1.88 s: 1.8 s) on 512. A forward
    count of n would say 15 minutes for BERT-large's 10."""
    for measured, forward, n in ((9.89, 0.07, 126), (33.09, 0.26, 126), (171.87, 0.58, 512),
                                 (606.36, 1.8, 512)):
        est = estimate_seconds(["value_zeroing"], n, forward)["value_zeroing"]
        assert abs(est - measured) / measured < 1 / 5, (measured, est)
    assert forwards_needed("value_zeroing", 126) == pytest.approx(0.95 * 126)


def test_words_and_bad_input():
    assert duration_words(12.4) == "about 12 seconds"
    assert duration_words(600) == "about 10 minutes"
    assert duration_words(2 * 3600) == "about 2.0 hours"
    with pytest.raises(ValueError):
        estimate_seconds(["alti"], 0, 1.0)


def test_estimate_input_times_again_before_holding_back(monkeypatch, tmp_path_factory):
    """A slow-looking first forward is timed again and the faster one is used; a fast one is
    timed once."""
    from analysis.attribution import cost, load_for_attribution
    from attribution_models import tiny_classifier_dir

    loaded = load_for_attribution(str(tiny_classifier_dir(tmp_path_factory)))
    n = len(loaded.tokenizer("the soup was cold", "service")["input_ids"])
    times = [5.0, 0.01]
    monkeypatch.setattr(cost, "time_forward", lambda loaded, enc: times.pop(0))
    est = cost.estimate_input(loaded, "the soup was cold", "service")
    assert times == []  # timed twice
    vz = 0.95 * n * (126 / n) ** 0.3  # forwards
    assert est["value_zeroing"] == pytest.approx(vz * 0.01)
    assert est["integrated_gradients"] == pytest.approx(177 * 0.01)
    assert set(est) == {"attention", "norm", "norm_resln", "alti", "value_zeroing",
                        "grad_input", "integrated_gradients"}
    times[:] = [0.001, 99.0]
    est = cost.estimate_input(loaded, "the soup was cold", "service")
    assert times == [99.0]  # fast: timed once
    assert est["value_zeroing"] == pytest.approx(vz * 0.001)


def test_faithfulness_is_estimated_before_it_runs(monkeypatch, tiny_model_dir):
    """Issue 49: "Measure faithfulness" gave no estimate (and took 8.4 minutes). The estimate:
    integrated gradients' forwards for each example at the first example's timed forward per
    token, times the measured 1.7 of the whole run over IG alone (bench/README.md)."""
    from analysis.attribution import cost
    from analysis.core.models import load_model

    loaded = load_model(str(tiny_model_dir("bert")))
    monkeypatch.setattr(cost, "time_forward", lambda lm, enc: 0.01 * enc.n_tokens)
    texts, pairs = ["The soup was cold .", "Good"], ["food", None]
    n = [cost.encode_input(loaded, t, p, 512).n_tokens for t, p in zip(texts, pairs)]
    got = cost.estimate_faithfulness(loaded, texts, pairs)
    assert got == pytest.approx(1.7 * (3.5 * 50 + 2) * 0.01 * sum(n))
    assert cost.estimate_faithfulness(loaded, [], []) == 0.0
