"""Issue 34 item 2: a checkpoint whose weights do not match its config is refused in one line
by every loader (the library's load_model, the CLI, the upload .zip; the pages' folder and id
pickers load through load_model), instead of running with randomly initialised tensors; the
size check (config and safetensors header, before anything is allocated) runs in the shared
loader, its default cap set by the machine's memory."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from analysis.core.models import ModelLoadError, load_model, machine_param_cap
from attribution_models import tiny_classifier_dir
from builders import one_line


def copy_of(folder: Path, dest: Path) -> Path:
    shutil.copytree(folder, dest)
    return dest


def rewrite_weights(folder: Path, change) -> dict:
    tensors = load_file(folder / "model.safetensors")
    tensors = change(dict(tensors))
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    return tensors


def test_one_unrelated_tensor_is_refused_naming_what_is_missing(tiny_model_dir, tmp_path):
    bad = copy_of(tiny_model_dir("bert"), tmp_path / "bad")
    rewrite_weights(bad, lambda t: {"unrelated": torch.zeros(3)})
    with pytest.raises(ModelLoadError) as e:
        load_model(str(bad))
    line = one_line(e)
    assert "its weights do not match its config" in line and "random values" in line
    n = len(load_file(tiny_model_dir("bert") / "model.safetensors"))
    assert f"({n - 2:,} tensors the model needs are missing: embeddings." in line, line
    assert line.endswith("more), so it would run with random values; it is not loaded.")


def test_a_tensor_of_another_shape_is_refused(tiny_model_dir, tmp_path):
    bad = copy_of(tiny_model_dir("bert"), tmp_path / "bad")
    key = "encoder.layer.1.attention.self.query.weight"

    def shrink(t):
        t[key] = t[key][:-1].contiguous()
        return t
    rewrite_weights(bad, shrink)
    with pytest.raises(ModelLoadError, match=rf"1 tensors the model needs are of another "
                                             rf"shape: {key}\)") as e:
        load_model(str(bad))
    one_line(e)


def test_heads_missing_on_purpose_are_allowed_and_by_mistake_refused(tmp_path_factory,
                                                                      tmp_path, tiny_mlm_dir):
    from transformers import AutoModelForSequenceClassification as Cls

    assert load_model(tiny_mlm_dir).n_layers == 2  # an MLM checkpoint: no pooler, not read
    folder = copy_of(tiny_classifier_dir(tmp_path_factory), tmp_path / "cls")
    good = load_model(str(folder), model_class=Cls)
    assert good.model.classifier.weight.shape == (3, 32)
    rewrite_weights(folder, lambda t: {k: v for k, v in t.items() if "classifier" not in k})
    with pytest.raises(ModelLoadError, match=r"2 tensors the model needs are missing: "
                                             r"classifier.bias, classifier.weight\)") as e:
        load_model(str(folder), model_class=Cls)
    one_line(e)
    # a tool that puts a new head on a base encoder on purpose may say so
    fresh = load_model(str(folder), model_class=Cls, new_head=True)
    assert fresh.model.classifier.weight.shape == (3, 32)
    assert torch.equal(fresh.model.bert.encoder.layer[0].attention.self.query.weight,
                       good.model.bert.encoder.layer[0].attention.self.query.weight)


def test_the_size_check_runs_in_the_loader_before_allocating(tiny_model_dir, tmp_path,
                                                             monkeypatch):
    big = copy_of(tiny_model_dir("bert"), tmp_path / "big")
    config = json.loads((big / "config.json").read_text())
    config.update(hidden_size=4096, num_hidden_layers=96, intermediate_size=16384)
    (big / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match=r"its config describes a model of 19,[0-9.]+M "
                                             r"parameters; this server loads at most 2.0M") as e:
        load_model(str(big), max_params=2_000_000)
    one_line(e)
    # the default cap is the machine's memory: a sixteenth of it in parameters
    import os

    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert machine_param_cap() == max(50_000_000, memory // 16)
    monkeypatch.setattr("analysis.core.models.machine_param_cap", lambda: 1_000)
    with pytest.raises(ModelLoadError, match="at most 0.0M"):
        load_model(str(tiny_model_dir("bert")))


def test_the_cli_refuses_in_one_line(tiny_model_dir, tmp_path, capsys, monkeypatch):
    from analysis.cli import main

    bad = copy_of(tiny_model_dir("bert"), tmp_path / "bad")
    rewrite_weights(bad, lambda t: {"unrelated": torch.zeros(3)})
    capsys.readouterr()
    rc = main(["attention", "--model", str(bad), "--text", "the soup was cold",
               "--out", str(tmp_path / "a.npz")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "its weights do not match its config" in err[0], err
    assert not (tmp_path / "a.npz").exists()
    monkeypatch.setattr("analysis.core.models.machine_param_cap", lambda: 1_000)
    rc = main(["attention", "--model", str(tiny_model_dir("bert")), "--text", "the soup",
               "--out", str(tmp_path / "a.npz")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "parameters; this server loads at most" in err[0], err


def test_an_uploaded_zip_missing_its_classifier_is_refused(tmp_path_factory, tmp_path):
    from analysis.absa.checkpoints import CARD_NAME
    from analysis.absa.pipeline import load_checkpoint_zip
    from analysis.core.errors import InputError

    folder = copy_of(tiny_classifier_dir(tmp_path_factory), tmp_path / "cls")
    rewrite_weights(folder, lambda t: {k: v for k, v in t.items() if "classifier" not in k})
    config = json.loads((folder / "config.json").read_text())
    config.update(num_labels=5, id2label={str(i): f"l{i}" for i in range(5)},
                  label2id={f"l{i}": i for i in range(5)})
    (folder / "config.json").write_text(json.dumps(config))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in folder.iterdir():
            zf.write(f, f.name)
        zf.writestr(CARD_NAME, json.dumps({"task": "qa_m", "kind": "absa-sentence-pair"}))
    with pytest.raises(InputError, match=r"^uploaded c.zip: the checkpoint: its weights do not "
                                         r"match its config \(2 tensors") as e:
        load_checkpoint_zip(buf.getvalue(), name="uploaded c.zip", max_params=10**7)
    one_line(e)


def test_the_sidebars_folder_is_refused_on_the_page(tiny_model_dir, tmp_path, monkeypatch):
    """The pages load the sidebar's folder or id through the same loader: one error line, and
    no page runs on the random model."""
    from streamlit.testing.v1 import AppTest


    bad = copy_of(tiny_model_dir("bert"), tmp_path / "bad")
    rewrite_weights(bad, lambda t: {"unrelated": torch.zeros(3)})
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                           default_timeout=240)
    at.query_params.update({"src": "Local folder", "model": str(bad)})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(e.value for e in at.error) + " ".join(w.value for w in at.warning)
    assert "its weights do not match its config" in shown, shown
