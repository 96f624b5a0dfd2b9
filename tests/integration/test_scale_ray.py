"""The Ray Data path (analysis.core.execution.raydata) gives the in-process numbers: no-op
statistics, drift and syntactic heads on small slices of the shared data, the commands run by
their study's placement (``noop --gradients``, ``search index``), on a local 2-CPU cluster that
the test starts on 127.0.0.1 and shuts down; a worker killed mid-job gives a clear message."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import builders

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -r "
                          "requirements-ray.txt to run the Ray path tests")



@pytest.fixture(scope="module")
def cluster():
    with builders.local_ray_cluster():
        yield


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), atol=tol, rtol=0,
                               equal_nan=True)


def test_noop_on_ray_equals_in_process(cluster, tiny, shared_data):
    from analysis.core.corpus import read_corpus
    from analysis.noop import corpus_stats
    from analysis.noop.corpus import NoopJob
    from analysis.core.execution.raydata import run_ray

    ds = read_corpus(shared_data / "semeval2014" / "Restaurants_Train.xml", max_examples=14)
    local = corpus_stats(tiny, ds, batch_size=4)
    seen = []
    remote = run_ray(NoopJob(tiny.spec, 4), ds, None, workers=2, rows_per_block=4,
                     progress=lambda done, total: seen.append((done, total)))
    assert [t for _, t in seen] == [14] * 4 and seen[-1] == (14, 14)  # 4 shards: 4,4,4,2
    # no Ray Data prefetcher thread is left to call into the worker after a ray.shutdown()
    # (Ray then ends the process: what crashed a test process, and a CLI run with --ray)
    import threading

    assert [t.name for t in threading.enumerate() if t.name == "Prefetcher"] == []
    assert (remote.n_examples, remote.n_tokens, remote.n_pairs, remote.notes) == (
        local.n_examples, local.n_tokens, local.n_pairs, local.notes)
    assert remote.n_examples == 14
    close(remote.uniform_entropy, local.uniform_entropy)
    for name in local.metrics:
        close(remote.metrics[name], local.metrics[name])


def _after_model(src: Path, folder: Path) -> str:
    """A copy of the tiny model with layer 2's query weights perturbed."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(src)
    with torch.no_grad():
        q = model.encoder.layer[1].attention.self.query.weight
        q.add_(torch.randn(q.shape, generator=torch.Generator().manual_seed(1)))
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(src).save_pretrained(folder)
    return str(folder)


def test_drift_on_ray_equals_in_process(cluster, tiny_model_dir, tmp_path, shared_data):
    from analysis.core.corpus import read_corpus
    from analysis.drift import compare_models, load_pair
    from analysis.drift.job import DriftJob, has_labels
    from analysis.core.encoding import encode_dataset
    from analysis.core.execution.raydata import run_ray

    src = tiny_model_dir("bert")
    after_dir = _after_model(src, tmp_path / "after")
    ds = read_corpus(shared_data / "semeval2014" / "Restaurants_Train.xml", max_examples=10)
    before, after = load_pair(str(src), after_dir)
    local = compare_models(before, after, encode_dataset(before.tokenizer, ds,
                                                         before.max_length), batch_size=4)
    remote = run_ray(DriftJob(str(src), after_dir, 4, has_labels(ds)), ds, None, workers=2,
                     rows_per_block=3)
    assert remote.rows == local.rows == list(range(10)) and remote.texts == local.texts
    for name in ("cosine_examples", "rsa_examples", "cka", "features_before",
                 "features_after"):
        close(getattr(remote, name), getattr(local, name))
    close(remote.cosine[0], 1.0)  # layer 1 untouched
    assert remote.cosine[1].min() < 0.999
    a, b = remote.to_json(), local.to_json()
    assert a["summary"] == b["summary"] and a["patterns"] == b["patterns"]


def test_syntax_cli_on_ray_writes_the_in_process_json(cluster, tiny_model_dir, shared_data,
                                                       tmp_path, capsys):
    """``python -m analysis syntax --ray auto`` (joining the test's cluster) writes the same
    bytes as the in-process command: head accuracies are counts, so they merge exactly."""
    import json

    from analysis.cli import main

    src = shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
    common = ["syntax", "--data", str(src), "--model", str(tiny_model_dir("bert")),
              "--max-examples", "12", "--batch-size", "4"]
    assert main(common + ["--out", str(tmp_path / "local.json")]) == 0
    assert main(common + ["--ray", "auto", "--ray-workers", "2",
                          "--out", str(tmp_path / "ray.json")]) == 0
    local = (tmp_path / "local.json").read_bytes()
    assert (tmp_path / "ray.json").read_bytes() == local
    out = json.loads(local)
    assert out["n_sentences"] == 12 and out["relations"]["all"]["n"] > 100
    assert "wrote" in capsys.readouterr().out


