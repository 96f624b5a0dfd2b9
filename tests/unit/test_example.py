"""analysis/core/example.py (core): where the example checkpoint lives, its recipe, when it counts
as
built, and the one missing-example line; no model is built here (tests/test_aspects_example.py
builds a tiny one)."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.core import example


def test_cache_root_and_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "c"))
    assert example.cache_root() == tmp_path / "c"
    assert example.example_path() == tmp_path / "c" / "example-absa"
    monkeypatch.setenv("DASHBOARD_CACHE", "  ")
    assert example.cache_root() == Path.home() / ".cache" / "attention-dashboard"


def test_the_recipe_as_a_dict():
    d = example.recipe_dict()
    assert d == {"task": "nli_m", "pair_order": "review-aux", "epochs": 10, "lr": 1e-4,
                 "batch_size": 16, "max_length": 64, "heldout": 0.15, "seed": 0,
                 "trained_layers": None, "base": "default", "data": "bundled sample",
                 "version": 3}
    assert example.train_options() == {"lr": 1e-4, "batch_size": 16, "max_length": 64,
                                       "trained_layers": None}
    # issue 22's recipe trained the top 2 layers only (the bench's baseline, side by side)
    assert example.recipe_dict(example.PREVIOUS_RECIPE) == {**d, "trained_layers": 2}


def test_a_cached_example_of_an_older_recipe_is_rebuilt(tmp_path):
    """The frozen examples of issue 22 (and the unversioned whole-model ones before it) had no
    recipe version: their cards no longer match, so a first start rebuilds them."""
    folder = tmp_path / "ex"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    old = {k: v for k, v in example.recipe_dict().items() if k != "version"}
    for recipe in ({**old, "trained_layers": 2}, old):
        (folder / example.CARD_NAME).write_text(json.dumps({"example_recipe": recipe}))
        assert not example.example_ready(folder)
    (folder / example.CARD_NAME).write_text(json.dumps({"example_recipe":
                                                        example.recipe_dict()}))
    assert example.example_ready(folder)


def test_machine_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert example.machine_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    import os

    assert example.machine_threads() == len(os.sched_getaffinity(0))


def test_ready_only_with_this_recipe_and_a_config(tmp_path):
    folder = tmp_path / "ex"
    folder.mkdir()
    assert not example.example_ready(folder)
    card = folder / example.CARD_NAME
    card.write_text(json.dumps({"example_recipe": example.recipe_dict()}))
    assert not example.example_ready(folder)  # no config.json yet
    (folder / "config.json").write_text("{}")
    assert example.example_ready(folder)
    card.write_text(json.dumps({"example_recipe": {**example.recipe_dict(), "seed": 1}}))
    assert not example.example_ready(folder)


def test_the_core_imports_no_study():
    import analysis.core.models
    import ast

    for module in (example, analysis.core.models):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        assert not [n for n in names if n.split(".")[:2][-1] in
                    ("aspects", "attention", "noop", "drift", "syntax", "report")], names
    assert example.missing_message().startswith(
        f"The example checkpoint is not built yet: run `{example.BUILD_COMMAND}` once")
