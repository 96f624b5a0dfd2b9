"""The example checkpoint (built here on a tiny BERT with 2 steps, in a temporary cache), the
model spec "example", the missing-example message, the .zip round trip of a checkpoint, the
background build of ui/common/example.py and the ``aspects example`` command."""

from __future__ import annotations

import io
import json
import re
import tempfile
import zipfile
from pathlib import Path

import pytest

from analysis.core import example
from analysis.absa import example as example_build
from analysis.absa.checkpoints import CARD_NAME
from analysis.core.errors import InputError
from analysis.core.models import ModelLoadError


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


@pytest.fixture(scope="module")
def built(tiny, tmp_path_factory):
    """A stand-in example: the recipe on a tiny BERT, 2 steps, with the progress it reported."""
    said = []
    out = example_build.build_example(tmp_path_factory.mktemp("ex") / "example-absa",
                          progress=lambda f, t: said.append((f, t)), loaded=tiny, max_steps=2)
    return out, said


def test_paths_follow_the_cache_variable(cache, monkeypatch):
    assert example.example_path() == cache / "example-absa"
    monkeypatch.delenv("DASHBOARD_CACHE")
    assert example.example_path() == Path.home() / ".cache" / "attention-dashboard" / "example-absa"


def test_missing_example_is_one_clear_message(cache):
    from analysis.core.models import checkpoint_stamp, load_model

    assert not example.example_ready()
    with pytest.raises(ModelLoadError) as err:
        load_model("example")
    assert str(err.value) == example.missing_message() == (
        "The example checkpoint is not built yet: run `python -m analysis aspects example` "
        "once, about 2 minutes on a free CPU core (measured), longer on a busy machine; or "
        "start the dashboard and let it build it.")
    assert str(cache) not in str(err.value)
    assert checkpoint_stamp("example") == ""
    with pytest.raises(ModelLoadError, match="not built yet"):
        example_build.load_example()


def test_build_card_progress_and_the_example_spec(built, tiny, cache):
    import shutil

    import torch

    from analysis.core.models import EXAMPLE_NAME, checkpoint_stamp, load_model

    out, said = built
    card = json.loads((out / CARD_NAME).read_text())
    train, test = example_build.split_sample()
    assert (len(train), len(test)) == (189, 33)  # 15% of the 222 sentences held out
    assert card["example_recipe"] == example.recipe_dict() == {
        "task": example.RECIPE.task, "pair_order": example.RECIPE.pair_order,
        "epochs": example.RECIPE.epochs,
        "lr": example.RECIPE.lr, "batch_size": example.RECIPE.batch_size,
        "max_length": example.RECIPE.max_length, "heldout": example.RECIPE.heldout,
        "seed": example.RECIPE.seed,
        "trained_layers": example.RECIPE.trained_layers, "base": "default",
        "data": "bundled sample", "version": example.RECIPE_VERSION}
    # issue 29: every layer trained, and the card (and the model's config) say so
    assert example.RECIPE.trained_layers is None
    assert card["trained"] == {"frozen_layers": 0, "n_layers": tiny.n_layers,
                               "embeddings_trained": True, "word_embeddings_trained": True}
    assert "frozen_layers" not in card
    assert (card["task"], card["pair_order"], card["lr"], card["max_length"], card["seed"]) == (
        example.RECIPE.task, example.RECIPE.pair_order, example.RECIPE.lr,
        example.RECIPE.max_length, example.RECIPE.seed)
    assert card["heldout_ids"] == list(test["id"]) and card["base_model"] == tiny.spec
    assert card["n_train_pairs"] == 5 * 189 and card["data"] == "bundled sample"
    assert set(card["metrics"]) >= {"aspect_f1", "acc_4way", "acc_3way", "acc_binary"}
    assert card["metrics"]["n_pairs"] == 5 * 33
    # progress: loading, two steps, the held-out evaluation, saved
    assert said[0] == (0.0, "loading the base model")
    assert said[1] == (pytest.approx(0.95 / 2), f"epoch 1/{example.RECIPE.epochs:g}, step 1/2")
    assert said[2] == (pytest.approx(0.95), f"epoch 1/{example.RECIPE.epochs:g}, step 2/2")
    assert said[3] == (pytest.approx(0.95), "evaluating on the held-out sentences...")
    assert said[-1] == (1.0, "saved")
    assert [f for f, _ in said] == sorted(f for f, _ in said)
    # the cache's copy: ready, loadable by name, stamped, its classifier kept by load_example
    shutil.copytree(out, example.example_path())
    assert example.example_ready()
    lm = load_model("example")
    assert (lm.spec, lm.name, lm.n_layers, lm.n_heads) == ("example", EXAMPLE_NAME, 2, 4)
    assert checkpoint_stamp("example") != ""
    clf, card2 = example_build.load_example()
    assert clf.spec == "example" and card2 == card
    assert clf.model.config.num_labels == 5
    saved = clf.model.base_model.state_dict()
    for k, v in lm.model.state_dict().items():
        assert torch.equal(v, saved[k]), k


