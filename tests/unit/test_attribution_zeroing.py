"""Value zeroing (analysis.attribution.zeroing): the batched pass equals the one-token loop and
the batched rerun of the whole layer, identity attention gives no mixing, rows sum to 1."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core import hooks
from analysis.attribution import zeroing
from analysis.attribution.mixing import layer_inputs, pre_ln
from analysis.core.encoding import encode
from analysis.core.forward import forward, rerun_after_attention, rerun_layer
from attribution_models import tiny_classifier
from bench.references.attribution import value_zeroing_layer_loop, value_zeroing_loop


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_classifier(tmp_path_factory)


def _internals(loaded, text="The wine was served warm, sadly.", pair="food"):
    enc = encode(loaded.tokenizer, text, pair)
    fw = forward(loaded.model, loaded.tokenizer, [enc], hidden_states=True,
                 capture=("value_vectors",))
    states = [h[0, :enc.n_tokens].float() for h in fw.hidden_states]
    return states, layer_inputs(fw, hooks.layer_parts(loaded.model))


def test_batched_equals_loop_and_rerun_and_rows_sum_to_one(tiny):
    states, lis = _internals(tiny)
    n = len(states[0])
    batched = zeroing.value_zeroing(tiny.model, lis, states)
    loop = value_zeroing_loop(tiny.model, states)
    assert batched.shape == (2, n, n)
    np.testing.assert_allclose(batched, loop, atol=2e-5)
    np.testing.assert_allclose(batched.sum(-1), 1.0, atol=1e-9)
    assert (batched > 0).sum() > batched.size // 2  # real mixing in a random model
    raw = zeroing.value_zeroing_layer(tiny.model, 1, lis[1], states[2])
    np.testing.assert_allclose(raw, zeroing.value_zeroing_layer_rerun(
        tiny.model, 1, states[1], states[2]), rtol=1e-3, atol=1e-7)


def test_blocks_of_copies_give_the_same(tiny, monkeypatch):
    states, lis = _internals(tiny)
    whole = zeroing.value_zeroing_layer(tiny.model, 1, lis[1], states[2])
    rerun = zeroing.value_zeroing_layer_rerun(tiny.model, 1, states[1], states[2])
    monkeypatch.setattr(zeroing, "BUDGET_BYTES", 1)  # one copy per pass
    assert zeroing.block_size(len(states[0]), tiny.model.config) == 1
    np.testing.assert_allclose(zeroing.value_zeroing_layer(tiny.model, 1, lis[1], states[2]),
                               whole, atol=1e-7)
    np.testing.assert_allclose(zeroing.value_zeroing_layer_rerun(tiny.model, 1, states[1],
                                                                 states[2]), rerun, atol=1e-7)


def test_reruns_reproduce_the_layer(tiny):
    states, lis = _internals(tiny)
    out = rerun_layer(tiny.model, 0, states[0].unsqueeze(0))[0]
    assert float((out - states[1]).abs().max()) < 1e-5
    rest = rerun_after_attention(tiny.model, 0, pre_ln(lis[0]).float().unsqueeze(0))[0]
    assert float((rest - states[1]).abs().max()) < 1e-5


def test_identity_attention_gives_no_mixing(tiny):
    """With every token attending only to itself, zeroing token j's values moves only token
    j's output: by the whole-layer rerun under an additive mask of -inf off the diagonal, and
    by the batched pass with identity attention probabilities."""
    import torch

    states, lis = _internals(tiny)
    n = len(states[0])
    mask = torch.full((n, n), float("-inf"))
    mask.fill_diagonal_(0.0)
    mask = mask[None, None]
    orig = rerun_layer(tiny.model, 0, states[0].unsqueeze(0), attention_mask=mask)[0]
    raw = zeroing.value_zeroing_layer_rerun(tiny.model, 0, states[0], orig, attention_mask=mask)
    li = lis[0]
    li.probs = torch.eye(n, dtype=torch.float64).expand(li.probs.shape[0], n, n).clone()
    orig2 = rerun_after_attention(tiny.model, 0, pre_ln(li).float().unsqueeze(0))[0]
    raw2 = zeroing.value_zeroing_layer(tiny.model, 0, li, orig2)
    np.testing.assert_allclose(orig2.numpy(), orig.numpy(), atol=1e-5)
    for r in (raw, raw2):
        assert (np.diag(r) > 1e-6).all()
        assert np.abs(r - np.diag(np.diag(r))).max() < 1e-9
        np.testing.assert_allclose(zeroing.normalise_rows(r), np.eye(n), atol=1e-6)


def test_cosine_distance_by_hand():
    np.testing.assert_allclose(zeroing.cosine_distance([[1.0, 0.0], [1.0, 1.0]],
                                                       [[0.0, 2.0], [2.0, 2.0]]), [1.0, 0.0],
                               atol=1e-12)
    assert zeroing.cosine_distance([0.0, 0.0], [1.0, 0.0]) == 0.0


def test_loop_reference_layer_matches_batched(tiny):
    states, lis = _internals(tiny, "Great pizza.", None)
    np.testing.assert_allclose(
        zeroing.value_zeroing_layer(tiny.model, 0, lis[0], states[1]),
        value_zeroing_layer_loop(tiny.model, 0, states[0], states[1]), rtol=1e-3, atol=1e-7)
