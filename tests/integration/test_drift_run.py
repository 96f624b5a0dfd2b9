"""The drift study on a real model: against itself, with one perturbed head, against a small
fine-tuned classifier (split by label and prediction), on SemEval sentences."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from analysis.drift import (PATTERN_TYPES, compare_models, example_maps, gallery,
                            head_cosine, load_pair)
from analysis.core.encoding import encode_corpus, encode_dataset
from analysis.core.forward import forward
from analysis.core.models import default_model_path, load_model, task_head_of
from bench.references.drift import batched_head_cosine

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SENTENCES = [
    "The pasta was superb, but the waiter ignored us.",
    "Great food and friendly staff.",
    "The room was noisy and the prices were far too high for what you get.",
    "I would not come back.",
    "Service was slow, yet the dessert made up for it.",
    "Cheap, tasty and quick.",
]
LABELS = ["negative", "positive", "negative", "negative", "positive", "positive"]


def make_finetuned_copy(folder: Path, steps: int = 6, lr: float = 5e-4) -> Path:
    """A small fine-tuned copy of the default model: a 2-way sentence classifier trained for a
    few AdamW steps on a handful of labelled sentences, saved with its tokenizer."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    source = default_model_path()
    model = AutoModelForSequenceClassification.from_pretrained(
        source, num_labels=2, id2label={0: "negative", 1: "positive"},
        label2id={"negative": 0, "positive": 1}, attn_implementation="eager")
    tokenizer = AutoTokenizer.from_pretrained(source)
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    y = torch.tensor([model.config.label2id[lab] for lab in LABELS])
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        loss = forward(model, inputs=batch, attentions=False, grad=True, labels=y).output.loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def base():
    return load_model("default")


@pytest.fixture(scope="module")
def finetuned(finetuned_copy):
    return str(finetuned_copy)  # tests/conftest.py: made once per test process


@pytest.fixture(scope="module")
def corpus(base):
    return encode_corpus(base.tokenizer, SENTENCES, [None, None, "was it good ?", None, None,
                                                      None], labels=LABELS)


# ---------------------------------------------------------------------------------------------
# Real model


def test_model_against_itself_is_all_ones(base, corpus):
    res = compare_models(base, base, corpus, batch_size=4)
    assert res.cosine.shape == (base.n_layers, base.n_heads)
    np.testing.assert_allclose(res.cosine_examples, 1.0, atol=1e-5)
    np.testing.assert_allclose(res.rsa, 1.0, atol=1e-5)
    np.testing.assert_allclose(res.cka, 1.0, atol=1e-5)
    assert res.rsa.shape == res.cka.shape == (base.n_layers + 1,)
    for k in ("cls", "sep", "punct"):
        np.testing.assert_allclose(res.noop_delta[k], 0.0, atol=1e-6)
    assert res.identical
    assert "identical weights" in res.summary() and "cosine similarity is 1" in res.summary()
    tb, ta = res.pattern_types()
    assert (tb == ta).all()
    assert res.label_note.startswith("The after-model has no classification head")


def test_one_perturbed_head_is_the_only_one_that_drops(base, corpus):
    """Scaling the queries of one head in the last layer changes only that head's maps: every
    earlier layer and every other head sees the same input."""
    after = copy.deepcopy(base)
    layer, head = base.n_layers - 1, 2
    dh = after.model.config.hidden_size // base.n_heads
    with torch.no_grad():
        after.model.encoder.layer[layer].attention.self.query.weight[
            head * dh:(head + 1) * dh] *= 4.0
    res = compare_models(base, after, corpus, batch_size=4)
    cos = res.cosine
    others = np.ones_like(cos, dtype=bool)
    others[layer, head] = False
    np.testing.assert_allclose(cos[others], 1.0, atol=1e-5)
    assert cos[layer, head] < 0.95
    assert not res.identical
    assert "layer 6, head 3" in res.summary()
    # hidden states before the last layer are untouched; the last one moved
    np.testing.assert_allclose(res.rsa[:-1], 1.0, atol=1e-5)
    np.testing.assert_allclose(res.cka[:-1], 1.0, atol=1e-5)
    assert res.rsa[-1] < 1 - 1e-4 and res.cka[-1] < 1 - 1e-5
    # no-op drift is confined to that head, and equals the difference of the statistics
    delta = res.noop_delta["sep"]
    assert np.abs(delta[others]).max() < 1e-5
    assert res.noop_delta["cls"][layer, head] == pytest.approx(
        res.noop_after["cls"][layer, head] - res.noop_before["cls"][layer, head])
    # the pipeline's numbers equal the one-example reference
    enc, mb, ma = example_maps(base, after, corpus.texts[2], corpus.pairs[2])
    np.testing.assert_allclose(res.cosine_examples[2], head_cosine(mb, ma), atol=1e-5)
    # the cosine-only batched path gives the pipeline's per-example cosines, in corpus order
    quick = batched_head_cosine(base, after, corpus.encodings, batch_size=3)
    np.testing.assert_allclose(quick, res.cosine_examples, atol=1e-6)
    from analysis.noop import example_stats

    # no-op statistics: the corpus mean of Clark's per-example statistics, before and after
    per_b, per_a = [], []
    for text, pair in zip(corpus.texts, corpus.pairs):
        enc, mb, ma = example_maps(base, after, text, pair)
        per_b.append(example_stats(mb, enc))
        per_a.append(example_stats(ma, enc))
    for k in ("cls", "sep", "punct"):
        np.testing.assert_allclose(res.noop_before[k], np.mean([s[k] for s in per_b], 0),
                                   atol=1e-6)
        np.testing.assert_allclose(res.noop_after[k], np.mean([s[k] for s in per_a], 0),
                                   atol=1e-6)
    assert abs(res.noop_delta["sep"][layer, head]) > 1e-4
    g = gallery(res, "after", PATTERN_TYPES[res.pattern_types()[1][0, 0, 0]])
    assert g and all(0 <= ex < len(corpus.encodings) for ex, _, _ in g)


