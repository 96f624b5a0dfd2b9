"""No-op statistics: each statistic by hand on tiny maps, batch == one by one, norms against the
model's own attention output, gradients with a real loss, real data, and the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from analysis.attention import Encoding, encode
from analysis.data import read_corpus, read_pasted, sample_corpus
from analysis.stats import (CorpusStats, ValueNormHooks, batch_stats, corpus_stats,
                            corpus_stats_loop, encode_corpus, example_norm_stats, example_stats,
                            gradient_importance, loss_head, noop_heads, positional_heads, reading,
                            selectors, value_modules)


def fake_encoding(tokens, special):
    n = len(tokens)
    return Encoding(tokens=list(tokens), input_ids=list(range(n)), token_type_ids=[0] * n,
                    segments=np.zeros(n, dtype=np.int8), special=np.array(special, dtype=bool),
                    word_ids=list(range(n)), words=list(tokens), text=" ".join(tokens))


ENC4 = fake_encoding(["[CLS]", "a", ",", "[SEP]"], [1, 0, 0, 1])
# head 1: hand-made rows; head 2: uniform
HEAD1 = np.array([[0.5, 0.5, 0.0, 0.0],
                  [0.25, 0.25, 0.25, 0.25],
                  [0.0, 1.0, 0.0, 0.0],
                  [0.0, 0.0, 0.2, 0.8]])
MAP4 = np.stack([HEAD1, np.full((4, 4), 0.25)])[None]  # [L=1, H=2, 4, 4]

ENT_ROW3 = -(0.2 * math.log(0.2) + 0.8 * math.log(0.8))
EXPECTED = {
    #             head 1 (by hand)                                          head 2 (uniform)
    "cls": [(0.5 + 0.25) / 4, 0.25],
    "sep": [(0.25 + 0.8) / 4, 0.25],
    "punct": [(0.25 + 0.2) / 4, 0.25],
    "self": [(0.5 + 0.25 + 0 + 0.8) / 4, 0.25],
    "prev": [(0.25 + 1.0 + 0.2) / 4, 3 * 0.25 / 4],
    "next": [(0.5 + 0.25 + 0.0) / 4, 3 * 0.25 / 4],
    "entropy": [(math.log(2) + math.log(4) + 0 + ENT_ROW3) / 4, math.log(4)],
    "entropy_cls": [math.log(2), math.log(4)],
}


def test_selectors_single_and_pair():
    s = selectors(ENC4)
    assert s["cls"].tolist() == [True, False, False, False]
    assert s["sep"].tolist() == [False, False, False, True]
    assert s["punct"].tolist() == [False, False, True, False]
    assert s["other"].tolist() == [False, True, False, False]
    pair = fake_encoding(["[CLS]", "hi", ".", "[SEP]", "yo", "[UNK]", "[SEP]"],
                         [1, 0, 0, 1, 0, 0, 1])
    s = selectors(pair)
    assert s["sep"].tolist() == [False, False, False, True, False, False, True]
    assert s["other"].tolist() == [False, True, False, False, True, True, False]
    roberta = fake_encoding(["<s>", "x", "</s>", "</s>", "y", "</s>"], [1, 0, 1, 1, 0, 1])
    assert selectors(roberta)["sep"].tolist() == [False, False, True, True, False, True]
    assert selectors(roberta)["cls"].tolist() == [True, False, False, False, False, False]


def test_example_stats_by_hand():
    got = example_stats(MAP4, ENC4)
    assert set(got) == set(EXPECTED)
    for name, (h1, h2) in EXPECTED.items():
        assert got[name].shape == (1, 2)
        assert got[name][0, 0] == pytest.approx(h1, abs=1e-12), name
        assert got[name][0, 1] == pytest.approx(h2, abs=1e-12), name
    # the key categories partition every row: cls + sep + punct + other == 1
    other = (MAP4.sum(2) * selectors(ENC4)["other"]).sum(-1) / 4
    total = got["cls"] + got["sep"] + got["punct"] + other
    assert np.allclose(total, 1.0)


def test_example_stats_custom_punct():
    enc = fake_encoding(["[CLS]", "a", "!", "[SEP]"], [1, 0, 0, 1])
    assert example_stats(MAP4, enc)["punct"][0, 0] == 0.0
    assert example_stats(MAP4, enc, punct=("!",))["punct"][0, 0] == pytest.approx(0.45 / 4)


def test_example_norm_stats_by_hand():
    enc = fake_encoding(["[CLS]", "[SEP]"], [1, 1])
    attn = np.full((1, 1, 2, 2), 0.5)
    got = example_norm_stats(attn, np.array([[[3.0, 1.0]]]), enc)
    assert got["norm_cls"][0, 0] == pytest.approx(0.75)  # 0.5*3 / (0.5*3 + 0.5*1)
    assert got["norm_sep"][0, 0] == pytest.approx(0.25)
    # equal value norms: the norm shares are the weights
    same = example_norm_stats(MAP4, np.ones((1, 2, 4)), ENC4)
    w = example_stats(MAP4, ENC4)
    for k in ("cls", "sep", "punct"):
        assert np.allclose(same[f"norm_{k}"], w[k])


def _softmax_padded(rng, lengths, L=2, H=3):
    """Random post-softmax maps padded like a model batch (padded keys get 0)."""
    import torch

    N = max(lengths)
    atts = []
    for _ in range(L):
        logits = torch.randn(len(lengths), H, N, N, generator=rng, dtype=torch.float64)
        for b, n in enumerate(lengths):
            logits[b, :, :, n:] = -1e9
        atts.append(torch.softmax(logits, -1).float())
    return atts


def test_batch_stats_equals_example_stats_on_padded_maps():
    import torch

    rng = torch.Generator().manual_seed(0)
    encs = [fake_encoding(["[CLS]", "x", ",", "y", ".", "[SEP]"], [1, 0, 0, 0, 0, 1]),
            fake_encoding(["[CLS]", "z", "[SEP]"], [1, 0, 1]),
            fake_encoding(["[CLS]", "p", "[SEP]", "q", "r", ",", "[SEP]"], [1, 0, 1, 0, 0, 0, 1])]
    lengths = [len(e.tokens) for e in encs]
    atts = _softmax_padded(rng, lengths)
    fn = [torch.rand(3, 3, max(lengths), generator=rng) + 0.1 for _ in atts]
    got = batch_stats(atts, encs, fnorms=fn)
    for b, enc in enumerate(encs):
        n = lengths[b]
        crop = np.stack([a[b, :, :n, :n].numpy() for a in atts])
        ref = example_stats(crop, enc)
        ref.update(example_norm_stats(crop, np.stack([f[b, :, :n].numpy() for f in fn]), enc))
        for k, v in ref.items():
            assert np.abs(got[k][b] - v).max() < 1e-6, (b, k)
    # a subset computes only what is asked, with the same values
    some = batch_stats(atts, encs, metrics=("sep", "next", "entropy_cls"))
    assert sorted(some) == ["entropy_cls", "next", "sep"]
    for k in some:
        np.testing.assert_array_equal(some[k], got[k])
    with pytest.raises(ValueError, match="Unknown statistics"):
        batch_stats(atts, encs, metrics=("sep", "nope"))


def test_value_norms_reproduce_the_attention_output(default_model):
    """sum_h sum_j A_h[i,j] f_h(x_j) + b_O must equal the attention output projection's output:
    f is exactly the value projection followed by the head's slice of the output projection."""
    import torch

    lm = default_model
    pairs = value_modules(lm.model, lm.n_layers)
    assert pairs is not None and len(pairs) == 6
    enc = encode(lm.tokenizer, "The soup was cold, but the staff were kind.")
    from analysis.attention import forward

    captured = {}
    handle = pairs[2][1].register_forward_hook(lambda m, a, o: captured.update(out=o.detach()))
    try:
        with ValueNormHooks(pairs) as hooks:
            out = forward(lm.model, lm.tokenizer, [enc])
            values = hooks.values[2][0]  # [N, D] value projection output of layer 3
            fnorm = hooks.fnorms(lm.n_heads)[2][0]  # [H, N]
    finally:
        handle.remove()
    A = out.attentions[2][0]  # [H, N, N]
    H, N, _ = A.shape
    D = values.shape[-1]
    dh = D // H
    W = pairs[2][1].weight.detach()  # [D_out, D_in]
    f = torch.einsum("nhd,ohd->hno", values.reshape(N, H, dh), W.reshape(D, H, dh))
    assert torch.allclose(torch.linalg.vector_norm(f, dim=-1), fnorm, atol=1e-5)
    recon = torch.einsum("hij,hjo->io", A, f) + pairs[2][1].bias.detach()
    assert torch.allclose(recon, captured["out"][0], atol=1e-4)


