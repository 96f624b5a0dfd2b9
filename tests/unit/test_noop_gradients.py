"""Gradient importance with a real loss: none for the embedded model, batch == one by one and
by hand for an MLM head, the task loss of a classifier (docs/METHODS.md section 5)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.batching import collate
from analysis.core.encoding import encode
from analysis.core.forward import forward
from analysis.noop import gradient_importance, loss_head
from analysis.noop.gradients import _mask_positions


@pytest.fixture(scope="module")
def tiny_heads(tmp_path_factory):
    import torch
    from transformers import (AutoTokenizer, BertConfig, BertForMaskedLM,
                              BertForSequenceClassification)

    from analysis.core.models import default_model_path

    tok = AutoTokenizer.from_pretrained(default_model_path())
    out = {}
    for kind, cls in (("mlm", BertForMaskedLM), ("task", BertForSequenceClassification)):
        torch.manual_seed(0)
        cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=4, intermediate_size=37, num_labels=3,
                         max_position_embeddings=128)
        folder = tmp_path_factory.mktemp(f"tiny-{kind}")
        cls(cfg).save_pretrained(folder)
        tok.save_pretrained(folder)
        out[kind] = str(folder)
    return out


def test_default_model_has_no_real_loss():
    head = loss_head("default")
    assert head.kind is None and head.model is None
    assert "no trained masked-language-model head" in head.note
    assert "was not fine-tuned to classify text" in head.note
    # no internal names (weight names, class names) reach the page
    for internal in ("BertModel", "architectures", "cls.predictions", "bias"):
        assert internal not in head.note
    from analysis.core.errors import DataError

    with pytest.raises(DataError):
        gradient_importance(head, [])


def test_gradient_importance_mlm_batch_equals_single_and_manual(tiny_heads):
    import torch

    head = loss_head(tiny_heads["mlm"])
    assert head.kind == "mlm" and "masked-language-model" in head.note
    texts = ["The soup was cold, sadly.", "Nice.", "Is it open on Sundays?", "A, b. c"]
    encs = [encode(head.tokenizer, t) for t in texts]
    g = gradient_importance(head, encs, batch_size=3)
    g1 = gradient_importance(head, encs, batch_size=1)
    assert set(g.per_head) == {"sep", "cls", "punct", "other"}
    for k in g.per_head:
        assert g.per_head[k].shape == (2, 4)
        assert np.allclose(g.per_head[k], g1.per_head[k], rtol=1e-5, atol=1e-12)
        assert (g.per_head[k] > 0).all()
    # by hand for the first example alone: mean |dL/dA| over the cells with key [SEP]
    enc = encs[0]
    batch = collate(head.tokenizer, [enc])
    pos = _mask_positions(enc, 0.15, 0)
    labels = torch.full_like(batch["input_ids"], -100)
    labels[0, pos] = batch["input_ids"][0, pos]
    batch["input_ids"][0, pos] = head.tokenizer.mask_token_id
    out = forward(head.model, inputs=batch, grad=True, labels=labels)
    grads = torch.autograd.grad(out.output.loss, out.attentions)
    n = enc.n_tokens
    want = np.array([gr[0, :, :, n - 1].abs().mean().item() for gr in grads])  # [SEP] = last
    single = gradient_importance(head, [enc])
    assert np.allclose(single.per_head["sep"].mean(1), want, rtol=1e-5)


def test_gradient_importance_task_loss(tiny_heads):
    head = loss_head(tiny_heads["task"])
    assert head.kind == "task" and "predicted label" in head.note
    encs = [encode(head.tokenizer, t, p) for t, p in
            [("Great food.", "food"), ("Slow, rude staff.", "service"), ("Ok", None)]]
    g = gradient_importance(head, encs, batch_size=2)
    g1 = gradient_importance(head, encs, batch_size=1)
    for k in g.per_head:
        assert np.allclose(g.per_head[k], g1.per_head[k], rtol=1e-5, atol=1e-14)
    assert g.n_examples == 3 and g.per_layer("sep").shape == (2,)


def test_loss_head_runs_on_the_picked_device(tiny_heads, monkeypatch):
    """The loss head's model goes where load_model's would (pick_device: CUDA when present):
    it stayed on the CPU before, so gradient importance never used the GPU. Checked on the
    'meta' device, which any machine has."""
    import analysis.noop.gradients as gradients

    monkeypatch.setattr(gradients, "pick_device", lambda prefer=None: "meta")
    for kind in ("mlm", "task"):
        head = loss_head(tiny_heads[kind])
        assert head.kind == kind
        assert {p.device.type for p in head.model.parameters()} == {"meta"}
        assert not head.model.training
