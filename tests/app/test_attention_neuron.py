"""Neuron view: hooked query/key vectors reproduce the model's own attention after softmax."""

import numpy as np
import pytest
import torch

from analysis.attention import attention_for
from analysis.attention.neuron import neuron_view
from apptest_util import chart_frames
from analysis.core.encoding import encode
from analysis.core.errors import InputError
from analysis.core.forward import forward
from analysis.core.models import load_model


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


def test_every_query_derives_from_one_capture(default_model):
    from analysis.attention.neuron import query_keys, view_of

    enc = encode(default_model.tokenizer, "The pasta was superb.", "how was the pasta ?")
    qk = query_keys(default_model, enc)
    assert qk.n_layers == 6 and qk.attentions.shape == (6, 12, enc.n_tokens, enc.n_tokens)
    for qi in range(enc.n_tokens):
        nv = view_of(qk, 4, 9, qi)
        np.testing.assert_allclose(nv.softmax, qk.attentions[4, 9, qi], atol=1e-5)
    ref = neuron_view(default_model, enc, 4, 9, 3)
    np.testing.assert_array_equal(view_of(qk, 4, 9, 3).keys, ref.keys)
    with pytest.raises(InputError, match="Head"):
        view_of(qk, 0, 12, 0)


def _open(**params):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app.py", default_timeout=180)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page("pages/attention.py")  # not the app's first page (the Head atlas)
    return at.run()


def _query_box(at):
    return [s for s in at.selectbox if s.label == "Query token"][0]


def test_changing_the_query_token_runs_no_new_forward(default_model, monkeypatch):
    """The page captures q and k once per input: picking other query tokens, heads and layers
    reads them from the cache (a spy counts the neuron view's forwards); q= is in the URL."""
    import analysis.attention.neuron as neuron
    from ui.attention.blocks import cached_query_keys

    cached_query_keys.clear()
    calls = []
    real = neuron.forward

    def spy(*args, **kwargs):
        calls.append(kwargs.get("capture"))
        return real(*args, **kwargs)

    monkeypatch.setattr(neuron, "forward", spy)
    at = _open(view="Neuron view", layer="3", head="5", q="4", a="The soup was cold.")
    assert not at.exception, [e.value for e in at.exception]
    assert calls == [("query", "key")]
    box = _query_box(at)
    assert box.value == 4 and box.options[3] == "4: was"
    ref = attention_for(default_model, "The soup was cold.").attentions
    for q in (2, 6):
        at = _query_box(at).set_value(q).run()
        assert not at.exception
        assert at.query_params["q"] in (str(q), [str(q)])
        soft = [f for f in chart_frames(at) if "softmax" in f.columns][0]["softmax"].to_numpy()
        np.testing.assert_allclose(soft, ref[2, 4, q - 1], atol=1e-5)
    assert "query 6 '.'" in " ".join(c.value for c in at.caption)
    at = [s for s in at.selectbox if s.label == "Layer"][0].set_value(6).run()
    assert not at.exception
    soft = [f for f in chart_frames(at) if "softmax" in f.columns][0]["softmax"].to_numpy()
    np.testing.assert_allclose(soft, ref[5, 4, 5], atol=1e-5)
    assert calls == [("query", "key")]  # still the one forward


@pytest.mark.parametrize("q", ["99", "0", "x"])
def test_a_query_position_outside_the_input_falls_back(default_model, q):
    at = _open(view="Neuron view", q=q, a="Hello there.")
    assert not at.exception, [e.value for e in at.exception]
    assert _query_box(at).value == 2  # the first word after [CLS]
