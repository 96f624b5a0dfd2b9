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
