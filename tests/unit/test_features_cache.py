"""The features study's disk cache of trained dictionaries (analysis.features.cache): a second
request with the same weights, corpus, layer and settings reads the SAE (and the crosscoder)
instead of training it -- the trainer is counted, not timed --, with equal tensors and numbers;
another seed, layer or corpus trains again; the folder holds what ``features train`` writes;
the CLI reads the same cache; the cache is bounded by bytes, least recently used first."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from analysis.features import cache as dcache
from analysis.features import diff as diff_module
from analysis.features import study as study_module
from analysis.features.data import corpus_of, load_models
from analysis.features.sae import SAE, TENSORS
from analysis.features.study import Inputs, Models, cache_name, run
from analysis.features.train import TrainSettings
from builders import run_cli

SETTINGS = TrainSettings(m=64, k=4, epochs=2, batch_size=64, seed=0)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Every test on a cache of its own (never the user's ~/.cache)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("DASHBOARD_CACHE", str(folder))
    return folder


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return load_models(str(tiny_model_dir("bert")))[0]


@pytest.fixture
def trains(monkeypatch):
    """The number of dictionaries and crosscoders trained (the study's own trainer counted)."""
    count = {"sae": 0, "crosscoder": 0}
    sae_trainer, cc_trainer = study_module.train_sae, diff_module.train_crosscoder

    def sae(*a, **kw):
        count["sae"] += 1
        return sae_trainer(*a, **kw)

    def crosscoder(*a, **kw):
        count["crosscoder"] += 1
        return cc_trainer(*a, **kw)

    monkeypatch.setattr(study_module, "train_sae", sae)
    monkeypatch.setattr(diff_module, "train_crosscoder", crosscoder)
    return count


def inputs(corpus, layer=1, settings=SETTINGS, **kw) -> Inputs:
    return Inputs(corpus, layer, settings, dashboards=3, effects=0, cache=True, **kw)


def same_sae(a: SAE, b: SAE) -> None:
    for name in TENSORS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.k, a.layer, a.scale, a.activation) == (b.k, b.layer, b.scale, b.activation)


def test_a_second_request_reads_the_dictionary_instead_of_training(tiny, trains, cache_dir):
    corpus = corpus_of("treebank", None, max_examples=24)
    extra = (corpus_of("sample", None, max_examples=3),)  # read for the alignment only
    first = run(inputs(corpus, annotate=extra), Models(tiny))
    assert trains["sae"] == 1
    name = cache_name(inputs(corpus), tiny)
    folder = cache_dir / "features" / name
    assert sorted(p.name for p in folder.iterdir()) == ["card.json", "sae.safetensors"]
    card = json.loads((folder / "card.json").read_text())
    assert (card["layer"], card["k"], card["m"], card["d"]) == (1, 4, 64, 32)
    assert card["fve"] == pytest.approx(first.quality["fve"])
    assert card["corpus"] == "the bundled treebank sample" and card["seed"] == 0
    same_sae(SAE.load(folder), first.live.sae)  # what `features train` writes, read back
    # a new corpus object with the same content: the same key; nothing trained
    second = run(inputs(corpus_of("treebank", None, max_examples=24)), Models(tiny))
    assert trains["sae"] == 1
    same_sae(second.live.sae, first.live.sae)
    assert second.quality["fve"] == first.quality["fve"]
    assert second.features["freq"] == first.features["freq"]
    assert any("read from the disk cache" in n for n in second.notes)
    assert not any("disk cache" in n for n in first.notes)
    # another seed, layer or corpus, or no cache asked: trained again
    run(inputs(corpus, settings=TrainSettings(m=64, k=4, epochs=2, batch_size=64, seed=1)),
        Models(tiny))
    run(inputs(corpus, layer=2), Models(tiny))
    run(inputs(corpus_of("treebank", None, max_examples=23)), Models(tiny))
    assert trains["sae"] == 4
    run(Inputs(corpus, 1, SETTINGS, annotate=extra, dashboards=3, effects=0), Models(tiny))
    assert trains["sae"] == 5
    assert len(list((cache_dir / "features").iterdir())) == 4  # nothing kept without cache


def test_the_key_names_the_weights_not_the_folder(tiny, tiny_model_dir, tmp_path):
    import shutil

    corpus = corpus_of("treebank", None, max_examples=10)
    copy = shutil.copytree(tiny_model_dir("bert"), tmp_path / "copy")
    twin = load_models(str(copy))[0]
    assert cache_name(inputs(corpus), twin) == cache_name(inputs(corpus), tiny)
    other = load_models(str(tiny_model_dir("distilbert")))[0]
    assert cache_name(inputs(corpus), other) != cache_name(inputs(corpus), tiny)
    # the token cap is part of the key (a demo's cap cuts the inputs)
    from dataclasses import replace

    assert cache_name(inputs(corpus), replace(tiny, max_length=16)) != \
        cache_name(inputs(corpus), tiny)


def test_the_crosscoder_is_kept_too(tiny, trains):
    corpus = corpus_of("treebank", None, max_examples=24)
    first = run(inputs(corpus, compare=True), Models(tiny, base=tiny))
    second = run(inputs(corpus, compare=True), Models(tiny, base=tiny))
    assert trains == {"sae": 1, "crosscoder": 1}
    a, b = first.live.crosscoder, second.live.crosscoder
    for name in ("W_enc", "b_enc", "W_dec", "b_dec"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.theta, a.scales, a.k, a.layer) == (b.theta, b.scales, b.k, b.layer)
    assert second.crosscoder["classes"] == first.crosscoder["classes"]
    assert second.crosscoder["fve"] == first.crosscoder["fve"]


