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


def test_machine_threads_leave_the_busy_cores_alone(monkeypatch):
    """Issue 49: on a busy machine the build's threads wait for each other (109 minutes at the
    default 2 threads against 6.4 at 1, load 8-10): the cores the load leaves free, at least 1."""
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert example.machine_threads(load=9.0) == 3  # the operator's choice wins
    monkeypatch.delenv("OMP_NUM_THREADS")
    import os

    assert example.machine_threads(load=0.0) == len(os.sched_getaffinity(0))
    assert [example.machine_threads(load=x, cores=2) for x in (0.0, 0.4, 1.2, 8.5, 25.0)] == \
        [2, 2, 1, 1, 1]
    assert example.machine_threads(load=2.6, cores=8) == 5
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert example.machine_threads(cores=2) == 1


def test_one_estimate_in_every_message(tmp_path, monkeypatch):
    """Issue 49: "about two minutes on a 2-core CPU" in one message, "About 175 minutes left"
    in another. Now one number: the recipe's measured cost before a build runs, else the
    running build's own (any process's, read from its record), in every message."""
    import os
    import time

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path))
    assert example.build_progress() is None
    assert example.estimate_words() == ("about 2 minutes on a free CPU core (measured), longer "
                                        "on a busy machine")
    assert example.missing_message() == (
        "The example checkpoint is not built yet: run `python -m analysis aspects example` "
        "once, about 2 minutes on a free CPU core (measured), longer on a busy machine; or "
        "start the dashboard and let it build it.")
    # a build runs (this process stands in for it): its own speed, once a few steps are done
    example.write_progress(0.01, "epoch 1/10, step 6/600", None, 1)
    record = example.build_progress()
    assert (record["pid"], record["fraction"], record["threads"]) == (os.getpid(), 0.01, 1)
    assert example.estimate_words(record) == ("about 2 minutes left on a free CPU core "
                                              "(measured), longer on a busy machine")
    example.write_progress(0.3, "epoch 4/10, step 180/600", 175 * 60.0, 1)
    said = example.missing_message()
    assert said == ("The example checkpoint is being built (epoch 4/10, step 180/600): about "
                    "3 hours left, at the speed of its steps so far.")
    assert example.left_s(0.01, 5.0) is None  # too early to say
    # 25% done 30 s after the first step at 5%: 20% per 30 s, 75% left -> 112.5 s
    assert example.left_s(0.25, 30.0, since=0.05) == 112.5
    # a record whose process is gone, or that was not rewritten for long, is no build
    record = json.loads(example.progress_path().read_text())
    example.progress_path().write_text(json.dumps({**record, "at": time.time() - 3600}))
    assert example.build_progress() is None
    example.progress_path().write_text(json.dumps({**record, "pid": 2 ** 22 + 12345}))
    assert example.build_progress() is None
    example.progress_path().write_text(json.dumps(record))
    example.clear_progress()  # this process's record: gone
    assert not example.progress_path().exists()


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
