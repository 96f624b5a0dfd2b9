"""Map/merge (analysis.core.execution.corpus) for no-op gradients, attribution faithfulness and head
importance: a corpus cut into uneven, one-example and empty shards and merged gives the
in-process numbers (to 1e-6; counts exactly), on tiny models and planted data."""

from __future__ import annotations

import datasets
import numpy as np
import pytest

from analysis.core.execution.corpus import run_local, run_sharded

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
def grads_whole(tiny_mlm_dir, corpus):
    from analysis.core.encoding import encode_dataset
    from analysis.noop import gradient_importance, loss_head
    from analysis.noop.gradients import GradientsJob

    head = loss_head(tiny_mlm_dir)
    job = GradientsJob(tiny_mlm_dir, batch_size=2, max_length=128)
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
    from analysis.core.errors import DataError
    from analysis.noop import loss_head
    from analysis.noop.gradients import GradientsJob

    job, head, _ = grads_whole
    blank = datasets.Dataset.from_dict({"text": [" ", "\u200b"]})
    with pytest.raises(DataError, match="The corpus is empty"):
        run_sharded(job, head, blank, [0, 1, 1, 2])
    bare = str(tiny_model_dir("bert"))  # an encoder without any loss head
    with pytest.raises(DataError, match="no such task to score"):
        run_local(GradientsJob(bare), loss_head(bare), blank)


# --- Attribution faithfulness (docs/METHODS.md section 11) -----------------------------------

def flat(obj, path=""):
    """[(path, value)] of every leaf of a nested JSON-like dict / list."""
    if isinstance(obj, dict):
        return [x for k in sorted(obj) for x in flat(obj[k], f"{path}/{k}")]
    if isinstance(obj, (list, tuple)):
        return [x for i, v in enumerate(obj) for x in flat(v, f"{path}/{i}")]
    return [(path, obj)]


def same_json(a, b, tol=1e-6):
    fa, fb = flat(a), flat(b)
    assert [p for p, _ in fa] == [p for p, _ in fb]
    for (p, x), (_, y) in zip(fa, fb):
        if isinstance(x, float) or isinstance(y, float):
            close(x, y, tol)
        else:
            assert x == y, p


@pytest.fixture(scope="module")
def faith_whole(tmp_path_factory):
    from analysis.attribution.faithfulness import FaithfulnessJob, examples_dataset, faithfulness
    from attribution_models import tiny_classifier

    tiny = tiny_classifier(tmp_path_factory)
    methods = ("attention", "norm_resln")
    whole = faithfulness(tiny, TEXTS, PAIRS, methods, ks=(10, 50), seeds=3, steps=4)
    job = FaithfulnessJob(tiny.spec, methods, (10, 50), "drop", 3, 4)
    ds = examples_dataset(TEXTS, PAIRS)
    same_json(run_local(job, tiny, ds).to_json(), whole.to_json(), 0.0)  # exactly
    return job, tiny, ds, whole


@pytest.mark.parametrize("cut", sorted(CUTS))
def test_faithfulness_shards_merge_to_the_whole_corpus(faith_whole, cut):
    job, tiny, ds, whole = faith_whole
    merged = run_sharded(job, tiny, ds, CUTS[cut])
    assert merged.n_examples == whole.n_examples == 5  # the blank row 1 skipped
    assert merged.notes == whole.notes == [
        "1 example(s) skipped (empty or longer than 512 tokens)."]
    assert merged.methods["norm_resln"]["comprehensiveness"]["n"] == 5
    assert len(merged.methods["attention"]["sufficiency"]["curve"]) == 2  # one per k
    # the random ranking of row i is drawn from default_rng([seed, i]) wherever row i is
    # measured, so the baseline and every bootstrap interval are the whole corpus's
    same_json(merged.to_json(), whole.to_json())


def test_faithfulness_empty_shards_only_is_the_plain_error(faith_whole):
    from analysis.core.errors import DataError

    job, tiny, _, _ = faith_whole
    blank = datasets.Dataset.from_dict({"text": [" ", ""]})
    with pytest.raises(DataError, match="None of the examples could be explained"):
        run_sharded(job, tiny, blank, [0, 0, 1, 2])


# --- Head importance (docs/METHODS.md section 12) --------------------------------------------

