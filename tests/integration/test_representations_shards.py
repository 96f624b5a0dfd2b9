"""The representations corpus part as a map/merge job (analysis.core.execution.corpus): run_local
gives
corpus_representations' numbers, and shards (uneven, one example each, empty ones) merged give
the same probes, curves and scatter (to 1e-6) for a treebank, ABSA data and a labelled corpus
(the Ray path: tests/test_cli_representations.py, --ray auto)."""

from __future__ import annotations

import datasets
import numpy as np
import pytest

from analysis.absa.readers import load_sample
from analysis.core.models import load_model
from analysis.representations.run import corpus_job, corpus_representations
from analysis.core.execution.corpus import run_local, run_sharded
from analysis.syntax.treebank import sample_treebank

TEXTS = ["The soup was cold.", "Great food, friendly staff and a view!", "No.",
         "The waiter ignored us for twenty minutes.", "Cheap, tasty and quick.",
         "I would not come back.", "Service was slow; dessert fine."]
LABELS = ["neg", "pos", "neg", "neg", "pos", "neg", "neg"]


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return load_model(str(tiny_model_dir("bert")))


def corpora():
    return {"labelled": datasets.Dataset.from_dict(
                {"text": TEXTS, "text_pair": [None] * 7, "label": LABELS}),
            "treebank": sample_treebank(max_sentences=7),
            "absa": load_sample().select(range(7))}


def same(a, b, tol=1e-6):
    def close(x, y, atol=tol):
        np.testing.assert_allclose(np.asarray(x, float), np.asarray(y, float), atol=atol,
                                   rtol=0, equal_nan=True)
    for sa, sb in ((a.model, b.model), (a.compare, b.compare)):
        assert (sa is None) == (sb is None)
        if sa is None:
            continue
        assert set(sa.probes) == set(sb.probes)
        for name in sa.probes:
            close(sa.probes[name].layers, sb.probes[name].layers)
            assert sa.probes[name].majority == sb.probes[name].majority
        for fa, fb in ((sa.anisotropy, sb.anisotropy), (sa.self_similarity, sb.self_similarity)):
            assert [v is None for v in fa] == [v is None for v in fb]
            close([v for v in fa if v is not None], [v for v in fb if v is not None])
    assert (a.n_sentences, a.n_words, a.notes) == (b.n_sentences, b.n_words, b.notes)
    assert (a.scatter.forms, a.scatter.colours, a.scatter.contexts, a.scatter.legend) == (
        b.scatter.forms, b.scatter.colours, b.scatter.contexts, b.scatter.legend)
    for pa, pb in zip(a.scatter.points, b.scatter.points):
        close(np.abs(pa), np.abs(pb), 1e-4)  # PCA: up to each axis's sign


@pytest.mark.parametrize("kind", ["labelled", "treebank", "absa"])
def test_shards_merge_to_the_whole_corpus(tiny, kind):
    ds = corpora()[kind]
    kw = dict(folds=2, max_points=40, batch_size=3)
    other = tiny if kind == "labelled" else None  # two models once
    whole = corpus_representations(tiny, ds, other, **kw)
    job, cut = corpus_job(tiny, ds, other, **kw)
    assert cut is ds and job.kind == kind
    same(run_local(job, (tiny, other), ds), whole)
    cuts = [[0, 1, 4, 7], [0, 0, 3, 3, 7, 7]] + ([list(range(8))] if other else [])
    for bounds in cuts:  # uneven, empty shards, one example each
        same(run_sharded(job, (tiny, other), ds, bounds), whole)


def test_the_job_pickles_and_empty_corpus_is_refused(tiny):
    import pickle

    from analysis.core.errors import DataError

    job, _ = corpus_job(tiny, corpora()["labelled"], None, folds=2)
    assert pickle.loads(pickle.dumps(job)) == job
    with pytest.raises(DataError):
        job.merge([job.map((tiny, None), corpora()["labelled"].select([]), [])])
