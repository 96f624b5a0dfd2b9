"""Gradient attributions through Captum (analysis.attribution.gradients): completeness of
integrated gradients, equality with LayerIntegratedGradients on the word-embedding layer,
gradient x input by hand, and a model without a head refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.attribution.gradients import baseline_ids, gradient_scores, model_inputs
from analysis.core.encoding import encode
from analysis.core.errors import InputError
from attribution_models import tiny_classifier
from builders import one_line


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_classifier(tmp_path_factory)


TEXT, PAIR = "The staff were rude and the soup was cold.", "service"


def test_integrated_gradients_completeness_within_one_percent(tiny):
    enc = encode(tiny.tokenizer, TEXT, PAIR)
    g = gradient_scores(tiny, enc, steps=50)
    assert abs(g.delta_f) > 1e-3  # the prediction really moves between baseline and input
    assert g.completeness_relative < 0.01
    assert abs(g.integrated_gradients.sum() - g.delta_f) <= 0.01 * abs(g.delta_f)
    assert g.completeness_gap == pytest.approx(abs(g.integrated_gradients.sum() - g.delta_f),
                                               abs=1e-6)


def test_equals_layer_integrated_gradients_on_the_word_embeddings(tiny):
    import torch
    from captum.attr import LayerIntegratedGradients

    enc = encode(tiny.tokenizer, TEXT, PAIR)
    g = gradient_scores(tiny, enc, steps=20)
    ids, mask, tt = model_inputs(tiny, enc)

    def fn(input_ids, attention_mask, token_type_ids):
        out = tiny.model(input_ids=input_ids, attention_mask=attention_mask,
                         token_type_ids=token_type_ids)
        return torch.softmax(out.logits, -1)

    lig = LayerIntegratedGradients(fn, tiny.model.get_input_embeddings())
    ref = lig.attribute(ids, baselines=baseline_ids(tiny, enc), target=g.target,
                        additional_forward_args=(mask, tt), n_steps=20)
    np.testing.assert_allclose(g.integrated_gradients, ref[0].sum(-1).detach().numpy(),
                               atol=1e-6)


def test_grad_input_by_hand_and_baseline_keeps_specials(tiny):
    import torch

    enc = encode(tiny.tokenizer, TEXT, PAIR)
    g = gradient_scores(tiny, enc, steps=4)
    ids, mask, tt = model_inputs(tiny, enc)
    emb = tiny.model.get_input_embeddings()(ids).detach().requires_grad_()
    p = torch.softmax(tiny.model(inputs_embeds=emb, attention_mask=mask,
                                 token_type_ids=tt).logits, -1)
    assert g.target == int(p[0].argmax())
    (grad,) = torch.autograd.grad(p[0, g.target], emb)
    np.testing.assert_allclose(g.grad_input, (grad * emb)[0].norm(dim=-1).detach().numpy(),
                               rtol=1e-5, atol=1e-9)
    base = baseline_ids(tiny, enc)[0].tolist()
    pad = tiny.tokenizer.pad_token_id
    for i, s in enumerate(enc.special):
        assert base[i] == (enc.input_ids[i] if s else pad)


def test_model_without_a_head_is_refused_in_one_line(default_model):
    enc = encode(default_model.tokenizer, "The food was great.")
    with pytest.raises(InputError) as exc:
        gradient_scores(default_model, enc)
    assert "no classification head" in one_line(exc)