def test_a_damaged_example_is_said_without_its_folder(built, cache):
    # a demo shows this line: it must not name the server's folder
    import shutil

    out, _ = built
    folder = Path(shutil.copytree(out, example.example_path()))
    card = json.loads((folder / CARD_NAME).read_text())
    (folder / CARD_NAME).write_text(json.dumps({**card, "task": "bogus"}))
    with pytest.raises(InputError) as err:
        example_build.load_example()
    assert str(err.value) == ("The example checkpoint is damaged: the card names no known task "
                              "('bogus'). Build it again.")


def test_an_older_recipe_counts_as_missing(built, cache):
    import shutil

    shutil.copytree(built[0], example.example_path())
    card = json.loads((example.example_path() / CARD_NAME).read_text())
    card["example_recipe"]["epochs"] = card["example_recipe"]["epochs"] + 1
    (example.example_path() / CARD_NAME).write_text(json.dumps(card))
    assert not example.example_ready()
    (example.example_path() / CARD_NAME).write_text("{not json")
    assert not example.example_ready()


def _build_and_copy_meanwhile(tiny, out: Path, source: Path, when: str, steps: int = 6):
    """Build a stand-in example into ``out`` while "another process" (this test, at the
    moment ``when``) puts a ready checkpoint there; returns what the build said."""
    import shutil

    said = []

    def progress(fraction: float, text: str) -> None:
        said.append(text)
        if text.startswith(when) and not out.exists():
            shutil.copytree(source, out)

    assert example_build.build_example(out, progress, loaded=tiny, max_steps=steps) == out
    return said


def test_a_checkpoint_built_meanwhile_stops_the_build_and_is_kept(built, tiny, tmp_path,
                                                                  monkeypatch, cache):
    """Issue 49: the command line built the example into the cache while the server's build ran
    on; that build must stop (at its next step) and never overwrite the other one."""
    monkeypatch.setattr(example_build, "CHECK_S", 0.0)
    out = tmp_path / "example-absa"
    said = _build_and_copy_meanwhile(tiny, out, built[0], "epoch 1/10, step 2/")
    steps = [t for t in said if t.startswith("epoch")]
    assert steps == ["epoch 1/10, step 1/6", "epoch 1/10, step 2/6"]  # stopped at step 3
    assert said[-1] == "built meanwhile by another process: kept that one"
    assert (out / CARD_NAME).read_bytes() == (built[0] / CARD_NAME).read_bytes()
    assert example.example_ready(out) and not example.progress_path().exists()


def test_a_checkpoint_built_during_the_last_steps_is_not_replaced(built, tiny, tmp_path,
                                                                 monkeypatch, cache):
    """The check before the swap (under the target's lock): a checkpoint that appeared after
    the last check is kept, the build's own model dropped."""
    import os

    monkeypatch.setattr(example_build, "CHECK_S", 1e9)  # the steps never look
    out = tmp_path / "example-absa"
    said = _build_and_copy_meanwhile(tiny, out, built[0], "evaluating", steps=2)
    assert said[-1] == "built meanwhile by another process: kept that one"
    assert (out / CARD_NAME).read_bytes() == (built[0] / CARD_NAME).read_bytes()
    assert sorted(os.listdir(tmp_path)) == [".example-absa.lock", "example-absa"]  # no temp


def test_the_running_build_records_its_progress_for_other_processes(tiny, cache):
    """The cache's example: every other process (a server, a page's "not built yet") reads the
    running build's progress and time left from its record; it goes when the build ends."""
    seen = []

    def progress(fraction: float, text: str) -> None:
        seen.append(example.build_progress())

    example_build.build_example(None, progress, loaded=tiny, max_steps=2, threads=1)
    import os

    assert seen[1]["pid"] == os.getpid() and seen[1]["threads"] == 1
    assert seen[1]["text"] == "epoch 1/10, step 1/2"
    assert example.progress_path().parent == cache and not example.progress_path().exists()
    assert example.example_ready()


