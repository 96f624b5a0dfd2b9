"""Neuron view: hooked query/key vectors reproduce the model's own attention after softmax."""

import numpy as np
import pytest
import torch

from analysis.attention.neuron import neuron_view
from analysis.encoding import encode
from analysis.errors import InputError
from analysis.forward import forward
from analysis.models import load_model


def test_default_model_dot_products_reproduce_attention(default_model):
    enc = encode(default_model.tokenizer, "The pasta was superb but the waiter was rude.")
    for layer, head, q in [(0, 0, 1), (3, 7, 4), (5, 11, 0)]:
        nv = neuron_view(default_model, enc, layer, head, q)
        assert nv.query.shape == (32,) and nv.keys.shape == (enc.n_tokens, 32)
        np.testing.assert_allclose(nv.products.sum(-1) / np.sqrt(32), nv.scores, rtol=1e-6)
        np.testing.assert_allclose(nv.softmax, nv.returned, atol=1e-5)
        assert nv.softmax.sum() == pytest.approx(1.0, abs=1e-6)


def test_query_vector_equals_projection_of_layer_input(default_model):
    """Independent check of the hooks: q = W_q h + b_q from the layer's input hidden state."""
    enc = encode(default_model.tokenizer, "Fresh bread and good coffee.")
    out = forward(default_model.model, default_model.tokenizer, [enc], hidden_states=True)
    layer, head, qi = 2, 5, 3
    h = out.hidden_states[layer][0]
    lin = default_model.model.encoder.layer[layer].attention.self.query
    with torch.no_grad():
        q_full = lin(h).numpy()
    nv = neuron_view(default_model, enc, layer, head, qi)
    np.testing.assert_allclose(nv.query, q_full[qi, head * 32:(head + 1) * 32], atol=1e-5)


@pytest.mark.parametrize("arch", ["bert", "roberta", "distilbert", "albert", "electra"])
def test_every_architecture(tiny_model_dir, arch):
    m = load_model(str(tiny_model_dir(arch)))
    enc = encode(m.tokenizer, "The food was great.", "what about food ?")
    for layer in range(m.n_layers):
        nv = neuron_view(m, enc, layer, 1, 2)
        np.testing.assert_allclose(nv.softmax, nv.returned, atol=1e-5)


def test_out_of_range_indices(default_model):
    enc = encode(default_model.tokenizer, "Hello there.")
    with pytest.raises(InputError, match="Layer"):
        neuron_view(default_model, enc, 6, 0, 0)
    with pytest.raises(InputError, match="Query token"):
        neuron_view(default_model, enc, 0, 0, 99)
