"""The 8-bit quantisation of the attention views (analysis.attention.views.quantise) gives the
bytes of the float64 formula ``rint(clip(w, 0, 1) * 255)`` on float32 maps too, where it now
works in float32 (issue 30: the first view of a 512-token pair at BERT-base spent most of its
time in four float64 copies of the maps)."""

from __future__ import annotations

import numpy as np

from analysis.attention.views import quantise


def reference(w) -> np.ndarray:
    w = np.nan_to_num(np.asarray(w, dtype=np.float64), nan=0.0)
    return np.rint(np.clip(w, 0.0, 1.0) * 255).astype(np.uint8)


def boundary_weights() -> np.ndarray:
    """Every float32 within 40 ulps of each rounding boundary (k + 0.5) / 255, where float32's
    own rounding of w * 255 could cross it."""
    out = []
    for k in range(255):
        w = np.float32((k + 0.5) / 255)
        for _ in range(40):
            w = np.nextafter(w, np.float32(0))
        for _ in range(81):
            out.append(w)
            w = np.nextafter(w, np.float32(1))
    return np.asarray(out, dtype=np.float32)


def test_float32_path_equals_the_float64_formula_at_every_boundary():
    w = boundary_weights()
    assert np.array_equal(quantise(w), reference(w))
    # the boundaries are where the rounding changes: both sides of each are present
    assert len(np.unique(quantise(w))) == 256
    # and float32's own rounding alone does cross some of them (what the float64 redo fixes)
    naive = np.rint(w * np.float32(255)).astype(np.uint8)
    assert (naive != reference(w)).sum() > 0


def test_float32_path_on_softmax_maps_and_odd_values():
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=3.0, size=(2, 3, 64, 64)).astype(np.float32)
    maps = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    maps[0, 0, 0, :4] = [np.nan, np.inf, -np.inf, -0.5]
    maps[0, 0, 1, :3] = [1.5, 1.0, 0.0]
    got = quantise(maps)
    assert got.dtype == np.uint8 and got.shape == maps.shape
    assert np.array_equal(got, reference(maps))
    assert list(got[0, 0, 0, :4]) == [0, 255, 0, 0]
    assert list(got[0, 0, 1, :3]) == [255, 255, 0]
    assert maps.dtype == np.float32 and np.isnan(maps[0, 0, 0, 0])  # the input is untouched


def test_float64_input_keeps_the_float64_path():
    w = np.array([0.5 / 255, 1.5 / 255, 0.2, 0.99999], dtype=np.float64)
    assert np.array_equal(quantise(w), reference(w))
    assert list(quantise(w)) == [0, 2, 51, 255]  # rint: halves to even (0.5 -> 0, 1.5 -> 2)