def test_corpus_stats_batch_equals_one_by_one(default_model):
    ds = sample_corpus(max_examples=40)
    calls = []
    st = corpus_stats(default_model, ds, batch_size=7, progress=lambda d, t: calls.append((d, t)))
    ref = corpus_stats_loop(default_model, ds)
    for k, v in ref.items():
        assert np.abs(st.metrics[k] - v).max() < 1e-5, k
    assert calls[-1] == (40, 40) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) == 6  # ceil(40 / 7) batches
    encs, _ = encode_corpus(default_model, ds)
    assert st.n_examples == 40 and st.n_tokens == sum(e.n_tokens for e in encs)
    assert st.n_pairs == sum(p is not None for p in ds["text_pair"])
    assert st.uniform_entropy == pytest.approx(np.mean([np.log(e.n_tokens) for e in encs]))
    assert st.metrics["cls"].shape == (6, 12)
    # rows sum to 1, so the shares of disjoint key sets cannot exceed 1
    assert (st.metrics["cls"] + st.metrics["sep"] + st.metrics["punct"] <= 1 + 1e-6).all()
    assert (st.metrics["entropy"] <= st.uniform_entropy + 1.0).all()
    # norms switched off: the same weights, no norm metrics
    st2 = corpus_stats(default_model, ds, batch_size=16, norms=False)
    assert "norm_sep" not in st2.metrics
    assert np.abs(st2.metrics["sep"] - st.metrics["sep"]).max() < 1e-6


