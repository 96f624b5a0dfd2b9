"""The one forward: batches equal one-by-one, captures and head masks give the numbers the
formulas give (docs/METHODS.md sections 1, 4 and 7)."""

import numpy as np
import pytest
import torch

from analysis.core.maps import attention_for
from analysis.core.encoding import encode
from analysis.core.forward import forward, forward_batches

TEXT = ("The waiter was rude, but the sushi was fresh.", "what about the service ?")


def test_batch_equals_one_by_one(default_model):
    texts = ["Great pizza.", "The staff were friendly and the prices were fair for the area.",
             "Slow service", "We waited an hour for a cold burger and nobody apologised."]
    pairs = [None, "what do you think of the price of it ?", None, "service"]
    encs = [encode(default_model.tokenizer, t, p) for t, p in zip(texts, pairs)]
    seen = []
    for idx, fw in forward_batches(default_model.model, default_model.tokenizer, encs, 3):
        for b, i in enumerate(idx):
            single = attention_for(default_model, texts[i], pairs[i])
            assert encs[i].tokens == single.encoding.tokens
            np.testing.assert_allclose(fw.maps(b), single.attentions, atol=2e-6)
            seen.append(i)
    assert sorted(seen) == [0, 1, 2, 3]


def test_value_norms_are_the_norms_of_each_heads_value_through_its_output_slice(default_model):
    """||f_h(x_j)|| = ||(x_j W_V + b_V)_h W_O^h||, computed here by hand from the layer input."""
    m, tok = default_model.model, default_model.tokenizer
    enc = encode(tok, *TEXT)
    fw = forward(m, tok, [enc], hidden_states=True, capture=("value_norms",))
    H = default_model.n_heads
    for layer in (0, 3, 5):
        block = m.encoder.layer[layer].attention
        x = fw.output.hidden_states[layer][0]  # the layer's input [n, d]
        with torch.no_grad():
            v = block.self.value(x).double()  # [n, d]
            wo = block.output.dense.weight.double()  # [d_out, d]
            dh = v.shape[1] // H
            want = torch.stack([(v[:, h * dh:(h + 1) * dh] @ wo[:, h * dh:(h + 1) * dh].T)
                                .norm(dim=-1) for h in range(H)])  # [H, n]
        got = fw.captured["value_norms"][layer][0]
        np.testing.assert_allclose(got.numpy(), want.float().numpy(), rtol=1e-4, atol=1e-5)


def test_head_mask_changes_only_layers_after_the_masked_one(default_model):
    m, tok = default_model.model, default_model.tokenizer
    enc = encode(tok, *TEXT)
    plain = forward(m, tok, [enc], hidden_states=True)
    mask = np.ones((default_model.n_layers, default_model.n_heads), dtype=np.float32)
    same = forward(m, tok, [enc], hidden_states=True, head_mask=mask)
    mask[2, [0, 5]] = 0
    masked = forward(m, tok, [enc], hidden_states=True, head_mask=mask)
    for k in range(default_model.n_layers + 1):
        a, b = plain.output.hidden_states[k], masked.output.hidden_states[k]
        torch.testing.assert_close(same.output.hidden_states[k], a)
        if k <= 2:  # embeddings and the outputs of layers 1-2 (0-indexed 0, 1)
            torch.testing.assert_close(b, a)
        else:
            assert (b - a).abs().max() > 1e-3
    # the mask acts inside the block only
    after = forward(m, tok, [enc], hidden_states=True)
    torch.testing.assert_close(after.output.hidden_states[-1], plain.output.hidden_states[-1])


def test_gradients_only_when_asked(default_model):
    m, tok = default_model.model, default_model.tokenizer
    enc = encode(tok, "Good food.")
    assert not forward(m, tok, [enc]).attentions[0].requires_grad
    att = forward(m, tok, [enc], grad=True).attentions
    assert att[0].requires_grad
    (g,) = torch.autograd.grad(att[-1].sum(), [att[0]], allow_unused=True)
    assert g is not None and g.shape == att[0].shape


def test_ready_inputs_and_unknown_capture(default_model):
    m, tok = default_model.model, default_model.tokenizer
    inputs = dict(tok("Good food.", return_tensors="pt"))
    fw = forward(m, inputs=inputs)
    np.testing.assert_allclose(fw.maps(0), attention_for(default_model, "Good food.").attentions,
                               atol=1e-6)
    with pytest.raises(ValueError, match="Unknown capture"):
        forward(m, inputs=inputs, capture=("values",))


def test_outputs_and_captures_come_back_as_cpu_tensors(default_model):
    from analysis.core.forward import _output_to_cpu

    enc = encode(default_model.tokenizer, *TEXT)
    fw = forward(default_model.model, default_model.tokenizer, [enc], hidden_states=True,
                 capture=("query",))
    assert all(a.device.type == "cpu" for a in fw.attentions)
    assert all(q.device.type == "cpu" for q in fw.captured["query"])
    keys = list(fw.output.keys())
    moved = _output_to_cpu(fw.output)  # what a CUDA forward does before returning
    assert list(moved.keys()) == keys and moved.attentions[0] is fw.attentions[0]
    assert isinstance(moved.hidden_states, tuple) and len(moved.hidden_states) == 7
    assert fw.maps(0).shape == (6, 12, enc.n_tokens, enc.n_tokens)
