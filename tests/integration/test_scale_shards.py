"""Map/merge (analysis.core.execution.corpus): a corpus cut into shards (uneven, one example each,
empty
ones) and merged gives the whole-corpus numbers (to 1e-6; counts exactly) for the no-op
statistics, drift and syntactic heads, on tiny models and planted texts."""

from __future__ import annotations

import dataclasses

import datasets
import numpy as np
import pytest

from analysis.core.encoding import encode_dataset
from analysis.core.execution.corpus import run_local, run_sharded, shard_bounds

TEXTS = ["The soup was cold.", "   ", "Great food, friendly staff and a view!",
         "No.", "The waiter ignored us for twenty minutes, then brought the wrong dish.",
         "Cheap, tasty and quick.", "I would not come back.", "Service was slow; dessert fine."]
PAIRS = [None, None, "was it good ?", None, None, "yes", None, None]
LABELS = ["neg", "pos", "pos", "", "neg", "pos", "neg", "neg"]
N = len(TEXTS)
CUTS = {
    "uneven": [0, 1, 4, 7, N],
    "one_each": list(range(N + 1)),
    "empty_shards": [0, 0, 3, 3, 3, N, N],
}


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


@pytest.fixture(scope="module")
def corpus():
    return datasets.Dataset.from_dict({"text": TEXTS, "text_pair": PAIRS, "label": LABELS})


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), atol=tol, rtol=0,
                               equal_nan=True)


def test_shard_bounds_cover_every_row_once():
    assert shard_bounds(8, 3) == [0, 3, 5, 8]
    assert shard_bounds(2, 4) == [0, 0, 1, 2, 2]  # more shards than rows: empty shards


@pytest.fixture(scope="module")
def noop_whole(tiny, corpus):
    from analysis.noop import corpus_stats
    from analysis.noop.corpus import NoopJob

    whole = corpus_stats(tiny, corpus, batch_size=3)
    job = NoopJob(tiny.spec, batch_size=3)
    same = run_local(job, tiny, corpus)  # the same path
    assert same.to_json() == whole.to_json()
    assert sorted(same.metrics) == sorted(whole.metrics) and all(
        np.array_equal(same.metrics[m], whole.metrics[m]) for m in whole.metrics)  # norms too
    return job, whole


@pytest.mark.parametrize("cut", sorted(CUTS))
def test_noop_shards_merge_to_the_whole_corpus(tiny, corpus, noop_whole, cut):
    job, whole = noop_whole
    merged = run_sharded(job, tiny, corpus, CUTS[cut])
    encs = encode_dataset(tiny.tokenizer, corpus, tiny.max_length).encodings
    # counts exactly: 7 readable examples (the blank one skipped), their tokens and pairs
    assert (merged.n_examples, merged.n_tokens, merged.n_pairs) == (
        7, sum(e.n_tokens for e in encs), 2)
    assert (merged.n_examples, merged.n_tokens, merged.n_pairs, merged.n_truncated) == (
        whole.n_examples, whole.n_tokens, whole.n_pairs, whole.n_truncated)
    assert merged.notes == whole.notes == [
        "Skipped 1 example(s) with no token the model can read."]
    close(merged.uniform_entropy, np.mean([np.log(e.n_tokens) for e in encs]), 1e-12)
    assert sorted(merged.metrics) == sorted(whole.metrics)
    for name in whole.metrics:
        close(merged.metrics[name], whole.metrics[name])
    # the squares behind the intervals (issue 35) add too: per layer and over all heads
    assert sorted(merged.squares) == sorted(whole.squares) and "layer:special" in whole.squares
    for name in whole.squares:
        close(merged.squares[name], whole.squares[name])
    close(merged.layer_ci("special"), whole.layer_ci("special"))


def test_noop_every_shard_empty_or_blank_is_the_empty_corpus_error(tiny):
    from analysis.core.errors import DataError
    from analysis.noop.corpus import NoopJob

    blank = datasets.Dataset.from_dict({"text": [" ", "\u200b"]})
    with pytest.raises(DataError, match="The corpus is empty"):
        run_sharded(NoopJob(tiny.spec), tiny, blank, [0, 0, 1, 2])