def test_a_foreign_folder_is_refused_before_training(tiny, tmp_path, monkeypatch):
    from analysis.absa import pipeline

    monkeypatch.setattr(pipeline, "fine_tune", lambda *a, **k: pytest.fail("trained"))
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(InputError, match="is not an ABSA checkpoint"):
        example_build.build_example(tmp_path, loaded=tiny)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


# ---------------------------------------------------------------------------------------------
# The checkpoint as a .zip


def _zip(members: dict[str, bytes], method=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _temp_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("absa-*")}


@pytest.fixture
def own_tempdir(tmp_path, monkeypatch):
    """A temporary-files folder of this test's own (``tempfile.tempdir``), so that the folders
    counted are this test's: another test process or a server on the machine may be unpacking
    an upload into the shared one at the same moment."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_zip_round_trip_gives_equal_weights(built, own_tempdir):
    import torch

    from analysis.absa.checkpoints import load_checkpoint
    from analysis.absa.pipeline import checkpoint_zip, load_checkpoint_zip

    before = _temp_folders()
    lm, card = load_checkpoint(built[0])
    data = checkpoint_zip(lm.model, lm.tokenizer, card)
    names = sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())
    assert {"absa_card.json", "config.json", "model.safetensors", "tokenizer.json"} <= set(names)
    assert not any(n.endswith((".bin", ".pt", ".pkl")) for n in names)
    back, card_back = load_checkpoint_zip(data, name="uploaded my.zip")
    assert card_back == card and back.spec == back.name == "uploaded my.zip"
    a, b = lm.model.state_dict(), back.model.state_dict()
    # the .zip holds the weights in half precision (issue 24: small enough to upload back)
    assert a.keys() == b.keys() and all(
        torch.equal(a[k].half().float() if a[k].is_floating_point() else a[k], b[k]) for k in a)
    assert back.tokenizer.get_vocab() == lm.tokenizer.get_vocab()
    # a zip of the folder itself (one top folder) loads too
    folder_zip = _zip({f"ckpt/{p.name}": p.read_bytes() for p in built[0].iterdir()})
    assert load_checkpoint_zip(folder_zip)[1] == card
    assert _temp_folders() == before  # the private temporary folders are gone


def test_bad_zips_are_one_line_each(built, own_tempdir):
    from analysis.absa.pipeline import load_checkpoint_zip

    files = {p.name: p.read_bytes() for p in built[0].iterdir()}
    before = _temp_folders()
    cases = [
        (b"not a zip", "x.zip is not a .zip file."),
        (_zip({"pytorch_model.bin": b"pickle", "config.json": files["config.json"],
               CARD_NAME: files[CARD_NAME]}),
         "x.zip is not a checkpoint of this dashboard: model.safetensors missing (weights must "
         "be safetensors)."),
        (_zip({**files, "../evil.txt": b"x"}),
         "The .zip holds a path outside its folder; it is not a checkpoint of this dashboard."),
        (_zip({**files, CARD_NAME: b'{"task": "nope"}'}),
         "x.zip: the checkpoint: the card names no known task ('nope')."),
    ]
    for data, message in cases:
        with pytest.raises(InputError) as err:
            load_checkpoint_zip(data, name="x.zip")
        assert str(err.value) == message
    with pytest.raises(InputError, match=r"^The \.zip is \d\.\d MB; the limit is 1\.0 MB\.$"):
        load_checkpoint_zip(_zip(files), name="x.zip", max_bytes=1_000_000)
    # a small .zip that unpacks to more than the cap (a zip bomb in miniature)
    bomb = _zip({**files, "vocab.txt": b"a" * 20_000_000}, zipfile.ZIP_DEFLATED)
    assert len(bomb) < 6_000_000
    with pytest.raises(InputError) as err:
        load_checkpoint_zip(bomb, name="x.zip", max_bytes=10_000_000)
    assert re.fullmatch(r"The checkpoint in the \.zip is 2\d MB unpacked; the limit is 10 MB\.",
                        str(err.value))
    assert _temp_folders() == before


# ---------------------------------------------------------------------------------------------
# The background build (ui/common/example.py) and the command


def test_background_build_reports_progress_then_ready(cache, built, monkeypatch, tmp_path):
    import ui.common.example as background

    monkeypatch.setitem(background._BUILD, "thread", None)
    monkeypatch.setitem(background._BUILD, "error", None)
    status = background.example_status()
    assert not status.ready and not status.building and status.error is None
    assert status.message == "The example checkpoint is not built yet."  # the command: expander

    import time

    from tests import childwork

    go = tmp_path / "go"  # the stand-in runs in the build's own process: told through files
    monkeypatch.setenv("CHILDWORK_GO", str(go))
    monkeypatch.setenv("CHILDWORK_BUILT", str(built[0]))
    monkeypatch.setattr(example_build, "build_example", childwork.example_build_waiting)
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "1")
    assert background.start_build()
    deadline = time.monotonic() + 60
    while background._BUILD["fraction"] != 0.4 and time.monotonic() < deadline:
        time.sleep(0.05)
    first = background._BUILD["thread"]
    # one build per process
    assert background.start_build() and background._BUILD["thread"] is first
    status = background.example_status()
    assert (status.ready, status.building, status.fraction) == (False, True, 0.4)
    assert status.text == "Building the example checkpoint: epoch 2/8, step 38/96"
    # the stand-in writes no record: the measured cost of the part left (60% of 142 CPU-s)
    assert status.message == ("Building the example checkpoint: epoch 2/8, step 38/96: about "
                              "1 minute left on a free CPU core (measured), longer on a busy "
                              "machine. The page opens on it by itself when it is ready.")
    # the queue's line for a job behind it says the same number
    from ui.common.jobs import job_queue

    ticket = next(t for t in job_queue()._running if t.key == background.EXAMPLE_BUILD_JOB)
    assert job_queue().left_s(ticket) == pytest.approx(0.6 * example.BUILD_CPU_S, rel=0.01)
    go.touch()
    first.join(30)
    assert background.example_status().ready and not background.start_build()


def test_the_server_waits_for_a_build_the_command_line_runs(cache, monkeypatch):
    """Issue 49: a server that finds another process building the example (the README's
    command) starts no second build: its pages show that build's progress and estimate."""
    import subprocess
    import sys

    import ui.common.example as background

    monkeypatch.setitem(background._BUILD, "thread", None)
    monkeypatch.setitem(background._BUILD, "error", None)
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "1")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        example.write_progress(0.5, "epoch 6/10, step 300/600", 240.0, 1)
        record = json.loads(example.progress_path().read_text())
        example.progress_path().write_text(json.dumps({**record, "pid": other.pid}))
        assert background.start_build() and background._BUILD["thread"] is None
        status = background.example_status()
        assert (status.building, status.fraction) == (True, 0.5)
        assert status.message == (
            "Building the example checkpoint (by another process): epoch 6/10, step 300/600: "
            "about 4 minutes left, at the speed of its steps so far. The page opens on it by "
            "itself when it is ready.")
        assert example.missing_message().endswith("about 4 minutes left, at the speed of its "
                                                  "steps so far.")
    finally:
        other.kill()
        other.wait()
    assert example.build_progress() is None  # its process is gone: no build runs
    assert not background.example_status(start=False).building


