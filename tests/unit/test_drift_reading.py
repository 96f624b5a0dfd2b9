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


# -- intervals over examples (issue 35) ---------------------------------------------------------

def _examples(layer_means, n=30, sd=0.01, seed=0, H=2):
    """[N, L, H] cosines whose layer means are exactly ``layer_means`` (centred noise)."""
    rng = np.random.default_rng(seed)
    e = rng.normal(0, sd, (n, len(layer_means), H))
    return np.asarray(layer_means, float)[None, :, None] + e - e.mean(0)


def _read(ex):
    L, H = ex.shape[1:]
    z = np.zeros((L, H))
    return drift_reading(ex.mean(0), np.ones(L + 1), z, z, cosine_examples=ex)


def test_layer_interval_is_the_normal_interval_over_examples():
    from analysis.drift.reading import layer_cosine_ci, late_minus_early_ci

    ex = _examples([0.9, 0.8, 0.7, 0.6], n=12, seed=3)
    per = ex.mean(2)[:, 2]  # layer 3's mean over heads, per example
    half = 1.959964 * per.std(ddof=1) / np.sqrt(len(per))
    m, lo, hi = layer_cosine_ci(ex)
    np.testing.assert_allclose([m[2], lo[2], hi[2]], [0.7, 0.7 - half, 0.7 + half], atol=1e-12)
    d = ex.mean(2)[:, 2:].mean(1) - ex.mean(2)[:, :2].mean(1)
    half = 1.959964 * d.std(ddof=1) / np.sqrt(len(d))
    np.testing.assert_allclose(late_minus_early_ci(ex), [-0.2, -0.2 - half, -0.2 + half],
                               atol=1e-12)


def test_clear_most_changed_layer_and_later_layers():
    ex = _examples([0.95, 0.9, 0.8, 0.6])
    from analysis.drift.reading import layer_cosine_ci

    _, lo, hi = layer_cosine_ci(ex)
    line = _read(ex)[0]
    assert line.startswith(f"Layer 4 changed most (mean head cosine 0.600, 95% {lo[3]:.3f} to "
                           f"{hi[3]:.3f}), and layer 1 least (0.950, 95% {lo[0]:.3f} to "
                           f"{hi[0]:.3f}); later layers changed more than earlier ones: the "
                           "later half's mean cosine minus the earlier half's is -0.225, 95% ")
    assert "within noise" not in line


def test_within_noise_layers_and_halves():
    # layers 3 and 4 0.002 apart with a spread of 0.05: their intervals overlap; halves equal
    ex = _examples([0.802, 0.9, 0.8, 0.9], sd=0.05)
    line = _read(ex)[0]
    assert line.startswith("Layer 3 changed most (mean head cosine 0.800, 95% ")
    assert ", within noise of layer 1 (0.802, 95% " in line
    assert ("later and earlier layers changed alike, within noise: the later half's mean "
            "cosine minus the earlier half's is -0.001, 95% ") in line
