"""Map/merge (analysis.shards) for no-op gradients, attribution faithfulness and head
importance: a corpus cut into uneven, one-example and empty shards and merged gives the
in-process numbers (to 1e-6; counts exactly), on tiny models and planted data."""

from __future__ import annotations

import datasets
import numpy as np
import pytest

from analysis.shards import run_local, run_sharded

TEXTS = ["The soup was cold, sadly.", "   ", "Great food, friendly staff and a view!", "No.",
         "The waiter ignored us, then brought the wrong dish.", "Cheap, tasty and quick."]
PAIRS = [None, None, "was it good ?", None, None, "yes"]
N = len(TEXTS)
CUTS = {"uneven": [0, 1, 4, N], "one_each": list(range(N + 1)),
        "empty_shards": [0, 0, 2, 2, 5, N, N]}


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), atol=tol, rtol=0,
                               equal_nan=True)


@pytest.fixture(scope="module")
def corpus():
    return datasets.Dataset.from_dict({"text": TEXTS, "text_pair": PAIRS})


# --- No-op gradients (docs/METHODS.md section 5) ----------------------------------------------

@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory):
    """A tiny BERT with a (random, complete) masked-LM head and the default tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from analysis.models import default_model_path

    tok = AutoTokenizer.from_pretrained(default_model_path())
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=37, max_position_embeddings=128)
    folder = tmp_path_factory.mktemp("tiny-mlm")
    BertForMaskedLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def grads_whole(mlm_dir, corpus):
    from analysis.encoding import encode_dataset
    from analysis.noop import gradient_importance, loss_head
    from analysis.noop.gradients import GradientsJob

    head = loss_head(mlm_dir)
    job = GradientsJob(mlm_dir, batch_size=2, max_length=128)
    whole = gradient_importance(head, encode_dataset(head.tokenizer, corpus, 128).encodings,
                                batch_size=2)
    local = run_local(job, head, corpus)
    assert local.n_examples == whole.n_examples == 5  # the blank row skipped
    for cat in whole.per_head:  # the in-process job is today's function, bit for bit
        assert np.array_equal(local.per_head[cat], whole.per_head[cat])
    return job, head, whole


@pytest.mark.parametrize("cut", sorted(CUTS))
def test_noop_gradients_shards_merge_to_the_whole_corpus(grads_whole, corpus, cut):
    job, head, whole = grads_whole
    merged = run_sharded(job, head, corpus, CUTS[cut])
    assert (merged.kind, merged.note, merged.n_examples) == ("mlm", whole.note, 5)
    assert sorted(merged.per_head) == sorted(whole.per_head) == sorted(
        ["cls", "other", "punct", "sep"])
    for cat, v in whole.per_head.items():
        assert v.shape == (2, 4) and (v > 0).all()
        close(merged.per_head[cat], v)


def test_noop_gradients_empty_corpus_and_no_loss(grads_whole, tiny_model_dir):
    from analysis.errors import DataError
    from analysis.noop import loss_head
    from analysis.noop.gradients import GradientsJob

    job, head, _ = grads_whole
    blank = datasets.Dataset.from_dict({"text": [" ", "\u200b"]})
    with pytest.raises(DataError, match="The corpus is empty"):
        run_sharded(job, head, blank, [0, 1, 1, 2])
    bare = str(tiny_model_dir("bert"))  # an encoder without any loss head
    with pytest.raises(DataError, match="no such task to score"):
        run_local(GradientsJob(bare), loss_head(bare), blank)