def test_truncated_examples_are_counted(default_model):
    long = " ".join(["word"] * 700)
    st = corpus_stats(default_model, read_pasted(f"Short one.\n{long}"), norms=False)
    assert st.n_examples == 2 and st.n_truncated == 1
    assert st.n_tokens == 512 + 5
    assert any("truncated" in n for n in st.notes)


def test_real_data_semeval(default_model, shared_data):
    ds = read_corpus(shared_data / "semeval2014" / "Restaurants_Train.xml", max_examples=150)
    st = corpus_stats(default_model, ds, batch_size=32)
    m = st.metrics
    # in MiniLM the sink is [CLS], not [SEP] (unlike BERT-base)
    assert m["cls"].mean() > 4 * m["sep"].mean()
    assert max(st.per_layer("cls") + st.per_layer("sep")) > 0.5
    # layer 1 head 3 is a previous-token head
    assert m["prev"][0, 2] > 0.8
    heads = positional_heads(st)
    assert heads[0]["layer"] == 1 and heads[0]["head"] == 3 and heads[0]["direction"] == "previous"
    lines = reading(st, "MiniLM")
    assert lines[0].startswith("In MiniLM the main attention sink is [CLS], not [SEP]")
    # no-op heads: most weight on [CLS]/[SEP] but a smaller share of the value norm
    top = noop_heads(st, top=5)
    assert top[0]["to [CLS]+[SEP]"] > 0.7
    assert all(r["norm share [CLS]+[SEP]"] < r["to [CLS]+[SEP]"] for r in top)


def _synthetic_stats(cls, sep):
    L, H = cls.shape
    z = np.zeros((L, H))
    metrics = {"cls": cls, "sep": sep, "punct": z + 0.05, "self": z + 0.1, "prev": z.copy(),
               "next": z.copy(),
               "entropy": z + 1.0, "entropy_cls": z + 1.5}
    return CorpusStats(model="m", n_layers=L, n_heads=H, n_examples=3, n_truncated=0,
                       n_tokens=30, metrics=metrics, uniform_entropy=2.3)


def test_reading_and_tables_follow_the_numbers():
    cls = np.array([[0.1, 0.05], [0.1, 0.1]])
    sep = np.array([[0.2, 0.1], [0.7, 0.6]])
    st = _synthetic_stats(cls, sep)
    st.metrics["next"][0, 1] = 0.6
    lines = reading(st, "ToyBERT")
    assert lines[0].startswith("In ToyBERT the main attention sink is [SEP], not [CLS]")
    assert "40% of attention goes to [SEP] and 9% to [CLS]" in lines[0]
    assert lines[1].startswith("In layer 2 more than half")
    assert "0 head(s) put more than half their attention on the previous token and 1" in lines[3]
    top = noop_heads(st, top=2)
    assert [(r["layer"], r["head"]) for r in top] == [(2, 1), (2, 2)]
    assert top[0]["to [CLS]+[SEP]"] == pytest.approx(0.8)
    assert positional_heads(st) == [{"layer": 1, "head": 2, "direction": "next", "share": 0.6}]
    d = st.to_json_dict(["cls", "sep"])
    assert d["metrics"]["sep"] == [[0.2, 0.1], [0.7, 0.6]] and d["n_examples"] == 3


# --- gradient importance --------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_heads(tmp_path_factory):
    import torch
    from transformers import (AutoTokenizer, BertConfig, BertForMaskedLM,
                              BertForSequenceClassification)

    from analysis.models import default_model_path

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
    assert "no trained masked-LM head" in head.note and "BertModel" in head.note
    from analysis.errors import DataError

    with pytest.raises(DataError):
        gradient_importance(head, [])