def cuts_of(n: int) -> dict:
    return {"uneven": [0, 1, n // 2, n - 1, n], "one_each": list(range(n + 1)),
            "empty_shards": [0, 0, 2, 2, n - 2, n, n]}


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    from importance_util import tiny_labelled

    return tiny_labelled(tmp_path_factory.mktemp("labelled"))


@pytest.fixture(scope="module")
def absa():
    from importance_util import tiny_absa

    loaded, _, ev = tiny_absa("qa_m", 4)
    return loaded, ev


def sharded(cut):
    """A ``run`` for importance_study: the job over the given shards, merged."""
    return lambda job, models, dataset, progress: run_sharded(job, models, dataset, cut)


@pytest.mark.parametrize("cut", ["uneven", "one_each", "empty_shards"])
def test_importance_ablations_shards_merge_to_the_whole_set(labelled, cut):
    from analysis.importance.ablate import padded_batches, run_ablations, single_ablations
    from analysis.importance.gradients import gradient_importance
    from analysis.importance.job import AblationJob, eval_dataset

    loaded, ev = labelled
    assert ev.n_examples == 6 and list(ev.labels) == [2, 0, 1, 0, 2, 1]  # planted CSV labels
    disabled = single_ablations(loaded.n_layers, loaded.n_heads)
    job = AblationJob(loaded.spec, disabled, "mask")
    ds = eval_dataset(ev)
    whole = run_local(job, loaded, ds)
    # one shard is today's computation: the same logits and gate gradients, bit for bit
    assert np.array_equal(whole.logits, run_ablations(loaded, ev, disabled, "mask"))
    raw, _ = gradient_importance(loaded, ev, padded_batches(loaded.tokenizer, ev))
    assert np.array_equal(whole.gradient_raw, raw)
    merged = run_sharded(job, loaded, ds, cuts_of(6)[cut])
    assert merged.n_examples == 6 and merged.logits.shape == (11, 6, 3)  # 1 + 2*4 + 2
    close(merged.logits, whole.logits)
    close(merged.gradient_raw, whole.gradient_raw)


STUDY = dict(method="mask", prune=True, n_boot=200, random_seeds=(0, 1))


@pytest.fixture(scope="module")
def study_whole(labelled):
    from analysis.importance import importance_study

    return importance_study(*labelled, **STUDY)


@pytest.mark.parametrize("cut", ["uneven", "one_each", "empty_shards"])
def test_importance_study_on_shards_equals_in_process(labelled, study_whole, cut):
    from analysis.importance import importance_study

    loaded, ev = labelled
    kw, whole = STUDY, study_whole
    assert whole.pruning is not None and len(whole.pruning["by_importance"]) == 10
    merged = importance_study(loaded, ev, run=sharded(cuts_of(6)[cut]), **kw)
    assert (merged.n_examples, merged.n_units, merged.metric) == (6, 6, "accuracy")
    same_json(merged.to_json(), whole.to_json())
    for m in whole.metrics:  # every metric, with its paired bootstrap intervals
        assert merged.intact[m] == pytest.approx(whole.intact[m], abs=1e-6)
        close(merged.heads[m], whole.heads[m])
        close(merged.heads_ci[m], whole.heads_ci[m])
        close(merged.layers_ci[m], whole.layers_ci[m])


def test_importance_absa_shards_cut_through_sentences(absa):
    """ABSA pairs of one sentence split over shards: F1 and 4-way accuracy (per-sentence
    units) are computed on the merged predictions, so they equal the whole set's."""
    from analysis.importance import importance_study

    loaded, ev = absa
    n = ev.n_examples
    assert n == 4 * 5 and ev.n_units == 4  # qa_m: one pair per sentence and category
    whole = importance_study(loaded, ev, n_boot=200)
    merged = importance_study(loaded, ev, n_boot=200, run=sharded([0, 3, 3, 7, 13, n]))
    same_json(merged.to_json(), whole.to_json())
    for m in ("aspect_f1", "acc_4way", "loss"):
        close(merged.heads_ci[m], whole.heads_ci[m])


def test_importance_every_shard_empty_is_a_plain_error(labelled):
    from analysis.core.errors import DataError
    from analysis.importance.ablate import single_ablations
    from analysis.importance.job import AblationJob, eval_dataset

    loaded, ev = labelled
    job = AblationJob(loaded.spec, single_ablations(2, 4))
    with pytest.raises(DataError, match="no examples"):
        run_sharded(job, loaded, eval_dataset(ev).select([]), [0, 0, 0])