@pytest.fixture(scope="module")
def pair(tiny, tiny_model_dir, tmp_path_factory):
    """(before, after) tiny models: the after one has layer 1's query weights perturbed."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    src = tiny_model_dir("bert")
    model = AutoModel.from_pretrained(src)
    with torch.no_grad():
        q = model.encoder.layer[1].attention.self.query.weight
        q.add_(torch.randn(q.shape, generator=torch.Generator().manual_seed(1)))
    folder = tmp_path_factory.mktemp("tiny-after")
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(src).save_pretrained(folder)
    return str(src), str(folder)


@pytest.fixture(scope="module")
def drift_whole(pair, corpus):
    """(job, models, whole-corpus result of compare_models)."""
    from analysis.drift import compare_models, load_pair
    from analysis.drift.job import DriftJob, has_labels, models_of

    before, after = load_pair(*pair)
    whole = compare_models(before, after, encode_dataset(before.tokenizer, corpus,
                                                         before.max_length), batch_size=3)
    job = DriftJob(*pair, batch_size=3, has_labels=has_labels(corpus))
    models = models_of(before, after)
    assert run_local(job, models, corpus).to_json() == whole.to_json()  # the same path
    return job, models, whole


@pytest.mark.parametrize("cut", sorted(CUTS))
def test_drift_shards_merge_to_the_whole_corpus(drift_whole, corpus, cut):
    job, models, whole = drift_whole
    merged = run_sharded(job, models, corpus, CUTS[cut])
    # rows, texts and labels exactly, in corpus order; the blank row 1 skipped
    assert merged.rows == whole.rows == [0, 2, 3, 4, 5, 6, 7]
    assert merged.texts == whole.texts and merged.pairs == whole.pairs
    assert merged.labels == whole.labels == [LABELS[i] for i in whole.rows]
    assert merged.notices == whole.notices and merged.identical == whole.identical is False
    assert list(merged.n_tokens) == list(whole.n_tokens)
    for name in ("cosine_examples", "rsa_examples", "cka", "features_before",
                 "features_after"):
        close(getattr(merged, name), getattr(whole, name))
    for side in ("noop_before", "noop_after"):
        for k in getattr(whole, side):
            close(getattr(merged, side)[k], getattr(whole, side)[k])
    # only layer 2 (index 1) was perturbed: layer 1's heads are identical in every shard
    close(merged.cosine[0], np.ones(merged.cosine[0].shape))
    assert merged.cosine[1].min() < 0.999
    a, b = merged.to_json(), whole.to_json()
    assert a["summary"] == b["summary"] and a["patterns"] == b["patterns"]


def test_cka_accumulators_merge_exactly():
    """Linear CKA of X, Y fed in three chunks to separate accumulators (each with its own
    shift) and merged equals the direct formula on all rows."""
    from analysis.drift.similarity import CKAAccumulator

    rng = np.random.default_rng(0)
    x = rng.normal(5.0, 1.0, (40, 6))
    y = x @ rng.normal(size=(6, 4)) + rng.normal(0, 0.5, (40, 4)) + 30.0
    accs = []
    for lo, hi in ((0, 7), (7, 7), (7, 31), (31, 40)):
        acc = CKAAccumulator()
        acc.update(x[lo:hi], y[lo:hi])
        accs.append(acc)
    merged = accs[1]  # an empty one first
    for acc in (accs[2], accs[0], accs[3]):
        merged.merge(acc)
    xc, yc = x - x.mean(0), y - y.mean(0)
    direct = np.linalg.norm(yc.T @ xc) ** 2 / (np.linalg.norm(xc.T @ xc)
                                                * np.linalg.norm(yc.T @ yc))
    assert merged.n == 40
    close(merged.value(), direct, 1e-10)


TREEBANK = "\n".join([
    "1\tThe\t_\tDET\t_\t_\t2\tdet\t_\t_", "2\tsoup\t_\tNOUN\t_\t_\t4\tnsubj\t_\t_",
    "3\twas\t_\tAUX\t_\t_\t4\tcop\t_\t_", "4\tcold\t_\tADJ\t_\t_\t0\troot\t_\t_",
    "5\t.\t_\tPUNCT\t_\t_\t4\tpunct\t_\t_", "",
    "1\tMy\t_\tPRON\t_\t_\t2\tnmod:poss\t_\t_", "2\tfriends\t_\tNOUN\t_\t_\t3\tnsubj\t_\t_",
    "3\tloved\t_\tVERB\t_\t_\t0\troot\t_\t_", "4\tthe\t_\tDET\t_\t_\t7\tdet\t_\t_",
    "5\tunbelievably\t_\tADV\t_\t_\t6\tadvmod\t_\t_", "6\tgood\t_\tADJ\t_\t_\t7\tamod\t_\t_",
    "7\tbread\t_\tNOUN\t_\t_\t3\tobj\t_\t_", "",
    "1\tYes\t_\tINTJ\t_\t_\t0\troot\t_\t_", "2\t!\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_", "",
    "1\tThe\t_\tDET\t_\t_\t2\tdet\t_\t_", "2\tbread\t_\tNOUN\t_\t_\t3\tnsubj\t_\t_",
    "3\twas\t_\tAUX\t_\t_\t0\troot\t_\t_", "4\tgood\t_\tADJ\t_\t_\t3\txcomp\t_\t_", "",
]) + "\n"


@pytest.mark.parametrize("cut", [[0, 1, 4], [0, 1, 2, 3, 4], [0, 0, 2, 2, 4, 4]])
def test_syntax_shards_merge_exactly(tiny, cut):
    from analysis.syntax.run import syntax_heads
    from analysis.syntax.job import HeadsJob
    from analysis.syntax.treebank import read_conllu

    ds = read_conllu(TREEBANK.encode("utf-8"))
    short = dataclasses.replace(tiny, max_length=8)  # the 7-word sentence does not fit
    for model in (tiny, short):
        whole = syntax_heads(model, ds, batch_size=2)
        merged = run_sharded(HeadsJob(model.spec, batch_size=2), model, ds, cut)
        assert merged.to_json() == whole.to_json()  # counts, so accuracies are exact
        # the per-sentence hits behind the lead's interval come back in order: same interval
        assert "gap_ci" in whole.to_json()["relations"]["all"]
        assert [r.gap_ci for r in merged.relations.values()] == [
            r.gap_ci for r in whole.relations.values()]
        assert (merged.rows, merged.ids, merged.words, merged.heads, merged.deprels,
                merged.notes) == (whole.rows, whole.ids, whole.words, whole.heads,
                                  whole.deprels, whole.notes)
    # planted counts: 4 sentences, 2 + 3 + 1 + 2 ... dependents with a head other than 0
    full = run_sharded(HeadsJob(tiny.spec, batch_size=2), tiny, ds, cut)
    assert full.n_sentences == 4 and full.relations["all"].n == 4 + 6 + 1 + 3
    assert full.relations["det"].n == 3 and full.relations["nsubj"].n == 3
    cut_short = run_sharded(HeadsJob(short.spec, batch_size=2), short, ds, cut)
    assert (cut_short.n_sentences, cut_short.skipped, cut_short.rows) == (3, 1, [0, 2, 3])
    assert cut_short.notes == ["Skipped 1 sentence(s) longer than the model's maximum of 8 "
                               "tokens."]