def test_gradient_importance_mlm_batch_equals_single_and_manual(tiny_heads):
    import torch

    from analysis.attention import _collate
    from analysis.stats import _mask_positions

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
    batch = _collate(head.tokenizer, [enc])
    pos = _mask_positions(enc, 0.15, 0)
    labels = torch.full_like(batch["input_ids"], -100)
    labels[0, pos] = batch["input_ids"][0, pos]
    batch["input_ids"][0, pos] = head.tokenizer.mask_token_id
    out = head.model(**batch, output_attentions=True, labels=labels)
    grads = torch.autograd.grad(out.loss, out.attentions)
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


# --- CLI ------------------------------------------------------------------------------------


def test_cli_stats_schema_and_values(tmp_path, default_model, capsys):
    from analysis.cli import main

    data = tmp_path / "c.jsonl"
    rows = [{"text": "The soup was cold, and the bread was stale."},
            {"text": "Is it open?", "text_pair": "Only on Sundays."},
            {"text": "Lovely."}]
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    out = tmp_path / "s.json"
    assert main(["stats", "--data", str(data), "--out", str(out), "--batch-size", "2"]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert set(got) >= {"model", "n_examples", "n_layers", "n_heads", "metrics"}
    assert (got["model"], got["n_examples"], got["n_layers"], got["n_heads"]) == ("default", 3, 6, 12)
    assert list(got["metrics"]) == ["cls", "sep", "punct", "self", "prev", "next", "entropy"]
    ref = corpus_stats_loop(default_model, read_corpus(data))
    for k, v in got["metrics"].items():
        arr = np.array(v)
        assert arr.shape == (6, 12) and isinstance(v[0][0], float)
        assert np.abs(arr - ref[k]).max() < 1e-5, k
    assert "wrote" in capsys.readouterr().out
    # the cap
    assert main(["stats", "--data", str(data), "--out", str(out), "--max-examples", "1"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["n_examples"] == 1


def test_cli_stats_bad_input(tmp_path, capsys):
    from analysis.cli import main

    empty = tmp_path / "e.txt"
    empty.write_text("", encoding="utf-8")
    csvf = tmp_path / "c.csv"
    csvf.write_text("review\nnice\n", encoding="utf-8")
    cases = [
        (["--data", str(empty), "--out", str(tmp_path / "o.json")], "empty"),
        (["--data", str(csvf), "--out", str(tmp_path / "o.json")], "no column 'text'"),
        (["--data", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "o.json")],
         "not found"),
        (["--data", str(csvf), "--out", str(tmp_path / "o.txt")], ".json"),
    ]
    blanks = tmp_path / "b.txt"
    blanks.write_text("The soup was cold.\n\nService was fine.\n", encoding="utf-8")
    # a note about the blank line goes to stdout; stderr holds the one error line
    cases.append((["--data", str(blanks), "--model", str(tmp_path / "none"), "--out",
                   str(tmp_path / "o.json")], "does not exist"))
    for args, expect in cases:
        assert main(["stats", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and expect in err and "\n" not in err


def test_budget_batches_sorted_capped_and_memory_bounded():
    from analysis.stats import budget_batches

    lengths = [5, 50, 7, 50, 6, 400, 8]
    mb = 6000 / 2 ** 20  # a budget of 6000 query-key pairs (1 byte each)
    b = budget_batches(lengths, batch_size=3, per_token_pair=1, max_batch_mb=mb)
    # longest first; 400^2 alone exceeds the budget but still runs; 2 x 50^2 fits, 3 x 50^2
    # does not; the short ones stop at batch_size
    assert b == [[5], [1, 3], [6, 2, 4], [0]]
    assert budget_batches(lengths, 3, 1, max_batch_mb=1.0) == [[5, 1, 3], [6, 2, 4], [0]]


@pytest.mark.parametrize("arch,has_norms", [("roberta", True), ("distilbert", True),
                                            ("albert", False)])
def test_other_architectures_batch_equals_loop(tiny_model_dir, arch, has_norms):
    from analysis.models import load_model

    lm = load_model(str(tiny_model_dir(arch)))
    ds = read_pasted("The soup was cold, sadly.\nIs it open?\tYes, on Sundays.\nOk.")
    st = corpus_stats(lm, ds, batch_size=2)
    ref = corpus_stats_loop(lm, ds)
    for k, v in ref.items():
        assert np.abs(st.metrics[k] - v).max() < 1e-5, k
    assert ("norm_sep" in st.metrics) is has_norms
    assert (st.norms_note is None) is has_norms
