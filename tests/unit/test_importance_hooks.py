"""The hooks and forwards of head importance (analysis.core.hooks.ablated_heads / fan_out /
head_gates, analysis.core.forward.forward_ablations / gate_gradients) on tiny models: uniform
attention against a hand computation, zero-output heads, batched against one at a time,
gradients against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from analysis.core import hooks
from analysis.core.forward import forward, forward_ablations, gate_gradients
from importance_util import pair_inputs, tiny_classifier


def _layer0_by_hand(model, inputs, head: int) -> torch.Tensor:
    """Layer 0's output of a BERT computed from its weights, with head ``head``'s attention
    map replaced by 1/n over each example's n real tokens."""
    bert = model.bert
    x = bert.embeddings(input_ids=inputs["input_ids"], token_type_ids=inputs["token_type_ids"])
    lay = bert.encoder.layer[0]
    att = lay.attention.self
    H, dh = 4, 8
    B, T, D = x.shape

    def heads(t):
        return t.reshape(B, T, H, dh).permute(0, 2, 1, 3)

    q, k, v = heads(att.query(x)), heads(att.key(x)), heads(att.value(x))
    real = inputs["attention_mask"].to(x.dtype)  # [B, T]
    scores = q @ k.transpose(-1, -2) / dh ** 0.5 + (1 - real)[:, None, None, :] * -1e9
    probs = torch.softmax(scores, -1)
    uniform = real[:, None, :] / real.sum(1)[:, None, None]  # [B, 1, T]: 1/n on real tokens
    probs[:, head] = uniform.expand(B, T, T)
    ctx = (probs @ v).permute(0, 2, 1, 3).reshape(B, T, D)
    a = lay.attention.output.LayerNorm(lay.attention.output.dense(ctx) + x)
    inter = lay.intermediate(a)
    return lay.output.LayerNorm(lay.output.dense(inter) + a)


def test_uniform_disabling_equals_a_hand_computation():
    model, tok = tiny_classifier(dtype=torch.float64)
    inputs = pair_inputs(tok)
    assert inputs["attention_mask"].sum(1).tolist()[1] < inputs["input_ids"].shape[1]  # padded
    dis = torch.zeros((3, 2, 4), dtype=torch.bool)
    dis[:, 0, 2] = True
    layer0 = hooks.encoder_layers(model)[0]
    with torch.no_grad(), hooks.ablated_heads(model, dis, "uniform", inputs["attention_mask"]), \
            hooks.capture([layer0]) as out:
        forward(model, inputs=inputs, attentions=False)
        expected = _layer0_by_hand(model, inputs, head=2)
    got = out[0][0] if isinstance(out[0], tuple) else out[0]
    real = inputs["attention_mask"].bool()
    assert torch.allclose(got[real], expected[real], atol=1e-10)
    # and the head's uniform map changes the layer (the test is not vacuous)
    with torch.no_grad(), hooks.capture([layer0]) as plain:
        forward(model, inputs=inputs, attentions=False)
    p = plain[0][0] if isinstance(plain[0], tuple) else plain[0]
    assert (p[real] - expected[real]).abs().max() > 1e-4


@pytest.mark.parametrize("method", ["uniform", "mask"])
def test_disabling_a_head_whose_output_is_zero_changes_nothing(method):
    model, tok = tiny_classifier(dtype=torch.float64)
    inputs = pair_inputs(tok)
    with torch.no_grad():  # head 1 of layer 1 writes nothing: its columns of W_O are zero
        model.bert.encoder.layer[1].attention.output.dense.weight[:, 8:16] = 0.0
    dis = np.zeros((3, 2, 4), dtype=bool)
    dis[1, 1, 1] = True  # the zero head
    dis[2, 1, 2] = True  # another head, for contrast
    logits = forward_ablations(model, inputs, dis, method)
    assert np.abs(logits[1] - logits[0]).max() < 1e-6
    assert np.abs(logits[2] - logits[0]).max() > 1e-3


@pytest.mark.parametrize("method", ["uniform", "mask"])
def test_many_ablations_per_forward_equal_one_at_a_time(method):
    model, tok = tiny_classifier(layers=3)
    inputs = pair_inputs(tok)
    dis = np.zeros((5, 3, 4), dtype=bool)
    dis[1, 1, 0] = True
    dis[2, 1] = True
    dis[3, 2, 3] = True
    dis[4, 1, 1] = dis[4, 2, 2] = True
    together = forward_ablations(model, inputs, dis, method)  # fans out at layer 1
    for r in range(5):
        alone = forward_ablations(model, inputs, dis[r:r + 1], method)[0]
        assert np.abs(together[r] - alone).max() < 1e-5
    assert np.abs(together[2] - together[0]).max() > 1e-3
    if method == "mask":  # Michel's way is the existing head mask
        ref = forward(model, inputs=inputs, attentions=False, head_mask=1 - dis[2]).output.logits
        assert np.abs(together[2] - ref.numpy()).max() < 1e-5


def test_gate_and_mask_gradients_against_finite_differences():
    model, tok = tiny_classifier(dtype=torch.float64)
    inputs = pair_inputs(tok)
    labels = np.array([0, 2, 1])
    losses, grads = gate_gradients(model, inputs, labels)
    assert grads.shape == (3, 2, 4)
    ref = torch.nn.functional.cross_entropy(
        forward(model, inputs=inputs, attentions=False).output.logits, torch.tensor(labels),
        reduction="none").numpy()
    assert np.allclose(losses, ref, atol=1e-12)
    eps = 1e-6
    for layer, head in ((0, 1), (1, 3)):
        def loss_at(value):
            gates = torch.ones((3, 2, 4), dtype=torch.float64)
            gates[:, layer, head] = value
            with torch.no_grad(), hooks.head_gates(model, gates):
                lg = forward(model, inputs=inputs, attentions=False).output.logits
            return torch.nn.functional.cross_entropy(lg, torch.tensor(labels),
                                                     reduction="none").numpy()

        # a gate of 0 is the head mask (Michel's disabling): same loss as masked_heads
        mask = np.ones((2, 4))
        mask[layer, head] = 0
        with torch.no_grad():
            lg = forward(model, inputs=inputs, attentions=False, head_mask=mask).output.logits
        masked = torch.nn.functional.cross_entropy(lg, torch.tensor(labels),
                                                   reduction="none").numpy()
        assert np.allclose(loss_at(0.0), masked, atol=1e-6)
        fd = (loss_at(1 + eps) - loss_at(1 - eps)) / (2 * eps)
        assert np.allclose(grads[:, layer, head], fd, rtol=1e-5, atol=1e-9)
        assert np.abs(fd).max() > 1e-6
    assert model.bert.embeddings.word_embeddings.weight.grad is None  # weights untouched
