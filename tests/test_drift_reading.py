"""analysis.drift.reading on synthetic numbers where the right sentences are known."""

import numpy as np

from analysis.drift.patterns import PATTERN_TYPES
from analysis.drift.reading import drift_reading, vertical_share


def test_most_changed_layer_and_heads_and_vertical_move():
    cos = np.full((4, 3), 0.95)
    cos[3] = [0.60, 0.70, 0.80]  # the last layer changed most
    cos[0, 0] = 0.99
    cka = np.array([1.0, 0.98, 0.95, 0.90, 0.70])
    vb = np.zeros((4, 3))
    va = np.zeros((4, 3))
    va[3, 0], va[2, 1] = 0.9, 0.25  # two heads became vertical
    lines = drift_reading(cos, cka, vb, va)
    assert lines[0].startswith("Layer 4 changed most (mean head cosine 0.700) and layer 1 least "
                               "(0.963); later layers changed more")
    assert lines[1] == ("The most changed heads are 4-1 (cosine 0.600), 4-2 (cosine 0.700), "
                        "4-3 (cosine 0.800).")
    assert "moved most at layer 4 (linear CKA 0.700" in lines[2]
    assert lines[3].startswith("2 heads took up looking from every word at the same few tokens, "
                               "such as [CLS], [SEP] or a full stop (the 'vertical' pattern) "
                               "after fine-tuning, most of all 4-1: from 0% to 90% of its maps")
    assert lines[3].endswith("Over all heads such maps became more common: 0% of all maps "
                             "before, 10% after.")


def test_heads_took_up_the_pattern_while_the_total_fell():
    """The issue's case: a head gained the pattern while the share over all heads fell (60%
    before, 49% after): the reading says why, instead of reading as a contradiction."""
    vb = np.full((2, 2), 0.60)
    va = np.array([[0.95, 0.40], [0.40, 0.21]])
    lines = drift_reading(np.full((2, 2), 0.9), np.array([1.0, 0.9, 0.8]), vb, va)
    assert "1 head took up" in lines[-1] and "most of all 1-1: from 60% to 95%" in lines[-1]
    assert lines[-1].endswith("Yet over all heads such maps became fewer, because other heads "
                              "left the pattern: 60% of all maps before, 49% after.")


def test_no_move_and_identical():
    cos = np.full((2, 2), 0.9)
    cos[0, 1] = 0.5
    vb = np.full((2, 2), 0.5)
    va = np.full((2, 2), 0.4)
    lines = drift_reading(cos, np.array([1.0, 0.9, 0.8]), vb, va)
    assert lines[0].startswith("Layer 1 changed most") and "earlier layers changed" in lines[0]
    assert lines[-1].startswith("No head took up looking from every word at the same few "
                                "tokens") and \
        lines[-1].endswith("such maps became fewer: 50% of all maps before, 40% after.")
    assert drift_reading(np.ones((2, 2)), np.ones(3), vb, vb)[0].startswith("Nothing changed")


def test_vertical_share_counts_vertical_and_mixed():
    v, vd, dg = (PATTERN_TYPES.index(k) for k in ("vertical", "vertical+diagonal", "diagonal"))
    types = np.array([[[v, dg]], [[vd, dg]], [[dg, v]], [[dg, dg]]])  # [N=4, L=1, H=2]
    np.testing.assert_allclose(vertical_share(types), [[0.5, 0.25]])