def test_a_failed_background_build_is_one_line_and_not_retried(cache, monkeypatch):
    import ui.common.example as background

    monkeypatch.setitem(background._BUILD, "thread", None)
    monkeypatch.setitem(background._BUILD, "error", None)
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "1")

    from tests import childwork

    monkeypatch.setattr(example_build, "build_example", childwork.example_build_broken)
    assert background.start_build()
    background._BUILD["thread"].join(30)
    status = background.example_status()
    assert status.error == "No space left on device" and not status.building
    assert status.message == ("The example checkpoint could not be built: No space left on "
                              "device")
    assert not background.start_build()


def test_cli_builds_the_example(built, tiny, tmp_path, monkeypatch, capsys):
    from analysis.__main__ import main

    real = example_build.build_example
    monkeypatch.setattr(example_build, "build_example",
                        lambda out=None, progress=None, threads=None: real(
                            out, progress, loaded=tiny, max_steps=2, threads=threads))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert main(["aspects", "example", "--out", str(tmp_path / "ex")]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {tmp_path / 'ex'}" in printed and "aspect_f1" in printed
    # issue 49: the command says its threads and the one estimate before it starts
    assert printed.startswith("building the example checkpoint at 1 torch thread(s) (the "
                              "cores the machine leaves free): about 2 minutes on a free CPU "
                              "core (measured), longer on a busy machine\n")
    assert example.example_ready(tmp_path / "ex")
