"""Causal patching on tiny classifiers with known answers (docs/METHODS.md, "Causal
patching"): all heads of a layer = the layer's attention output, the whole residual stream
after the last layer = the counterfactual's logits, nothing patched = 0, the batched per-head
forward = one patch at a time, the normalised metric by hand, unequal lengths refused."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.batching import collate
from analysis.core.encoding import encode
from analysis.core.errors import InputError
from analysis.core.forward import forward, forward_patched
from analysis.core.models import LoadedModel
from analysis.patching import patch_pair
from analysis.patching.metric import Contrast, contrast, logit_diff, normalised
from analysis.patching.run import head_masks
from importance_util import tiny_classifier

TEXT, COUNTER = ("the pasta was delicious", "food"), ("the pasta was awful", "food")


@pytest.fixture(scope="module")
def tiny():
    import torch

    model, tok = tiny_classifier(3, layers=3, dtype=torch.float64)
    return LoadedModel("tiny", "tiny", tok, model, "bert", 3, 4, 0, 128)


def _runs(tiny):
    tok, model = tiny.tokenizer, tiny.model
    encs = [encode(tok, *TEXT), encode(tok, *COUNTER)]
    inputs = [collate(tok, [e]) for e in encs]
    outs = [forward(model, inputs=i, attentions=False, hidden_states=True,
                    capture=("context", "attention_output", "mlp_output")) for i in inputs]
    return encs, inputs, outs


def test_every_head_of_a_layer_together_is_the_layers_attention_output(tiny):
    encs, inputs, outs = _runs(tiny)
    T, D = encs[0].n_tokens, 32
    for layer in range(3):
        heads = forward_patched(tiny.model, inputs[0], "heads", layer,
                                outs[1].captured["context"][layer][0],
                                np.ones((1, T, D), bool))
        attn = forward_patched(tiny.model, inputs[0], "attention", layer,
                               outs[1].captured["attention_output"][layer][0],
                               np.ones((1, T, 1), bool))
        np.testing.assert_allclose(heads, attn, atol=1e-5)
        # and it changes the output: the comparison is not between two unpatched runs
        assert np.abs(heads - outs[0].output.logits.numpy()).max() > 1e-3


def test_the_whole_residual_after_the_last_layer_gives_the_counterfactuals_logits(tiny):
    encs, inputs, outs = _runs(tiny)
    T = encs[0].n_tokens
    patched = forward_patched(tiny.model, inputs[0], "residual", 2, outs[1].hidden_states[3][0],
                              np.ones((1, T, 1), bool))
    np.testing.assert_allclose(patched, outs[1].output.logits.numpy(), atol=1e-5)
    assert np.abs(outs[0].output.logits.numpy() - outs[1].output.logits.numpy()).max() > 1e-2


def test_patching_nothing_gives_the_clean_logits_and_zero(tiny):
    encs, inputs, outs = _runs(tiny)
    T = encs[0].n_tokens
    for site, width in (("heads", 32), ("residual", 1), ("mlp", 1)):
        src = {"heads": outs[1].captured["context"], "residual": outs[1].hidden_states[1:],
               "mlp": outs[1].captured["mlp_output"]}[site][1][0]
        logits = forward_patched(tiny.model, inputs[0], site, 1, src, np.zeros((4, T, width), bool))
        np.testing.assert_allclose(logits, np.repeat(outs[0].output.logits.numpy(), 4, 0),
                                   atol=1e-10)
    c = contrast(outs[0].output.logits[0].numpy(), outs[1].output.logits[0].numpy())
    assert normalised(c.clean, c, "noising") == 0 and normalised(c.counter, c, "denoising") == 0


def test_the_batched_per_head_forward_equals_one_patch_at_a_time(tiny):
    encs, inputs, outs = _runs(tiny)
    T = encs[0].n_tokens
    src = outs[1].captured["context"][2][0]
    masks = head_masks(4, T, 32)
    together = forward_patched(tiny.model, inputs[0], "heads", 2, src, masks)
    alone = np.concatenate([forward_patched(tiny.model, inputs[0], "heads", 2, src, m[None])
                            for m in masks])
    np.testing.assert_allclose(together, alone, atol=1e-10)


def test_patch_pair_known_answers_both_directions(tiny):
    for direction in ("noising", "denoising"):
        r = patch_pair(tiny, *TEXT, *COUNTER, direction=direction)
        L, T = 3, len(r.tokens)
        assert r.heads.shape == (L, 4) and r.positions["residual"].shape == (L, T)
        # after the last layer the classifier reads [CLS] only: that position carries it all
        np.testing.assert_allclose(r.positions["residual"][-1], [1.0] + [0.0] * (T - 1),
                                   atol=1e-6)
        # the changed word is the only position that differs before the first layer's mixing
        assert r.differs == [4]
        assert np.isfinite(r.heads).all()
    enc = encode(tiny.tokenizer, *TEXT)
    assert r.tokens == enc.tokens


def test_the_metric_by_hand():
    clean, counter = np.array([2.0, 0.5, -1.0]), np.array([0.0, 1.5, -1.0])
    c = contrast(clean, counter)
    assert (c.a, c.b) == (0, 1) and c.clean == pytest.approx(1.5) and c.counter == -1.5
    assert normalised(0.0, c, "noising") == pytest.approx(0.5)
    assert normalised(0.0, c, "denoising") == pytest.approx(0.5)
    assert normalised(-1.5, c, "noising") == pytest.approx(1.0)
    assert normalised(1.5, c, "denoising") == pytest.approx(1.0)
    assert logit_diff(clean, 0, 2) == 3.0
    # the same prediction: the class gaining most on it is the contrast
    same = contrast(np.array([3.0, 0.0, 1.0]), np.array([2.0, 0.0, 1.9]))
    assert (same.a, same.b) == (0, 2) and same.counter == pytest.approx(0.1)
    assert np.isnan(normalised(1.0, Contrast(0, 1, 1.0, 1.0), "noising"))


def test_unequal_lengths_are_refused_in_one_line(tiny):
    with pytest.raises(InputError) as exc:
        patch_pair(tiny, "the pasta was delicious", "food", "the pasta was very delicious",
                   "food")
    msg = str(exc.value)
    assert "\n" not in msg and "has 8 tokens and the counterfactual 9" in msg
