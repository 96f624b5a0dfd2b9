"""Plain readings (analysis.attribution.reading): computed from the numbers, in everyday words
(no internal method names)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.attribution.faithfulness import Faithfulness
from analysis.attribution.reading import PLAIN, faithfulness_reading, input_reading, top_words
from analysis.attribution.run import METHODS, Attribution, MethodResult

INTERNAL = ("norm_resln", "value_zeroing", "grad_input", "integrated_gradients", "alti ")


def _summary(mean, low, high):
    return {"mean": mean, "low": low, "high": high, "n": 10}


def _faith(attention_comp):
    methods = {
        "attention": {"comprehensiveness": _summary(*attention_comp),
                      "sufficiency": _summary(0.1, 0.05, 0.15),
                      "loo_spearman": _summary(0.1, 0.0, 0.2)},
        "alti": {"comprehensiveness": _summary(0.30, 0.25, 0.35),
                 "sufficiency": _summary(0.02, 0.0, 0.04),
                 "loo_spearman": _summary(0.55, 0.4, 0.7)},
    }
    random = {"comprehensiveness": _summary(0.08, 0.06, 0.10),
              "sufficiency": _summary(0.2, 0.1, 0.3), "loo_spearman": _summary(0.0, -0.1, 0.1)}
    return Faithfulness(methods, random, (1, 5, 10, 20, 50), "drop", 10, "m")


def test_faithfulness_reading_from_the_numbers():
    """Every fall in points with its 95% interval in points (the page's table unit); 'within
    noise' when raw attention's interval overlaps the random choice's."""
    text = faithfulness_reading(_faith((0.2, 0.15, 0.25)))
    assert PLAIN["alti"] in text
    assert ("falls by 30.0 points on average (95% interval 25.0 to 35.0 points; a random "
            "choice of words: falls by 8.0 points, 95% interval 6.0 to 10.0 points).") in text
    assert ("Raw attention weights beat a random choice (20.0 points, 95% interval 15.0 to "
            "25.0 points; the intervals do not overlap).") in text
    assert "rank correlation 0.55, 95% interval 0.40 to 0.70" in text
    text = faithfulness_reading(_faith((0.09, 0.05, 0.12)))
    assert ("not clearly better than a random choice: within noise (9.0 points, 95% interval "
            "5.0 to 12.0 points; the intervals overlap)") in text
    text = faithfulness_reading(_faith((0.02, 0.01, 0.03)))
    assert "do worse than a random choice" in text
    for name in INTERNAL:
        assert name not in text


def test_faithfulness_reading_says_rises_and_too_few_examples():
    from dataclasses import replace

    f = _faith((-0.003, -0.01, 0.004))
    f.methods["alti"]["comprehensiveness"] = _summary(-0.003, -0.01, 0.004)
    f.random["comprehensiveness"] = _summary(-0.027, -0.04, -0.01)
    text = faithfulness_reading(replace(f, n_examples=1))
    assert "rises by 0.3 points" in text and "rises by 2.7 points" in text
    assert "95% interval of the fall -1.0 to +0.4 points" in text
    assert "falls by -" not in text
    assert "With only 1 example these averages are not reliable: use at least 10." in text
    assert "intervals" not in text  # one example: no verdict on raw attention
    assert "not reliable" not in faithfulness_reading(replace(f, n_examples=10))


def test_input_reading_names_the_top_words():
    tokens = ["[CLS]", "the", "soup", "was", "cold", "[SEP]"]
    special = np.array([1, 0, 0, 0, 0, 1], dtype=bool)
    eye = np.stack([np.eye(6)] * 2)
    ig = np.array([0.0, 0.01, 0.3, 0.02, 0.5, 0.0])
    att = np.array([0.5, 0.2, 0.0, 0.1, 0.0, 0.2])
    r = Attribution(tokens, special, list(range(6)), tokens,
                    {"label": "negative", "probabilities": {"negative": 0.91, "positive": 0.09}},
                    {"attention": MethodResult(eye, eye, att),
                     "integrated_gradients": MethodResult(None, None, ig, 0.0)})
    assert top_words(r, "integrated_gradients", 2) == ["cold", "soup"]
    text = input_reading(r)
    assert "\u201cnegative\u201d, 91% sure" in text
    assert "\u201ccold\u201d, \u201csoup\u201d and \u201cwas\u201d" in text
    assert "\u201cthe\u201d" in text and "hardly agree" in text
    for name in INTERNAL:
        assert name not in text
    assert set(PLAIN) == set(METHODS)


def test_a_repeated_word_is_named_once():
    tokens = ["[CLS]", "soup", "soup", "cold", "[SEP]"]
    special = np.array([1, 0, 0, 0, 1], dtype=bool)
    r = Attribution(tokens, special, list(range(5)), tokens, None,
                    {"alti": MethodResult(None, None, np.array([0, 0.5, 0.4, 0.1, 0]))})
    assert top_words(r, "alti") == ["soup", "cold"]


def test_the_best_method_within_noise_of_random_says_so():
    from dataclasses import replace

    f = _faith((0.2, 0.15, 0.25))
    f.methods["alti"]["comprehensiveness"] = _summary(0.12, 0.09, 0.15)
    f.methods["attention"]["comprehensiveness"] = _summary(0.1, 0.05, 0.15)
    text = faithfulness_reading(replace(f, n_examples=10))
    assert "falls by 12.0 points on average (95% interval 9.0 to 15.0 points" in text
    assert "That is within noise of a random choice: the two intervals overlap." in text


def test_the_table_is_in_the_readings_points():
    """The page's faithfulness table: comprehensiveness and sufficiency in points (the
    reading's 28.4, not 0.284), intervals in points, leave-one-out as a rank correlation."""
    from ui.attribution.views import curves_frame, faithfulness_frame

    f = _faith((0.2842, 0.15, 0.25))
    table = faithfulness_frame(f).set_index("method")
    row = table.loc["Raw attention"] if "Raw attention" in table.index else table.iloc[0]
    assert row["comprehensiveness (points)"] == pytest.approx(28.42)
    assert row["comprehensiveness 95% interval (points)"] == "15.0 to 25.0"
    assert row["sufficiency (points)"] == 10.0
    assert row["leave-one-out (rank correlation)"] == 0.1
    assert table.loc["Random ranking", "comprehensiveness (points)"] == 8.0
    assert "28.4 points" in faithfulness_reading(f) and "0.284" not in faithfulness_reading(f)
    f.methods["attention"]["comprehensiveness"]["curve"] = [0.1, 0.2, 0.3, 0.4, 0.5]
    for name in ("alti",):
        for key in ("comprehensiveness", "sufficiency"):
            f.methods[name][key]["curve"] = [0.0] * 5
    f.methods["attention"]["sufficiency"]["curve"] = [0.0] * 5
    for key in ("comprehensiveness", "sufficiency"):
        f.random[key]["curve"] = [0.0] * 5
    curves = curves_frame(f)
    got = curves[(curves.measure == "comprehensiveness") & (curves.k == 50)]
    assert 50.0 in set(got["value"])
