"""Model loading: the embedded default, every supported architecture, and clear errors."""

import types

import pytest

from analysis.core.models import (
    LoadedModel, ModelLoadError, check_attention_output, load_model, normalise_spec,
    resolve_spec,
)


def test_default_model_shape_and_specials(default_model):
    assert default_model.spec == "default"
    assert (default_model.n_layers, default_model.n_heads) == (6, 12)
    assert default_model.n_params == 22_713_216
    assert default_model.max_length == 512
    assert default_model.special_tokens["cls"] == "[CLS]"
    assert default_model.special_tokens["sep"] == "[SEP]"
    assert default_model.model.config._attn_implementation == "eager"


@pytest.mark.parametrize("alias", [None, "", " default ", "all-MiniLM-L6-v2"])
def test_default_aliases(alias):
    assert normalise_spec(alias) == "default"


@pytest.mark.parametrize("arch,layers", [("bert", 2), ("roberta", 2), ("distilbert", 2),
                                         ("albert", 3), ("electra", 2)])
def test_supported_architectures_load_from_folder(tiny_model_dir, arch, layers):
    m = load_model(str(tiny_model_dir(arch)))
    assert (m.n_layers, m.n_heads) == (layers, 4)
    assert m.model_type == arch
    assert m.n_params > 0


def test_decoder_only_model_is_refused(tiny_model_dir):
    with pytest.raises(ModelLoadError, match="decoder-only"):
        load_model(str(tiny_model_dir("gpt2")))


def test_folder_without_model(tmp_path):
    with pytest.raises(ModelLoadError, match="holds no model"):
        load_model(str(tmp_path))


def test_missing_folder(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_model(str(tmp_path / "nope" / "model"))


@pytest.mark.parametrize("spec", ["BAAI/bge-small-en-v1.5", "bert-base-uncased",
                                  "sentence-transformers/all-MiniLM-L12-v2", "roberta-base"])
def test_hub_ids_with_dots_and_dashes_are_hub_ids(spec):
    assert resolve_spec(spec) == (spec, spec)


@pytest.mark.parametrize("spec", ["./ckpt", "~/no/such/ckpt", "a/b/c", "runs\\ckpt"])
def test_path_like_specs_are_missing_folders(spec):
    with pytest.raises(ModelLoadError, match="does not exist"):
        resolve_spec(spec)


def test_a_file_is_not_a_model_folder(tmp_path):
    f = tmp_path / "model.bin"
    f.write_bytes(b"0")
    with pytest.raises(ModelLoadError, match="is a file, not a model folder"):
        resolve_spec(str(f))


def test_unknown_hub_id_offline_gives_one_line():
    with pytest.raises(ModelLoadError) as err:
        load_model("no-such-org-xyz/no-such-model-xyz")
    assert "no-such-org-xyz/no-such-model-xyz" in str(err.value)
    assert "\n" not in str(err.value)


def test_model_that_returns_no_attention_is_refused(default_model):
    class NoAttention:
        def __call__(self, **kwargs):
            return types.SimpleNamespace(attentions=None)

    fake = LoadedModel(spec="x", name="x", tokenizer=default_model.tokenizer,
                       model=NoAttention(), model_type="bert", n_layers=6, n_heads=12,
                       n_params=0, max_length=512)
    with pytest.raises(ModelLoadError, match="does not return attention maps"):
        check_attention_output(fake)


def test_pick_device_uses_cuda_when_present(monkeypatch):
    import torch

    from analysis.core.models import pick_device

    monkeypatch.delenv("DASHBOARD_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device() == "cuda"
    monkeypatch.setenv("DASHBOARD_DEVICE", "cpu")  # the host keeps the GPU for something else
    assert pick_device() == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("DASHBOARD_DEVICE", "cuda")  # asked for, but there is none
    assert pick_device() == "cpu"
    monkeypatch.delenv("DASHBOARD_DEVICE")
    assert pick_device() == "cpu"
    with pytest.raises(ValueError, match="DASHBOARD_DEVICE must be one of cpu, cuda"):
        pick_device("tpu")


def test_models_load_on_the_picked_device(monkeypatch, tiny_model_dir):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    m = load_model(str(tiny_model_dir("bert")))
    assert {p.device.type for p in m.model.parameters()} == {"cpu"}


def test_a_bad_device_setting_is_one_plain_line(monkeypatch, tiny_model_dir):
    monkeypatch.setenv("DASHBOARD_DEVICE", "gpu0")
    with pytest.raises(ModelLoadError, match="DASHBOARD_DEVICE must be one of cpu, cuda"):
        load_model(str(tiny_model_dir("bert")))