def test_finetuned_checkpoint_with_head_splits_by_label_and_prediction(base, corpus, finetuned):
    before, after = load_pair("default", finetuned)
    assert task_head_of(finetuned) and hasattr(after.model, "classifier")
    res = compare_models(before, after, corpus, batch_size=3)
    assert res.cosine.min() < 0.999  # training moved some head
    assert not res.identical
    assert res.predictions is not None and len(res.predictions) == len(SENTENCES)
    assert set(res.predictions) <= {"negative", "positive"}
    # predictions are the argmax of the classifier's own logits
    enc = corpus.encodings[0]
    logits = forward(after.model, after.tokenizer, [enc]).output.logits
    assert res.predictions[0] == after.model.config.id2label[int(logits.argmax())]
    groups = res.groups()
    assert set(groups["label"]) == {"negative", "positive"}
    neg = [i for i, lab in enumerate(LABELS) if lab == "negative"]
    np.testing.assert_allclose(groups["label"]["negative"], res.cosine_examples[neg].mean(0),
                               rtol=1e-6)
    correct = res.correct
    assert correct.tolist() == [p == g for p, g in zip(res.predictions, LABELS)]
    assert set(groups["prediction"]) == {k for k, m in (("correct", correct),
                                                        ("wrong", ~correct)) if m.any()}
    # gold labels given as the classifier's ids (0 = negative, 1 = positive) work too
    ids = encode_corpus(before.tokenizer, SENTENCES, labels=[
        str(after.model.config.label2id[lab]) for lab in LABELS])
    res_ids = compare_models(before, after, ids, batch_size=3)
    assert res_ids.correct.tolist() == correct.tolist()
    # labels the classifier does not know: said plainly, split by gold label only
    odd = encode_corpus(before.tokenizer, SENTENCES, labels=["x", "y"] * 3)
    res_odd = compare_models(before, after, odd, batch_size=3)
    assert res_odd.correct is None and "do not match the data's labels" in res_odd.label_note
    assert set(res_odd.groups()) == {"label"}


@pytest.mark.skipif(not (DATA / "semeval2014" / "Restaurants_Train.xml").is_file(),
                    reason="shared SemEval data absent")
def test_semeval_sentences_identical_models_say_so(base):
    from analysis.core.corpus import read_corpus

    ds = read_corpus(DATA / "semeval2014" / "Restaurants_Train.xml", max_examples=8)
    res = compare_models(base, base, encode_dataset(base.tokenizer, ds))
    assert res.n_examples == 8
    assert res.to_json()["identical"] is True
    assert res.to_json()["summary"].startswith("The two models have identical weights")


def test_long_inputs_get_batches_within_the_noop_budget(base, monkeypatch):
    """Issue 34 item 3: 300 lines of 2,000 characters took the server from 1.18 to 4.92 GB:
    32 inputs of 512 tokens went through both models at once. Now every batch's maps and
    temporaries stay within the No-op study's budget (assert on the batches' shapes), and the
    numbers are those of one example at a time."""
    import analysis.drift.run as run
    from analysis.drift.job import DriftJob
    from analysis.noop.corpus import NoopJob

    assert DriftJob("a", "b").max_batch_mb == NoopJob("a").max_batch_mb == 256.0
    shapes = []
    real = run.forward_batches

    def spy(model, tokenizer, encodings, batch_size, **kw):
        for idx, fw in real(model, tokenizer, encodings, batch_size, **kw):
            shapes.append(tuple(fw.attentions[0].shape))
            yield idx, fw

    monkeypatch.setattr(run, "forward_batches", spy)
    words = "the soup was cold but the staff were friendly and quick to help us ".split()
    texts = [" ".join(words[(k + j) % len(words)] for j in range(n))
             for n, m in ((600, 4), (230, 8)) for k in range(m)] + ["short and sweet .", "fine ."]
    corpus = encode_corpus(base.tokenizer, texts, max_length=base.max_length)
    assert corpus.truncated == 4
    per_pair = run.bytes_per_token_pair(base.n_layers, base.n_heads)
    assert per_pair == 4 * (2 * 6 * 12 + 3 * 12 + 4)  # 193 MB for one 512-token input
    res = compare_models(base, base, corpus, batch_size=32)
    budget = 256 * 2**20
    assert sum(s[0] for s in shapes) == 2 * len(texts)  # both models, every example once
    assert all(b == 1 or b * t * t * per_pair <= budget for b, _, _, t in shapes), shapes
    longest = [b for b, _, _, t in shapes if t == base.max_length]
    assert longest == [1] * 8  # was one batch of all (32 of a long corpus: 4.8 GB)
    middle = [(b, t) for b, _, _, t in shapes if 200 < t < base.max_length]
    assert max(b for b, _ in middle) == budget // (middle[0][1] ** 2 * per_pair) == 6  # not 8
    assert shapes[-1][0] == 4  # the last two middle ones and the two short ones together
    shapes.clear()
    one = compare_models(base, base, corpus, batch_size=1)
    np.testing.assert_allclose(res.cosine_examples, one.cosine_examples, atol=1e-5)
    np.testing.assert_allclose(res.features_before, one.features_before, atol=1e-5)
