"""The per-batch torch measures equal the one-example definitions on each example's real
tokens."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from analysis.drift import BatchMasks, batch_cosine, batch_features, batch_rsa, head_cosine
from analysis.core.encoding import Encoding

from test_drift_patterns import pattern_features
from test_drift_similarity import rsa


def _random_maps(rng, lengths, h=3, pad_value=0.3):
    t = max(lengths)
    out = np.full((len(lengths), h, t, t), pad_value, dtype=np.float32)
    for b, n in enumerate(lengths):
        x = rng.random((h, n, n)).astype(np.float32) ** 4
        out[b, :, :n, :n] = x / x.sum(-1, keepdims=True)
    return out


def test_batched_measures_match_per_example_on_real_tokens():
    """Padding cells hold garbage on purpose: only the real tokens may count."""
    rng = np.random.default_rng(1)
    lengths = [7, 4, 6]
    a, b = _random_maps(rng, lengths), _random_maps(rng, lengths, pad_value=0.9)
    encs = []
    for n in lengths:
        special = np.zeros(n, bool)
        special[[0, n - 1]] = True
        segments = np.zeros(n, np.int8)
        segments[n // 2:] = 1
        encs.append(Encoding(tokens=["t"] * n, input_ids=[1] * n, token_type_ids=None,
                             segments=segments, special=special, word_ids=list(range(n)),
                             words=["t"] * n, text="t"))
    masks = BatchMasks.of(encs)
    am, bm = masks.crop(torch.from_numpy(a)), masks.crop(torch.from_numpy(b))
    cos = batch_cosine(am, bm).numpy()
    feats = batch_features(am, masks).numpy()
    hid_a = rng.normal(size=(3, 7, 5)).astype(np.float32)
    hid_b = rng.normal(size=(3, 7, 4)).astype(np.float32)
    r = batch_rsa(torch.from_numpy(hid_a), torch.from_numpy(hid_b), masks.valid).numpy()
    for k, n in enumerate(lengths):
        ref = head_cosine(a[k][None, :, :n, :n], b[k][None, :, :n, :n])[0]
        np.testing.assert_allclose(cos[k], ref, atol=1e-6)
        ref_f = pattern_features(a[k, :, :n, :n], encs[k].special, encs[k].segments)
        np.testing.assert_allclose(feats[k], ref_f, atol=1e-6)
        assert r[k] == pytest.approx(rsa(hid_a[k, :n], hid_b[k, :n]), abs=1e-5)
