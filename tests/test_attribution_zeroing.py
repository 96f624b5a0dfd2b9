"""Value zeroing (analysis.attribution.zeroing): the batched pass equals the one-token loop,
identity attention gives no mixing, rows sum to 1."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.attribution import zeroing
from analysis.encoding import encode
from analysis.forward import forward
from attribution_models import tiny_classifier
from bench.reference_attribution import value_zeroing_layer_loop, value_zeroing_loop


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_classifier(tmp_path_factory)


def _states(loaded, text="The wine was served warm, sadly.", pair="food"):
    enc = encode(loaded.tokenizer, text, pair)
    fw = forward(loaded.model, loaded.tokenizer, [enc], hidden_states=True)
    return [h[0, :enc.n_tokens].float() for h in fw.hidden_states]


def test_batched_equals_loop_and_rows_sum_to_one(tiny):
    states = _states(tiny)
    batched = zeroing.value_zeroing(tiny.model, states)
    loop = value_zeroing_loop(tiny.model, states)
    assert batched.shape == (2, len(states[0]), len(states[0]))
    np.testing.assert_allclose(batched, loop, atol=1e-5)
    np.testing.assert_allclose(batched.sum(-1), 1.0, atol=1e-9)
    assert (batched > 0).sum() > batched.size // 2  # real mixing in a random model


def test_blocks_of_copies_give_the_same(tiny, monkeypatch):
    states = _states(tiny)
    whole = zeroing.value_zeroing_layer(tiny.model, 1, states[1], states[2])
    monkeypatch.setattr(zeroing, "BUDGET_BYTES", 1)  # one copy per pass
    assert zeroing.block_size(len(states[0]), tiny.model.config) == 1
    np.testing.assert_allclose(zeroing.value_zeroing_layer(tiny.model, 1, states[1], states[2]),
                               whole, atol=1e-6)


def test_unzeroed_rerun_reproduces_the_layer(tiny):
    from analysis.forward import rerun_layer

    states = _states(tiny)
    out = rerun_layer(tiny.model, 0, states[0].unsqueeze(0))[0]
    assert float((out - states[1]).abs().max()) < 1e-5


def test_identity_attention_gives_no_mixing(tiny):
    """With every token attending only to itself (an additive mask of -inf off the diagonal),
    zeroing token j's values moves only token j's output."""
    import torch

    from analysis.forward import rerun_layer

    states = _states(tiny)
    n = len(states[0])
    mask = torch.full((n, n), float("-inf"))
    mask.fill_diagonal_(0.0)
    mask = mask[None, None]
    orig = rerun_layer(tiny.model, 0, states[0].unsqueeze(0), attention_mask=mask)[0]
    raw = zeroing.value_zeroing_layer(tiny.model, 0, states[0], orig, attention_mask=mask)
    assert (np.diag(raw) > 1e-6).all()
    off = raw - np.diag(np.diag(raw))
    assert np.abs(off).max() < 1e-9
    np.testing.assert_allclose(zeroing.normalise_rows(raw), np.eye(n), atol=1e-6)


def test_cosine_distance_by_hand():
    np.testing.assert_allclose(zeroing.cosine_distance([[1.0, 0.0], [1.0, 1.0]],
                                                       [[0.0, 2.0], [2.0, 2.0]]), [1.0, 0.0],
                               atol=1e-12)
    assert zeroing.cosine_distance([0.0, 0.0], [1.0, 0.0]) == 0.0


def test_loop_reference_layer_matches_batched(tiny):
    states = _states(tiny, "Great pizza.", None)
    np.testing.assert_allclose(
        zeroing.value_zeroing_layer(tiny.model, 0, states[0], states[1]),
        value_zeroing_layer_loop(tiny.model, 0, states[0], states[1]), atol=1e-6)
