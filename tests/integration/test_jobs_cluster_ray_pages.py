"""Head importance, Attribution faithfulness and the Search index through the app's job queue on
a real local Ray cluster (2 CPUs on 127.0.0.1, started and shut down here) with
DASHBOARD_RAY_ADDRESS=auto: the page's job sends its corpus jobs to the cluster and gives the
in-process numbers; a model the workers cannot load (its folder gone after the server loaded
it) runs in this process, with the in-process numbers, and the next job of it is queued here
from the start. (The first-visit background job's cluster ticket:
tests/test_jobs_cluster_pages.py, with a fake cluster.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import builders

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -r "
                          "requirements-ray.txt to run the app-on-a-cluster page tests")

from test_scale_ray_more import same_json  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["The soup was cold, sadly.", "   ", "Great food, friendly staff and a view!"]


@pytest.fixture(scope="module")
def cluster_env():
    import streamlit as st

    from ui.common.jobs import kept
    from ui.server.settings import settings

    with builders.local_ray_cluster(), pytest.MonkeyPatch.context() as mp:
        mp.setenv("DASHBOARD_RAY_ADDRESS", "auto")
        settings.cache_clear()
        st.cache_data.clear()
        kept.clear_all()
        try:
            yield
        finally:
            mp.delenv("DASHBOARD_RAY_ADDRESS")
            settings.cache_clear()
            st.cache_data.clear()
            kept.clear_all()


@pytest.fixture
def sent(monkeypatch):
    """The jobs the app sent to the cluster (the real runner still runs them)."""
    from analysis.core.execution import cluster

    out, real = [], cluster._run_ray

    def spy(job, dataset, **kw):
        out.append((type(job).__name__, len(dataset)))
        return real(job, dataset, **kw)

    monkeypatch.setattr(cluster, "_run_ray", spy)
    return out


def _importance_json(done):
    result, marks = done
    return {"json": result.to_json(), "intact": result.intact, "spearman": result.spearman,
            "raw": result.gradient_raw.tolist(), "aspect": marks.aspect, "sep": marks.sep}


def test_head_importance_page_job_on_the_cluster(cluster_env, sent, tmp_path):
    from importance_util import tiny_labelled
    from ui.importance import compute as C

    loaded, ev = tiny_labelled(tmp_path)
    here = _importance_json(C._work(loaded, ev, "mask", None)(lambda f, t: None))
    assert here["json"]["metric"] == "accuracy" and len(here["json"]["heads"]) == 2

    page = C._study(("cluster-test", str(tmp_path)), loaded, ev, "mask", None)
    # the ablations and the pruning masks both went to the cluster, on every example
    assert sent == [("AblationJob", ev.n_examples)] * 2
    same_json(_importance_json(page), here)


def test_faithfulness_page_job_on_the_cluster_and_a_model_the_workers_cannot_load(
        cluster_env, sent, tmp_path, tmp_path_factory):
    from analysis.attribution import faithfulness, load_for_attribution
    from analysis.attribution.faithfulness import FaithfulnessJob, examples_dataset
    from analysis.core.models import checkpoint_stamp
    from attribution_models import tiny_classifier, tiny_classifier_dir
    from ui.attribution import blocks as B
    from analysis.core.execution import cluster
    from analysis.core.execution.placements import placement
    from analysis.core.execution.work import Corpus
    from ui.server.settings import settings

    tiny = tiny_classifier(tmp_path_factory)
    local = faithfulness(tiny, TEXTS, None, removal="mask", max_tokens=64).to_json()
    page = B._faithfulness(tiny.spec, checkpoint_stamp(tiny.spec), "fp", len(TEXTS), "mask",
                           64, tiny, TEXTS, [None] * len(TEXTS))
    assert sent == [("Capped", len(TEXTS))]
    assert page.n_examples == 2  # the blank text is skipped, as in process
    same_json(page.to_json(), local)

    # a folder the server loaded, gone since: the workers cannot load it, so it runs here
    folder = tmp_path / "gone"
    shutil.copytree(tiny_classifier_dir(tmp_path_factory), folder)
    gone = load_for_attribution(str(folder))
    shutil.rmtree(folder)
    out = B._faithfulness(gone.spec, "gone", "fp", len(TEXTS), "mask", 64, gone, TEXTS,
                          [None] * len(TEXTS))
    assert len(sent) == 2  # tried on the cluster once...
    assert out.model == gone.name  # ...then computed here, on the same weights as ``tiny``
    unnamed = {"model": None, "reading": None}
    same_json({**out.to_json(), **unnamed}, {**local, **unnamed})
    assert ("auto", gone.spec) in cluster._UNLOADABLE
    again = Corpus(FaithfulnessJob(gone.spec), examples_dataset(TEXTS))
    assert cluster.workers_may_load(again, settings().ray_address) is False
    where = placement(settings().ray_address)
    assert where.refuses(again) and not where.cluster(again)  # ...then queued here from the start
    ok = Corpus(FaithfulnessJob(tiny.spec), examples_dataset(TEXTS))
    assert not where.refuses(ok) and where.cluster(ok)


def test_search_page_index_on_the_cluster(cluster_env, sent, tmp_path, monkeypatch,
                                          tiny_model_dir):
    """The Search page's index (the command's one description, issue 44) sends its vectors to
    the cluster with the page's token cap, and the folder written here holds the index built
    in this process."""
    from dataclasses import replace

    import datasets
    import numpy as np

    from analysis.core.models import load_model
    from analysis.search import build_index
    from ui.search import blocks as SB

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    loaded = replace(load_model(str(tiny_model_dir("bert"))), max_length=12)
    ds = datasets.Dataset.from_dict({"text": [
        "The soup was cold, and the waiter never came back to our table that night.",
        "Lovely bread.", "Is it open?"]})
    index = SB.index_for(loaded, "text", ds)
    assert sent == [("Capped", 3)]
    here = build_index(loaded, ds, tmp_path / "here")
    assert index.meta == here.meta and index.tokens == here.tokens
    # the same vectors to float16's step: the cluster's worker runs torch with its own thread
    # count (a load-aware number, analysis.core.execution.threads), so float32 sums may run in
    # another order and an element round to the neighbouring float16
    for got, want in ((index.layers, here.layers), (index.heads, here.heads)):
        assert got.shape == want.shape and got.dtype == want.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=2e-3, atol=1e-3)


def test_features_page_job_on_the_cluster(cluster_env, sent, tmp_path, monkeypatch,
                                          tiny_model_dir):
    """The Features page's job sends the activations of its corpus (and of the treebank
    sample read for the alignment) to the cluster and trains the dictionary here: the
    in-process dictionary and numbers."""
    import datasets
    import numpy as np

    from analysis.features.corpus import feature_corpus
    from analysis.features.data import corpus_of, load_models
    from analysis.features.study import Inputs, Models, run
    from analysis.features.train import TrainSettings
    from ui.features import compute as C
    from ui.features import state as S

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    spec = str(tiny_model_dir("bert"))
    ds = datasets.Dataset.from_dict({"text": [f"Review {i}: the {w} was {a}." for i, (w, a) in
                                              enumerate(zip(["soup", "staff", "view"] * 6,
                                                            ["cold", "kind", "grand"] * 6))]})
    view = S.View(1, "corpus", 64, 4, 10, 0, False, "fp")
    page = C.compute(spec, view, ("cluster-test",), False, dataset=ds)
    tree = corpus_of("treebank", None, 0)
    assert sent == [("ActivationsJob", 18), ("ActivationsJob", len(tree))]
    loaded = load_models(spec)[0]
    here = run(Inputs(feature_corpus(ds, page.corpus["name"], None, 0), 1,
                      TrainSettings(m=64, k=4, epochs=10, seed=0), annotate=(tree,)),
               Models(loaded))
    np.testing.assert_allclose(page.live.acts.x[1], here.live.acts.x[1], atol=1e-5, rtol=0)
    np.testing.assert_allclose(page.live.sae.W_dec, here.live.sae.W_dec, atol=1e-4, rtol=0)
    assert page.corpus == here.corpus
    for key in ("fve", "nmse", "l0", "dead", "agreement"):
        assert abs(page.quality[key] - here.quality[key]) <= 1e-4