def test_the_cli_reads_the_pages_cache(tiny_model_dir, tmp_path, trains, cache_dir):
    model = str(tiny_model_dir("bert"))
    args = ["features", "train", "--model", model, "--data", "treebank", "--layer", "1",
            "--max-examples", "20", "--m", "64", "--k", "4", "--epochs", "2"]
    r = run_cli(*args, "--out", tmp_path / "a", env={"DASHBOARD_CACHE": str(cache_dir)})
    assert r.returncode == 0, r.stderr
    assert trains["sae"] == 1
    r = run_cli(*args, "--out", tmp_path / "b", env={"DASHBOARD_CACHE": str(cache_dir)})
    assert r.returncode == 0, r.stderr
    assert trains["sae"] == 1 and "read from the disk cache" in r.stdout
    same_sae(SAE.load(tmp_path / "a"), SAE.load(tmp_path / "b"))
    r = run_cli(*args, "--no-cache", "--out", tmp_path / "c",
                env={"DASHBOARD_CACHE": str(cache_dir)})
    assert r.returncode == 0, r.stderr
    assert trains["sae"] == 2
    same_sae(SAE.load(tmp_path / "a"), SAE.load(tmp_path / "c"))  # seeded: the same weights


def _entry(name: str, size: int, used: float):
    folder = dcache.folder(name)
    folder.mkdir(parents=True)
    (folder / "sae.safetensors").write_bytes(b"x" * size)
    (folder / "card.json").write_text("{}")
    os.utime(folder / "card.json", (used, used))
    return folder


def test_the_cache_is_bounded_by_bytes_least_recently_used_first():
    old, mid, new = (_entry(n, 1000, t) for n, t in (("old", 1e9), ("mid", 2e9), ("new", 3e9)))
    assert dcache.prune(max_bytes=10_000) == []
    gone = dcache.prune(max_bytes=2100)  # two entries fit (1002 bytes each)
    assert gone == [old] and mid.is_dir() and new.is_dir()
    # the folder just written stays, whatever its size, and counts first
    big = _entry("big", 5000, 4e9)
    assert dcache.prune(max_bytes=6100, spare=big) == [mid]
    assert big.is_dir() and new.is_dir()


def test_a_hit_counts_as_a_use_and_a_damaged_folder_trains_again(tiny, trains):
    corpus = corpus_of("treebank", None, max_examples=20)
    run(inputs(corpus), Models(tiny))
    folder = dcache.folder(cache_name(inputs(corpus), tiny))
    os.utime(folder / "card.json", (1e9, 1e9))
    assert dcache.load_sae(folder.name) is not None
    assert (folder / "card.json").stat().st_mtime > 1e9
    (folder / "sae.safetensors").write_bytes(b"not safetensors")
    run(inputs(corpus), Models(tiny))
    assert trains["sae"] == 2


def test_the_estimate_is_the_forward_passes_and_the_training_operations(tiny):
    from analysis.core import cost
    from analysis.core.errors import InputError
    from analysis.features import budget

    corpus = corpus_of("treebank", None, max_examples=20)
    lengths = cost.lengths_of(tiny.tokenizer, corpus.texts, corpus.pairs, tiny.max_length)
    held = [n for n, h in zip(lengths, corpus.heldout) if h]
    n_train = sum(lengths) - sum(held)
    shape = cost.shape_of(tiny)
    est = budget.estimate(tiny, inputs(corpus))
    forward = cost.seconds("forward", shape, lengths) + 3 * cost.seconds("forward", shape, held)
    assert est["forward"] == pytest.approx(forward)
    assert est["training"] == pytest.approx(budget.TRAIN_PER_FLOP * 12 * n_train * 2 * 32 * 64)
    assert (est["inputs"], est["tokens"]) == (20, sum(lengths))
    # a dictionary on disk is not trained again; the crosscoder trains two models' decoders
    assert budget.estimate(tiny, inputs(corpus), kept=True)["training"] == 0.0
    both = budget.estimate(tiny, inputs(corpus, compare=True), base=tiny)
    assert both["training"] == pytest.approx(3 * est["training"])
    assert both["forward"] == pytest.approx(est["forward"]
                                            + cost.seconds("forward", shape, lengths))
    assert budget.check(tiny, inputs(corpus), budget_s=None) == est
    with pytest.raises(InputError, match=r"^Training this dictionary would take .* \(20 inputs"):
        budget.check(tiny, inputs(corpus), budget_s=est["seconds"] / 4)


def test_the_diff_command_reads_the_studys_crosscoder(tiny, tiny_model_dir, tmp_path, trains,
                                                      cache_dir):
    """``features diff`` keys its crosscoder as the study (and so the page) does: the study's
    crosscoder of the same weights, corpus and settings is read, not trained again."""
    corpus = corpus_of("treebank", None, max_examples=20)
    settings = TrainSettings(m=64, k=4, epochs=2, seed=0)
    study = run(inputs(corpus, settings=settings, compare=True), Models(tiny, base=tiny))
    assert trains["crosscoder"] == 1
    model = str(tiny_model_dir("bert"))
    args = ["features", "diff", "--before", model, "--after", model, "--data", "treebank",
            "--layer", "1", "--max-examples", "20", "--m", "64", "--k", "4", "--epochs", "2"]
    env = {"DASHBOARD_CACHE": str(cache_dir)}
    r = run_cli(*args, "--out", tmp_path / "d.json", env=env)
    assert r.returncode == 0, r.stderr
    assert trains["crosscoder"] == 1
    summary = json.loads((tmp_path / "d.json").read_text())
    assert summary["classes"] == study.crosscoder["classes"]
    assert summary["fve"] == pytest.approx(study.crosscoder["fve"])
    r = run_cli(*args, "--no-cache", "--out", tmp_path / "e.json", env=env)
    assert r.returncode == 0, r.stderr
    assert trains["crosscoder"] == 2
