"""Hooks act only on the registering thread's forwards and record in call order
(shared models: one Streamlit session must not see or change another's forward)."""

import threading

import numpy as np
import pytest
import torch

from analysis.core import hooks
from analysis.core.encoding import encode
from analysis.core.errors import InputError
from analysis.core.forward import forward


def test_capture_records_each_layer_in_call_order_for_this_thread_only(default_model):
    m, tok = default_model.model, default_model.tokenizer
    enc = encode(tok, "Good food.")
    mods = hooks.projection_modules(m, hooks.QUERY_NAMES)
    assert len(mods) == default_model.n_layers
    with hooks.capture(mods) as store:
        t = threading.Thread(target=lambda: forward(m, tok, [enc]))
        t.start()
        t.join()
        assert store == []  # another thread's forward is not seen
        forward(m, tok, [enc])
        assert len(store) == default_model.n_layers
        layer_input = forward(m, tok, [enc], hidden_states=True).output.hidden_states[1]
        with torch.inference_mode():
            want = mods[1](layer_input)[0].numpy()
        np.testing.assert_allclose(store[1][0].numpy(), want, atol=1e-5)
    forward(m, tok, [enc])
    assert len(store) == 2 * default_model.n_layers + 1  # two forwards and one call inside


def test_shared_layer_module_is_recorded_once_per_call(tiny_model_dir):
    from analysis.core.models import load_model

    albert = load_model(str(tiny_model_dir("albert")))
    mods = hooks.projection_modules(albert.model, hooks.KEY_NAMES)
    assert len(mods) == 1  # ALBERT shares one layer across its 3 layers
    with hooks.capture(mods) as store:
        forward(albert.model, albert.tokenizer, [encode(albert.tokenizer, "a b")])
    assert len(store) == 3


def test_masked_heads_checks_the_shape(default_model):
    with pytest.raises(InputError, match="head_mask must have shape"):
        with hooks.masked_heads(default_model.model, np.ones((2, 2))):
            pass
