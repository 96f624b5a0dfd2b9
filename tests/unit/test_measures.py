"""No-op statistics of one map and of a padded batch: each statistic by hand on tiny maps,
norm shares by hand, batch == one by one (docs/METHODS.md sections 3 and 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.core.encoding import Encoding
from analysis.noop import batch_stats, example_norm_stats, example_stats, selectors


def fake_encoding(tokens, special):
    n = len(tokens)
    return Encoding(tokens=list(tokens), input_ids=list(range(n)), token_type_ids=[0] * n,
                    segments=np.zeros(n, dtype=np.int8), special=np.array(special, dtype=bool),
                    word_ids=list(range(n)), words=list(tokens), text=" ".join(tokens))


ENC4 = fake_encoding(["[CLS]", "a", ",", "[SEP]"], [1, 0, 0, 1])
# head 1: hand-made rows; head 2: uniform
HEAD1 = np.array([[0.5, 0.5, 0.0, 0.0],
                  [0.25, 0.25, 0.25, 0.25],
                  [0.0, 1.0, 0.0, 0.0],
                  [0.0, 0.0, 0.2, 0.8]])
MAP4 = np.stack([HEAD1, np.full((4, 4), 0.25)])[None]  # [L=1, H=2, 4, 4]

ENT_ROW3 = -(0.2 * math.log(0.2) + 0.8 * math.log(0.8))
EXPECTED = {
    #             head 1 (by hand)                                          head 2 (uniform)
    "cls": [(0.5 + 0.25) / 4, 0.25],
    "sep": [(0.25 + 0.8) / 4, 0.25],
    "punct": [(0.25 + 0.2) / 4, 0.25],
    "self": [(0.5 + 0.25 + 0 + 0.8) / 4, 0.25],
    "prev": [(0.25 + 1.0 + 0.2) / 4, 3 * 0.25 / 4],
    "next": [(0.5 + 0.25 + 0.0) / 4, 3 * 0.25 / 4],
    "entropy": [(math.log(2) + math.log(4) + 0 + ENT_ROW3) / 4, math.log(4)],
    "entropy_cls": [math.log(2), math.log(4)],
}


def test_selectors_single_and_pair():
    s = selectors(ENC4)
    assert s["cls"].tolist() == [True, False, False, False]
    assert s["sep"].tolist() == [False, False, False, True]
    assert s["punct"].tolist() == [False, False, True, False]
    assert s["other"].tolist() == [False, True, False, False]
    pair = fake_encoding(["[CLS]", "hi", ".", "[SEP]", "yo", "[UNK]", "[SEP]"],
                         [1, 0, 0, 1, 0, 0, 1])
    s = selectors(pair)
    assert s["sep"].tolist() == [False, False, False, True, False, False, True]
    assert s["other"].tolist() == [False, True, False, False, True, True, False]
    roberta = fake_encoding(["<s>", "x", "</s>", "</s>", "y", "</s>"], [1, 0, 1, 1, 0, 1])
    assert selectors(roberta)["sep"].tolist() == [False, False, True, True, False, True]
    assert selectors(roberta)["cls"].tolist() == [True, False, False, False, False, False]


def test_example_stats_by_hand():
    got = example_stats(MAP4, ENC4)
    assert set(got) == set(EXPECTED)
    for name, (h1, h2) in EXPECTED.items():
        assert got[name].shape == (1, 2)
        assert got[name][0, 0] == pytest.approx(h1, abs=1e-12), name
        assert got[name][0, 1] == pytest.approx(h2, abs=1e-12), name
    # the key categories partition every row: cls + sep + punct + other == 1
    other = (MAP4.sum(2) * selectors(ENC4)["other"]).sum(-1) / 4
    total = got["cls"] + got["sep"] + got["punct"] + other
    assert np.allclose(total, 1.0)


def test_example_stats_custom_punct():
    enc = fake_encoding(["[CLS]", "a", "!", "[SEP]"], [1, 0, 0, 1])
    assert example_stats(MAP4, enc)["punct"][0, 0] == 0.0
    assert example_stats(MAP4, enc, punct=("!",))["punct"][0, 0] == pytest.approx(0.45 / 4)


def test_example_norm_stats_by_hand():
    enc = fake_encoding(["[CLS]", "[SEP]"], [1, 1])
    attn = np.full((1, 1, 2, 2), 0.5)
    got = example_norm_stats(attn, np.array([[[3.0, 1.0]]]), enc)
    assert got["norm_cls"][0, 0] == pytest.approx(0.75)  # 0.5*3 / (0.5*3 + 0.5*1)
    assert got["norm_sep"][0, 0] == pytest.approx(0.25)
    # equal value norms: the norm shares are the weights
    same = example_norm_stats(MAP4, np.ones((1, 2, 4)), ENC4)
    w = example_stats(MAP4, ENC4)
    for k in ("cls", "sep", "punct"):
        assert np.allclose(same[f"norm_{k}"], w[k])


def _softmax_padded(rng, lengths, L=2, H=3):
    """Random post-softmax maps padded like a model batch (padded keys get 0)."""
    import torch

    N = max(lengths)
    atts = []
    for _ in range(L):
        logits = torch.randn(len(lengths), H, N, N, generator=rng, dtype=torch.float64)
        for b, n in enumerate(lengths):
            logits[b, :, :, n:] = -1e9
        atts.append(torch.softmax(logits, -1).float())
    return atts


def test_batch_stats_equals_example_stats_on_padded_maps():
    import torch

    rng = torch.Generator().manual_seed(0)
    encs = [fake_encoding(["[CLS]", "x", ",", "y", ".", "[SEP]"], [1, 0, 0, 0, 0, 1]),
            fake_encoding(["[CLS]", "z", "[SEP]"], [1, 0, 1]),
            fake_encoding(["[CLS]", "p", "[SEP]", "q", "r", ",", "[SEP]"], [1, 0, 1, 0, 0, 0, 1])]
    lengths = [len(e.tokens) for e in encs]
    atts = _softmax_padded(rng, lengths)
    fn = [torch.rand(3, 3, max(lengths), generator=rng) + 0.1 for _ in atts]
    got = batch_stats(atts, encs, fnorms=fn)
    for b, enc in enumerate(encs):
        n = lengths[b]
        crop = np.stack([a[b, :, :n, :n].numpy() for a in atts])
        ref = example_stats(crop, enc)
        ref.update(example_norm_stats(crop, np.stack([f[b, :, :n].numpy() for f in fn]), enc))
        for k, v in ref.items():
            assert np.abs(got[k][b] - v).max() < 1e-6, (b, k)
    # a subset computes only what is asked, with the same values
    some = batch_stats(atts, encs, metrics=("sep", "next", "entropy_cls"))
    assert sorted(some) == ["entropy_cls", "next", "sep"]
    for k in some:
        np.testing.assert_array_equal(some[k], got[k])
    with pytest.raises(ValueError, match="Unknown statistics"):
        batch_stats(atts, encs, metrics=("sep", "nope"))