def test_search_index_cli_on_ray_writes_the_in_process_index(cluster, tiny_model_dir, tmp_path,
                                                             capsys):
    """``search index --ray auto --ray-workers 2`` (the study's one plan, on the placement of
    its options) writes the folder the in-process command writes: the same pieces and
    vectors (each piece's vectors come from its own sentence's forward)."""
    import json

    from analysis.cli import main

    data = tmp_path / "c.txt"
    data.write_text("The soup was cold.\n\nLovely bread, rude waiter.\nIs it open?\n",
                    encoding="utf-8")
    common = ["search", "index", "--data", str(data), "--model", str(tiny_model_dir("bert")),
              "--batch-size", "2"]
    assert main(common + ["--out", str(tmp_path / "here")]) == 0
    assert main(common + ["--ray", "auto", "--ray-workers", "2",
                          "--out", str(tmp_path / "ray")]) == 0
    for name in ("meta.json", "tokens.json"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()
    for name in ("layers.npy", "heads.npy"):
        close(np.load(tmp_path / "ray" / name), np.load(tmp_path / "here" / name), 1e-3)
    assert json.loads((tmp_path / "ray" / "tokens.json").read_text())["numbers"] == [0, 2, 3]
    assert "wrote" in capsys.readouterr().out


def test_noop_gradients_cli_on_ray_writes_the_in_process_json(cluster, tiny_mlm_dir, tmp_path):
    """``noop --gradients --ray auto --ray-workers 2``: the study's two corpus jobs (the
    statistics, then the gradients) both on the cluster, the in-process JSON to float
    rounding (the shards' batches are padded differently)."""
    import json

    from analysis.cli import main

    data = tmp_path / "c.txt"
    data.write_text("The soup was cold, sadly.\nIs it open?\tOnly on Sundays.\nLovely bread.\n"
                    "The waiter was rude but the wine was good.\n", encoding="utf-8")
    common = ["noop", "--gradients", "--data", str(data), "--model", tiny_mlm_dir,
              "--batch-size", "2"]
    assert main(common + ["--out", str(tmp_path / "here.json")]) == 0
    assert main(common + ["--ray", "auto", "--ray-workers", "2",
                          "--out", str(tmp_path / "ray.json")]) == 0
    here, ray_ = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("here", "ray"))
    assert list(ray_) == list(here) and "gradient_importance" in ray_
    for name, v in here["metrics"].items():
        close(ray_["metrics"][name], v)
    grads = here["gradient_importance"]
    assert ray_["gradient_importance"]["n_examples"] == grads["n_examples"] == 4
    for cat, v in grads["per_head"].items():
        close(ray_["gradient_importance"]["per_head"][cat], v, 1e-5)


def test_a_worker_killed_mid_job_gives_a_clear_message(cluster, tiny):
    import datasets

    from analysis.core.execution.raydata import WorkerLost, run_ray

    ds = datasets.Dataset.from_dict({"text": [f"Sentence number {i}." for i in range(8)]})
    with pytest.raises(WorkerLost, match="A Ray worker died mid-job"):
        run_ray(builders.CrashingNoopJob(tiny.spec), ds, None, workers=1, rows_per_block=2)


def test_a_model_the_workers_cannot_load_is_said_in_the_loaders_words(cluster, tmp_path):
    """The actors load the model when they start; one that cannot dies in its creation task,
    which is the loader's message (as the CLI prints it), not a lost worker."""
    import datasets

    from analysis.core.models import ModelLoadError
    from analysis.noop.corpus import NoopJob
    from analysis.core.execution.raydata import run_ray

    ds = datasets.Dataset.from_dict({"text": ["One sentence.", "Another one."]})
    gone = str(tmp_path / "no-such-model")
    with pytest.raises(ModelLoadError, match="no-such-model") as err:
        run_ray(NoopJob(gone, 4), ds, None, workers=1, rows_per_block=2)
    assert "died" not in str(err.value)
