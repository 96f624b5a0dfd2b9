"""No-op statistics over a corpus: the value norms against the model's own attention output,
the streamed batches against one example at a time, the memory-bounded batches, truncation,
real data and other architectures (docs/METHODS.md sections 3 and 4)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.batching import batches
from analysis.core.corpus import read_corpus, read_pasted, sample_corpus
from analysis.core.encoding import encode, encode_dataset
from analysis.core.forward import forward
from analysis.core.hooks import capture, value_modules
from analysis.core.models import load_model
from analysis.noop import corpus_stats, noop_heads, positional_heads, reading
from bench.references.noop import corpus_stats_loop


def test_value_norms_reproduce_the_attention_output(default_model):
    """sum_h sum_j A_h[i,j] f_h(x_j) + b_O must equal the attention output projection's output:
    f is exactly the value projection followed by the head's slice of the output projection."""
    import torch

    lm = default_model
    pairs = value_modules(lm.model, lm.n_layers)
    assert pairs is not None and len(pairs) == 6
    enc = encode(lm.tokenizer, "The soup was cold, but the staff were kind.")
    captured = {}
    with capture([pairs[2][0]]) as vals, capture([pairs[2][1]]) as outs:
        out = forward(lm.model, lm.tokenizer, [enc], capture=("value_norms",))
    captured["out"] = outs[0]
    values = vals[0][0]  # [N, D] value projection output of layer 3
    fnorm = out.captured["value_norms"][2][0]  # [H, N]
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
    encs = encode_dataset(default_model.tokenizer, ds, default_model.max_length).encodings
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


def test_budget_batches_sorted_capped_and_memory_bounded():
    lengths = [5, 50, 7, 50, 6, 400, 8]
    mb = 6000 / 2 ** 20  # a budget of 6000 query-key pairs (1 byte each)
    b = batches(lengths, 3, bytes_per_token_pair=1, max_batch_mb=mb)
    # longest first; 400^2 alone exceeds the budget but still runs; 2 x 50^2 fits, 3 x 50^2
    # does not; the short ones stop at batch_size
    assert b == [[5], [1, 3], [6, 2, 4], [0]]
    assert (batches(lengths, 3, bytes_per_token_pair=1, max_batch_mb=1.0)
            == [[5, 1, 3], [6, 2, 4], [0]])


@pytest.mark.parametrize("arch,has_norms", [("roberta", True), ("distilbert", True),
                                            ("albert", False)])
def test_other_architectures_batch_equals_loop(tiny_model_dir, arch, has_norms):
    lm = load_model(str(tiny_model_dir(arch)))
    ds = read_pasted("The soup was cold, sadly.\nIs it open?\tYes, on Sundays.\nOk.")
    st = corpus_stats(lm, ds, batch_size=2)
    ref = corpus_stats_loop(lm, ds)
    for k, v in ref.items():
        assert np.abs(st.metrics[k] - v).max() < 1e-5, k
    assert ("norm_sep" in st.metrics) is has_norms
    assert (st.norms_note is None) is has_norms
