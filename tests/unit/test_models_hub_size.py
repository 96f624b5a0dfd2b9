"""Issue 34: a hub id is sized before its weights are downloaded. The config (fetched first, a
few KB) is counted; when the hub is reachable, the safetensors headers the hub declares are
counted too (huggingface_hub reads them by range requests), so a repository whose weights hold
more than the config says is refused before a byte of them is fetched."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import analysis.core.models as models
from analysis.core.models import ModelLoadError, check_size

CONFIG = {"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2,
          "num_attention_heads": 2, "intermediate_size": 64, "vocab_size": 100,
          "max_position_embeddings": 64, "type_vocab_size": 2}


@pytest.fixture
def snapshot(tmp_path, monkeypatch):
    """A hub id whose config.json alone is in the local cache (weights not downloaded)."""
    folder = tmp_path / "snapshots" / "abc"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(CONFIG))
    monkeypatch.setattr(models, "_local_folder", lambda source: folder)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return folder


def hub_says(monkeypatch, counts, reachable=True):
    calls = []

    def metadata(repo):
        calls.append(repo)
        if counts is None:
            raise OSError("no safetensors here")
        return SimpleNamespace(parameter_count=counts)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "get_safetensors_metadata", metadata)
    monkeypatch.setattr(models, "hub_reachable", lambda timeout=3.0: reachable)
    return calls


def test_the_hub_header_over_the_cap_is_refused_before_download(snapshot, monkeypatch):
    calls = hub_says(monkeypatch, {"F32": 3_000_000, "F16": 500_000})
    with pytest.raises(ModelLoadError) as e:
        check_size("org/big", 2_000_000, "org/big")
    assert calls == ["org/big"]
    assert str(e.value) == ("org/big: its weights on the hub hold 3.5M values; this server "
                            "loads at most 2.0M.")


def test_a_config_over_the_cap_is_refused_without_asking_the_hub(snapshot, monkeypatch):
    calls = hub_says(monkeypatch, {"F32": 10})
    config = dict(CONFIG, hidden_size=4096, num_hidden_layers=48, intermediate_size=16384)
    (snapshot / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match=r"its config describes a model of .* parameters; "
                                             r"this server loads at most 2.0M"):
        check_size("org/big", 2_000_000, "org/big")
    assert calls == []


def test_within_the_cap_offline_or_without_safetensors_it_loads(snapshot, monkeypatch):
    calls = hub_says(monkeypatch, {"F32": 1_000})
    check_size("org/small", 2_000_000, "org/small")  # header counted, within the cap
    assert calls == ["org/small"]
    calls = hub_says(monkeypatch, {"F32": 9_000_000}, reachable=False)
    check_size("org/small", 2_000_000, "org/small")  # offline: the config's count stands
    assert calls == []
    calls = hub_says(monkeypatch, None)
    check_size("org/small", 2_000_000, "org/small")  # no safetensors on the hub
    assert calls == ["org/small"]


def test_a_local_folder_never_asks_the_hub(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    calls = hub_says(monkeypatch, {"F32": 9_000_000})
    check_size(str(tmp_path), 2_000_000, "mine")
    assert calls == []
