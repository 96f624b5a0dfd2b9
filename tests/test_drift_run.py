"""Before/after comparison: cosine maps, RSA, CKA, no-op drift, pattern types, checks, CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from analysis import compare as C
from analysis.errors import DataError
from analysis.models import ModelLoadError, default_model_path, load_model

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
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
        loss = model(**batch, labels=y).loss
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
def finetuned(tmp_path_factory):
    return str(make_finetuned_copy(tmp_path_factory.mktemp("ft") / "model"))


@pytest.fixture(scope="module")
def corpus(base):
    return C.encode_corpus(base.tokenizer, SENTENCES, [None, None, "was it good ?", None, None,
                                                      None], labels=LABELS)


# ---------------------------------------------------------------------------------------------
# Pure measures


def test_head_cosine_hand_computed():
    a = np.zeros((1, 2, 2, 2))
    b = np.zeros((1, 2, 2, 2))
    a[0, 0] = [[1, 0], [0, 1]]
    b[0, 0] = [[1, 0], [1, 0]]  # dot 1, norms sqrt2 sqrt2 -> 0.5
    a[0, 1] = [[0.5, 0.5], [0.5, 0.5]]
    b[0, 1] = [[0.5, 0.5], [0.5, 0.5]]
    cos = C.head_cosine(a, b)
    assert cos.shape == (1, 2)
    assert cos[0, 0] == pytest.approx(0.5)
    assert cos[0, 1] == pytest.approx(1.0)


def _random_maps(rng, lengths, h=3, pad_value=0.3):
    t = max(lengths)
    out = np.full((len(lengths), h, t, t), pad_value, dtype=np.float32)
    for b, n in enumerate(lengths):
        x = rng.random((h, n, n)).astype(np.float32) ** 4
        out[b, :, :n, :n] = x / x.sum(-1, keepdims=True)
    return out


def test_batched_measures_match_per_example_on_real_tokens():
    """Padding cells hold garbage on purpose: only the real tokens may count."""
    from analysis.attention import Encoding

    rng = np.random.default_rng(1)
    lengths = [7, 4, 6]
    a, b = _random_maps(rng, lengths), _random_maps(rng, lengths, pad_value=0.9)
    encs = []
    for n in lengths:
        special = np.zeros(n, bool)
        special[[0, n - 1]] = True
        segments = np.zeros(n, np.int8)
        segments[n // 2:] = 1
        encs.append(Encoding(tokens=["t"] * n, input_ids=[1] * n, token_type_ids=None,
                             segments=segments, special=special, word_ids=list(range(n)),
                             words=["t"] * n, text="t"))
    _, valid, special, segments = C._batch_masks(encs)
    cos = C.batch_head_cosine(torch.from_numpy(a), torch.from_numpy(b), valid).numpy()
    feats = C.batch_pattern_features(torch.from_numpy(a), valid, special, segments).numpy()
    hid_a = rng.normal(size=(3, 7, 5)).astype(np.float32)
    hid_b = rng.normal(size=(3, 7, 4)).astype(np.float32)
    r = C.batch_rsa(torch.from_numpy(hid_a), torch.from_numpy(hid_b), valid).numpy()
    for k, n in enumerate(lengths):
        ref = C.head_cosine(a[k][None, :, :n, :n], b[k][None, :, :n, :n])[0]
        np.testing.assert_allclose(cos[k], ref, atol=1e-6)
        ref_f = C.pattern_features(a[k, :, :n, :n], encs[k].special, encs[k].segments)
        np.testing.assert_allclose(feats[k], ref_f, atol=1e-6)
        assert r[k] == pytest.approx(C.rsa(hid_a[k, :n], hid_b[k, :n]), abs=1e-5)


def test_cka_hand_computed_and_equal_to_squared_pearson_in_one_dimension():
    x = np.array([[1.0], [2.0], [3.0]])
    y = np.array([[1.0], [0.0], [2.0]])
    # centred x = (-1, 0, 1), y = (0, -1, 1): ||y'x||^2 = 1, ||x'x|| = ||y'y|| = 2 -> 1/4
    assert C.linear_cka(x, y) == pytest.approx(0.25)
    assert C.linear_cka(x, y) == pytest.approx(np.corrcoef(x[:, 0], y[:, 0])[0, 1] ** 2)


def test_rsa_and_cka_identity_and_orthogonal_invariance():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 12)) + 3.0  # large column means: centring matters
    q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    y = rng.normal(size=(60, 12))
    assert C.linear_cka(x, x) == pytest.approx(1.0, abs=1e-6)
    assert C.linear_cka(x, x @ q) == pytest.approx(1.0, abs=1e-6)
    assert C.linear_cka(x, 5.0 * x @ q + 2.0) == pytest.approx(1.0, abs=1e-6)
    assert C.linear_cka(x, y) < 0.6
    assert C.rsa(x, x) == pytest.approx(1.0)
    assert C.rsa(x, x @ q) == pytest.approx(1.0)  # cosine similarities survive rotation
    assert C.rsa(x, y) < 0.5
    # Kornblith's feature-space form equals the Gram (HSIC) form on centred kernels
    h = np.eye(60) - 1.0 / 60
    k, l_ = h @ x @ x.T @ h, h @ y @ y.T @ h
    hsic = np.trace(k @ l_) / np.sqrt(np.trace(k @ k) * np.trace(l_ @ l_))
    assert C.linear_cka(x, y) == pytest.approx(hsic, rel=1e-6)
    # streaming in chunks gives the one-shot value
    acc = C.CKAAccumulator()
    for part in np.array_split(np.arange(60), 7):
        acc.update(x[part], y[part])
    assert acc.value() == pytest.approx(hsic, rel=1e-5)
    # RSA is the Pearson r of the cosine-similarity triangles (reference: numpy corrcoef)
    iu = np.triu_indices(60, 1)
    ref = np.corrcoef(C.token_similarity(x)[iu], C.token_similarity(y)[iu])[0, 1]
    assert C.rsa(x, y) == pytest.approx(ref)


# ---------------------------------------------------------------------------------------------
# Pattern types on hand-made maps: [CLS] a1..a7 [SEP] b1..b6 [SEP]

N = 16
SPECIAL = np.zeros(N, bool)
SPECIAL[[0, 8, 15]] = True
SEGMENTS = np.array([0] * 9 + [1] * 7, np.int8)


def _vertical():
    m = np.zeros((N, N))
    m[:, 8] = 1.0  # everything to the first [SEP]
    return m


def _diagonal():
    m = np.zeros((N, N))
    m[0, 0] = 1.0
    for i in range(1, N):
        m[i, i - 1] = 1.0  # previous token
    return m


def _vertical_diagonal():
    m = np.zeros((N, N))
    m[:, 0] = 0.5  # half to [CLS]
    for i in range(N):
        m[i, min(i + 1, N - 1)] += 0.5  # half to the next token
    return m


def _block():
    m = np.zeros((N, N))
    seg_a, seg_b = list(range(1, 8)), list(range(9, 15))
    for i in range(N):
        cols = seg_a if SEGMENTS[i] == 0 else seg_b
        m[i, cols] = 1.0 / len(cols)
    return m


def _heterogeneous():
    m = np.zeros((N, N))
    for i in range(N):
        m[i, (i + 4) % N] = 0.6  # far tokens
        m[i, (i + 7) % N] += 0.4
    return m


def test_pattern_features_hand_made_maps():
    maps = np.stack([_vertical(), _diagonal(), _vertical_diagonal(), _block(), _heterogeneous()])
    f = C.pattern_features(maps, SPECIAL, SEGMENTS)
    # vertical: all mass on a special column; rows 7, 8, 9 are within one step of column 8
    assert f[0, 0] == pytest.approx(1.0)
    assert f[0, 1] == pytest.approx(3 / 16)
    assert f[0, 2] == pytest.approx(0.0)  # [SEP] is outside every uniform block
    # diagonal: every row on i-1 (row 0 on itself); rows 0, 1, 9 land on a special token
    assert f[1, 1] == pytest.approx(1.0)
    assert f[1, 0] == pytest.approx(3 / 16)
    # vertical+diagonal: 0.5 on [CLS]; 0.5 on i+1, special for rows 7, 14 and 15 (itself)
    assert f[2, 0] == pytest.approx(0.5 + 0.5 * 3 / 16)
    # rows 0 and 1 have [CLS] within one step too (1.0 each), the other 14 rows 0.5
    assert f[2, 1] == pytest.approx((2 * 1.0 + 14 * 0.5) / 16)
    # block: rows exactly uniform over their own segment's words -> 1
    assert f[3, 2] == pytest.approx(1.0)
    assert f[3, 0] == pytest.approx(0.0)
    # heterogeneous: 0.6 on i+4 and 0.4 on i+7 (mod 16); specials hit by rows 4, 11, 12
    # (i+4) and rows 1, 8, 9 (i+7)
    assert f[4, 0] == pytest.approx((3 * 0.6 + 3 * 0.4) / 16)
    assert f[4, 1] == pytest.approx(0.0)
    types = C.classify_patterns(f)
    assert [C.PATTERN_TYPES[t] for t in types] == [
        "vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous"]
    shares = C.pattern_shares(types)
    assert shares == {name: pytest.approx(0.2) for name in C.PATTERN_TYPES}
    moved = C.pattern_transitions(types, np.roll(types, 1))  # each map moves to the previous type
    assert moved.sum() == 5 and moved[0, 4] == 1 and moved[1, 0] == 1 and np.trace(moved) == 0


def test_pattern_thresholds_are_the_rules():
    f = np.array([[0.45, 0.1, 0.2]])  # 45% on [CLS]/[SEP]
    assert C.PATTERN_TYPES[C.classify_patterns(f)[0]] == "heterogeneous"
    loose = C.PatternThresholds(vertical=0.4)
    assert C.PATTERN_TYPES[C.classify_patterns(f, loose)[0]] == "vertical"
    assert any("0.40" in line for line in loose.describe())


# ---------------------------------------------------------------------------------------------
# Real model


def test_model_against_itself_is_all_ones(base, corpus):
    res = C.compare_models(base, base, corpus, batch_size=4)
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
        after.model.encoder.layer[layer].attention.self.query.weight[head * dh:(head + 1) * dh] *= 4.0
    res = C.compare_models(base, after, corpus, batch_size=4)
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
    enc, mb, ma = C.example_maps(base, after, corpus.texts[2], corpus.pairs[2])
    np.testing.assert_allclose(res.cosine_examples[2], C.head_cosine(mb, ma), atol=1e-5)
    # the cosine-only batched path gives the pipeline's per-example cosines, in corpus order
    quick = C.batched_head_cosine(base, after, corpus.encodings, batch_size=3)
    np.testing.assert_allclose(quick, res.cosine_examples, atol=1e-6)
    from analysis.stats import example_stats

    # no-op statistics: the corpus mean of Clark's per-example statistics, before and after
    per_b, per_a = [], []
    for text, pair in zip(corpus.texts, corpus.pairs):
        enc, mb, ma = C.example_maps(base, after, text, pair)
        per_b.append(example_stats(mb, enc))
        per_a.append(example_stats(ma, enc))
    for k in ("cls", "sep", "punct"):
        np.testing.assert_allclose(res.noop_before[k], np.mean([s[k] for s in per_b], 0),
                                   atol=1e-6)
        np.testing.assert_allclose(res.noop_after[k], np.mean([s[k] for s in per_a], 0),
                                   atol=1e-6)
    assert abs(res.noop_delta["sep"][layer, head]) > 1e-4
    g = C.gallery(res, "after", C.PATTERN_TYPES[res.pattern_types()[1][0, 0, 0]])
    assert g and all(0 <= ex < len(corpus.encodings) for ex, _, _ in g)


def test_finetuned_checkpoint_with_head_splits_by_label_and_prediction(base, corpus, finetuned):
    before, after = C.load_pair("default", finetuned)
    assert C.has_classifier(finetuned) and hasattr(after.model, "classifier")
    res = C.compare_models(before, after, corpus, batch_size=3)
    assert res.cosine.min() < 0.999  # training moved some head
    assert not res.identical
    assert res.predictions is not None and len(res.predictions) == len(SENTENCES)
    assert set(res.predictions) <= {"negative", "positive"}
    # predictions are the argmax of the classifier's own logits
    enc = corpus.encodings[0]
    from analysis.attention import forward

    logits = forward(after.model, after.tokenizer, [enc]).logits
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
    ids = C.encode_corpus(before.tokenizer, SENTENCES, labels=[
        str(after.model.config.label2id[lab]) for lab in LABELS])
    res_ids = C.compare_models(before, after, ids, batch_size=3)
    assert res_ids.correct.tolist() == correct.tolist()
    # labels the classifier does not know: said plainly, split by gold label only
    odd = C.encode_corpus(before.tokenizer, SENTENCES, labels=["x", "y"] * 3)
    res_odd = C.compare_models(before, after, odd, batch_size=3)
    assert res_odd.correct is None and "do not match the data's labels" in res_odd.label_note
    assert set(res_odd.groups()) == {"label"}


# ---------------------------------------------------------------------------------------------
# Checks with plain messages


def test_different_tokenizer_and_shape_are_refused(base):
    other = copy.copy(base)
    other.tokenizer = copy.deepcopy(base.tokenizer)
    other.tokenizer.add_tokens(["zzqxword"])
    with pytest.raises(C.CompareError, match="different tokenizers"):
        C.check_compatible(base, other)
    smaller = copy.copy(base)
    smaller.n_layers = base.n_layers - 1
    with pytest.raises(C.CompareError, match="different shapes: before has 6 layers x 12 heads"):
        C.check_compatible(base, smaller)


def make_two_layer_folder(folder: Path) -> Path:
    """A randomly initialised 2-layer BERT with the default tokenizer (a different shape)."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=2,
                        num_attention_heads=12, intermediate_size=512)
    folder.mkdir(parents=True, exist_ok=True)
    BertModel(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(default_model_path()).save_pretrained(folder)
    return folder


def test_folder_of_another_shape_is_refused_plainly(tmp_path):
    folder = make_two_layer_folder(tmp_path / "small")
    with pytest.raises(C.CompareError) as info:
        C.load_pair("default", str(folder))
    assert str(info.value) == (
        "The models have different shapes: before has 6 layers x 12 heads, after has 2 layers "
        "x 12 heads; heads can only be compared between checkpoints of one architecture.")


def test_checkpoint_stamp_changes_when_a_folder_is_written_again(tmp_path):
    assert C.checkpoint_stamp("default") == "" and C.checkpoint_stamp(str(tmp_path / "x")) == ""
    (tmp_path / "config.json").write_text("{}")
    first = C.checkpoint_stamp(str(tmp_path))
    import os

    os.utime(tmp_path / "config.json", ns=(1, int(first) + 10**9))
    assert first and C.checkpoint_stamp(str(tmp_path)) == str(int(first) + 10**9)


def test_missing_folder_and_empty_corpus(base, tmp_path):
    with pytest.raises(ModelLoadError, match=r"^After model: The folder .* does not exist\."):
        C.load_pair("default", str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="The corpus is empty"):
        C.encode_corpus(base.tokenizer, ["", "   ", "\u200b"])
    from datasets import Dataset

    with pytest.raises(DataError, match="The corpus is empty"):
        C.corpus_from_dataset(base.tokenizer, Dataset.from_dict({"text": []}))


def test_cli_writes_the_measures_and_fails_plainly(tmp_path, finetuned, capsys, base):
    from analysis.cli import main

    data = tmp_path / "reviews.jsonl"
    data.write_text("\n".join(json.dumps({"text": t, "label": lab})
                              for t, lab in zip(SENTENCES, LABELS)) + "\n", encoding="utf-8")
    out = tmp_path / "drift.json"
    rc = main(["compare", "--after", finetuned, "--data", str(data), "--max-examples", "5",
               "--out", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert np.array(doc["cosine"]).shape == (6, 12)
    assert len(doc["rsa"]) == len(doc["cka"]) == 7
    assert np.array(doc["noop_delta"]["cls"]).shape == (6, 12)
    assert np.array(doc["noop_delta"]["sep"]).shape == (6, 12)
    assert set(doc["patterns"]["before"]) == set(C.PATTERN_TYPES)
    assert sum(doc["patterns"]["after"].values()) == pytest.approx(1.0)
    assert doc["n_examples"] == 5
    assert set(doc["groups"]["label"]) == {"negative", "positive"}
    # the same numbers as the library
    before, after = C.load_pair("default", finetuned)
    res = C.compare_models(before, after, C.encode_corpus(base.tokenizer, SENTENCES[:5]))
    np.testing.assert_allclose(doc["cosine"], res.cosine, atol=1e-5)
    capsys.readouterr()
    assert main(["compare", "--after", str(tmp_path / "missing"), "--data", str(data),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "After model: The folder" in err[0]


@pytest.mark.skipif(not (DATA / "semeval2014" / "Restaurants_Train.xml").is_file(),
                    reason="shared SemEval data absent")
def test_semeval_sentences_identical_models_say_so(base):
    from analysis.data import read_corpus

    ds = read_corpus(DATA / "semeval2014" / "Restaurants_Train.xml", max_examples=8)
    res = C.compare_models(base, base, C.corpus_from_dataset(base.tokenizer, ds))
    assert res.n_examples == 8
    assert res.to_json()["identical"] is True
    assert res.to_json()["summary"].startswith("The two models have identical weights")
