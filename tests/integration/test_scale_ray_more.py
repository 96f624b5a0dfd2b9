"""The Ray Data path (analysis.core.execution.raydata) gives the in-process numbers for no-op
gradients,
attribution faithfulness and head importance (one small case each, in one local 2-CPU
cluster that the test starts on 127.0.0.1 and shuts down), and ``--ray`` on the importance
command writes the in-process JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

import builders

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -r "
                          "requirements-ray.txt to run the Ray path tests")

TEXTS = ["The soup was cold, sadly.", "   ", "Great food, friendly staff and a view!", "No.",
         "The waiter ignored us, then brought the wrong dish.", "Cheap, tasty and quick."]


@pytest.fixture(scope="module")
def cluster():
    with builders.local_ray_cluster():
        yield


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), atol=tol, rtol=0,
                               equal_nan=True)


def leaves(obj):
    if isinstance(obj, dict):
        return [x for k in sorted(obj) for x in leaves(obj[k])]
    if isinstance(obj, (list, tuple)):
        return [x for v in obj for x in leaves(v)]
    return [obj]


def same_json(a, b):
    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        if isinstance(x, float) or isinstance(y, float):
            close(x if x is not None else np.nan, y if y is not None else np.nan)
        else:
            assert x == y


def test_noop_gradients_on_ray_equal_in_process(cluster, tiny_mlm_dir, shared_data):
    from analysis.core.corpus import read_corpus
    from analysis.noop import loss_head
    from analysis.noop.gradients import GradientsJob
    from analysis.core.execution.raydata import run_ray
    from analysis.core.execution.corpus import run_local

    ds = read_corpus(shared_data / "semeval2014" / "Restaurants_Train.xml", max_examples=9)
    job = GradientsJob(tiny_mlm_dir, batch_size=4, max_length=128)
    local = run_local(job, loss_head(tiny_mlm_dir), ds)
    seen = []
    remote = run_ray(job, ds, None, workers=2, rows_per_block=4,
                     progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (9, 9) and len(seen) == 3  # blocks of 4, 4 and 1 examples
    assert (remote.kind, remote.n_examples) == (local.kind, local.n_examples) == ("mlm", 9)
    assert sorted(remote.per_head) == sorted(local.per_head)
    for cat in local.per_head:
        close(remote.per_head[cat], local.per_head[cat])


def test_faithfulness_on_ray_equals_in_process(cluster, tmp_path_factory):
    from analysis.attribution.faithfulness import FaithfulnessJob, examples_dataset, faithfulness
    from analysis.core.execution.raydata import run_ray
    from attribution_models import tiny_classifier

    tiny = tiny_classifier(tmp_path_factory)
    methods = ("attention", "norm")
    local = faithfulness(tiny, TEXTS, None, methods, ks=(20, 50), seeds=2)
    remote = run_ray(FaithfulnessJob(tiny.spec, methods, (20, 50), "drop", 2),
                     examples_dataset(TEXTS), None, workers=2, rows_per_block=2)
    assert remote.n_examples == local.n_examples == 5 and remote.notes == local.notes
    # the random baseline is seeded per corpus row, so the workers draw the same rankings
    same_json(remote.to_json(), local.to_json())


def test_importance_cli_on_ray_writes_the_in_process_json(cluster, tmp_path):
    """``python -m analysis importance --ray auto`` (joining the test's cluster), with the
    pruning pass: the same JSON as in process (logits to float rounding)."""
    from analysis.cli import main
    from importance_util import LABELLED_CSV, classifier_folder

    clf = classifier_folder(tmp_path / "clf")
    data = tmp_path / "d.csv"
    data.write_text(LABELLED_CSV)
    common = ["importance", "--model", str(clf), "--data", str(data), "--method", "mask",
              "--prune"]
    assert main(common + ["--out", str(tmp_path / "local.json")]) == 0
    assert main(common + ["--ray", "auto", "--ray-workers", "2",
                          "--out", str(tmp_path / "ray.json")]) == 0
    local = json.loads((tmp_path / "local.json").read_text())
    remote = json.loads((tmp_path / "ray.json").read_text())
    assert local["metric"] == "accuracy" and len(local["heads"]) == 2
    assert len(local["pruning"]["by_importance"]) == 10
    same_json(remote, local)


def test_features_activations_on_ray_equal_in_process(cluster, tiny_model_dir):
    from analysis.core.execution.raydata import run_ray
    from analysis.features.activations import collect, encode_corpus
    from analysis.features.data import corpus_of, load_models
    from analysis.features.job import ActivationsJob, inputs_dataset

    loaded = load_models(str(tiny_model_dir("bert")))[0]
    corpus = corpus_of("treebank", None, max_examples=18)
    local = collect(loaded, corpus, [1, 2])
    _, kept = encode_corpus(loaded.tokenizer, corpus, loaded.max_length)
    seen = []
    remote = run_ray(ActivationsJob(loaded.spec, (1, 2), loaded.max_length, 4),
                     inputs_dataset(corpus, kept), None, workers=2, rows_per_block=5,
                     progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (18, 18) and len(seen) == 4  # blocks of 5, 5, 5 and 3 inputs
    for layer in (1, 2):
        assert [a.shape for a in remote[layer]] == \
            [(int((local.tokens.example == i).sum()), 32) for i in kept]
        close(np.concatenate(remote[layer]), local.x[layer], tol=1e-5)


def test_features_cli_on_ray_trains_the_in_process_dictionary(cluster, tiny_model_dir,
                                                               tmp_path, monkeypatch):
    """``python -m analysis features train --ray auto`` (joining the test's cluster): the
    activations over shards there (this process runs no forward pass of the corpus), the
    dictionary trained here: the in-process dictionary and quality numbers (to float
    rounding)."""
    from analysis.cli import main
    from analysis.features import activations, job
    from analysis.features.sae import SAE, TENSORS

    here_passes = []

    def counted(*a, **kw):
        here_passes.append(1)
        return activations.hidden_rows(*a, **kw)

    monkeypatch.setattr(job, "hidden_rows", counted)  # this process only, not the workers

    common = ["features", "train", "--model", str(tiny_model_dir("bert")), "--data",
              "treebank", "--max-examples", "24", "--layer", "2", "--m", "64", "--k", "4",
              "--epochs", "3", "--no-cache"]
    assert main(common + ["--out", str(tmp_path / "here"), "--result",
                          str(tmp_path / "here.json")]) == 0
    assert len(here_passes) == 1
    assert main(common + ["--ray", "auto", "--ray-workers", "2", "--out",
                          str(tmp_path / "ray"), "--result", str(tmp_path / "ray.json")]) == 0
    assert len(here_passes) == 1  # the corpus's forward passes ran on the cluster
    here, there = SAE.load(tmp_path / "here"), SAE.load(tmp_path / "ray")
    for name in TENSORS:
        close(getattr(there, name), getattr(here, name), tol=1e-4)
    local = json.loads((tmp_path / "here.json").read_text())
    remote = json.loads((tmp_path / "ray.json").read_text())
    assert remote["corpus"] == local["corpus"] and remote["corpus"]["inputs"] == 24
    for key in ("fve", "nmse", "l0", "dead", "agreement"):
        close(remote["quality"][key], local["quality"][key], tol=1e-4)
