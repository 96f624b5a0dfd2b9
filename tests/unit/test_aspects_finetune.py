"""Fine-tuning a tiny model as a pair classifier, its predictions and evaluation, head
masking (Sun et al. 2019; docs/METHODS.md section 7)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.absa.finetune import fine_tune, make_classifier, predict_probs
from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples
from analysis.core.errors import InputError
from analysis.core.hooks import masked_heads


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


def test_two_step_fine_tune_lowers_loss_and_leaves_base_untouched(tiny):
    before = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    ex = build_examples(load_sample().select(range(3)), "qa_m")
    res = fine_tune(tiny, ex, "qa_m", epochs=2, batch_size=len(ex), lr=1e-3, seed=0)
    assert len(res.losses) == 2
    assert res.losses[1] < res.losses[0]
    assert res.model is not tiny.model
    after = tiny.model.state_dict()
    assert all(torch_equal(before[k], after[k]) for k in before)
    # the classifier starts from the base encoder's weights
    ref = make_classifier(tiny, "qa_m")
    assert torch_equal(ref.bert.embeddings.word_embeddings.weight,
                       tiny.model.embeddings.word_embeddings.weight)


def test_epoch_end_sees_each_full_pass_in_eval_mode(tiny):
    ex = build_examples(load_sample().select(range(2)), "nli_m")  # 10 pairs
    seen = []
    res = fine_tune(tiny, ex, "nli_m", epochs=3, batch_size=4, lr=1e-3,
                      epoch_end=lambda k, m: seen.append((k, m.training)))
    assert [k for k, _ in seen] == [1, 2, 3]
    assert not any(training for _, training in seen)
    assert res.model.training is False
    assert len(res.losses) == 9  # ceil(10 / 4) steps a pass
    # a pass cut short by max_steps gets no call
    seen.clear()
    fine_tune(tiny, ex, "nli_m", epochs=3, batch_size=4, lr=1e-3, max_steps=4,
                epoch_end=lambda k, m: seen.append(k))
    assert seen == [1]


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b))


def test_masking_a_head_equals_zeroing_its_output_columns(tiny):
    import copy

    import torch

    clf = make_classifier(tiny, "qa_m", seed=1)
    ex = build_examples(load_sample().select(range(2)), "qa_m")
    mask = np.ones((2, 4), dtype=np.float32)
    mask[1, 2] = 0
    masked = predict_probs(clf, tiny.tokenizer, ex, head_mask=mask)
    ref = copy.deepcopy(clf)
    with torch.no_grad():
        ref.bert.encoder.layer[1].attention.output.dense.weight[:, 16:24] = 0
    np.testing.assert_allclose(masked, predict_probs(ref, tiny.tokenizer, ex), atol=1e-6)
    full = predict_probs(clf, tiny.tokenizer, ex)
    assert np.abs(full - masked).max() > 1e-6  # the hook was removed afterwards:
    np.testing.assert_allclose(predict_probs(clf, tiny.tokenizer, ex), full)
    with pytest.raises(InputError, match="head_mask must have shape"):
        predict_probs(clf, tiny.tokenizer, ex, head_mask=np.ones((3, 4)))


def test_a_head_mask_leaves_other_threads_forwards_alone(tiny):
    """Models are shared across Streamlit sessions (threads): one session's causal check must
    not mask another session's forward running meanwhile."""
    import threading

    clf = make_classifier(tiny, "qa_m", seed=1)
    ex = build_examples(load_sample().select(range(2)), "qa_m")
    full = predict_probs(clf, tiny.tokenizer, ex)
    mask = np.zeros((2, 4), dtype=np.float32)
    seen = {}
    with masked_heads(clf, mask):
        masked_here = predict_probs(clf, tiny.tokenizer, ex)
        t = threading.Thread(target=lambda: seen.update(
            other=predict_probs(clf, tiny.tokenizer, ex)))
        t.start()
        t.join()
    change = np.abs(full - masked_here).max()
    assert change > 1e-6  # masked in the thread that asked
    assert np.abs(seen["other"] - full).max() < change / 100  # untouched elsewhere


@pytest.mark.parametrize("arch", ["roberta", "distilbert", "electra"])
def test_other_encoders_fine_tune_and_mask_heads(tiny_model_dir, arch):
    from analysis.core.models import load_model

    loaded = load_model(str(tiny_model_dir(arch)))
    ex = build_examples(load_sample().select(range(2)), "nli_m")
    res = fine_tune(loaded, ex, "nli_m", epochs=2, batch_size=len(ex), lr=1e-3)
    assert res.losses[1] < res.losses[0]
    mask = np.ones((loaded.n_layers, loaded.n_heads))
    mask[0, 0] = 0
    full = predict_probs(res.model, loaded.tokenizer, ex)
    masked = predict_probs(res.model, loaded.tokenizer, ex, head_mask=mask)
    assert np.abs(full - masked).max() > 1e-7


def test_the_word_embedding_table_stays_and_the_rest_trains(tiny):
    """With train_word_embeddings=False the word-embedding table is not trained (half of a
    small encoder's weights): after two steps it equals the base model's, the layers moved, and
    the returned model is trainable again; by default it moves too."""
    import torch

    ex = build_examples(load_sample().select(range(4)), "qa_m")
    base = tiny.model.get_input_embeddings().weight.detach().clone()
    res = fine_tune(tiny, ex, "qa_m", epochs=1, lr=1e-3, batch_size=8, max_steps=2,
                    train_word_embeddings=False)
    emb = res.model.get_input_embeddings().weight
    assert torch.equal(emb.detach(), base)
    layer0 = dict(res.model.named_parameters())
    moved = [n for n, p in layer0.items() if "encoder.layer.0." in n and "weight" in n
             and not torch.equal(p.detach(), dict(tiny.model.named_parameters()).get(
                 n.split(".", 1)[1], p).detach())]
    assert moved  # the layers did train
    assert all(p.requires_grad for p in res.model.parameters())
    res = fine_tune(tiny, ex, "qa_m", epochs=1, lr=1e-3, batch_size=8, max_steps=2)
    assert not torch.equal(res.model.get_input_embeddings().weight.detach(), base)
