"""Checkpoint folders: atomic writes, the strict-JSON card, loading and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis.absa.checkpoints import CARD_NAME, load_checkpoint, make_card, save_checkpoint
from analysis.absa.finetune import fine_tune, predict_probs
from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples, default_pair_order
from analysis.core.errors import InputError


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


def make_tiny_checkpoint(folder: Path, task: str = "qa_m", steps: int = 2) -> Path:
    """A small fine-tuned checkpoint (tiny BERT, default tokenizer) for page tests."""
    import torch
    from transformers import AutoModel, AutoTokenizer, BertConfig

    from analysis.core.models import LoadedModel, default_model_path

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=37, max_position_embeddings=130)
    model = AutoModel.from_config(cfg, attn_implementation="eager").eval()
    tok = AutoTokenizer.from_pretrained(default_model_path())
    loaded = LoadedModel("tiny", "tiny", tok, model, "bert", 2, 4, 0, 128, {})
    ds = load_sample().select(range(8))
    ex = build_examples(ds, task)
    res = fine_tune(loaded, ex, task, epochs=1, max_steps=steps, batch_size=8, lr=1e-3)
    card = make_card("tiny", task, default_pair_order(task), "sample[:8]", 0, 1, 128, res)
    return save_checkpoint(res.model, tok, folder, card)


def test_checkpoint_round_trip_and_refusals(tiny, tmp_path):
    ex = build_examples(load_sample().select(range(3)), "nli_m")
    res = fine_tune(tiny, ex, "nli_m", epochs=1, batch_size=8, lr=1e-3)
    card = make_card(tiny.spec, "nli_m", "review-aux", "sample", 0, 1, 128, res,
                       {"aspect_f1": 12.5})
    out = save_checkpoint(res.model, tiny.tokenizer, tmp_path / "ckpt", card)
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no temp folder left
    loaded, card2 = load_checkpoint(out, task="nli_m")
    assert card2["task"] == "nli_m" and card2["metrics"] == {"aspect_f1": 12.5}
    assert card2["seed"] == 0 and card2["base_model"] == tiny.spec
    p1 = predict_probs(res.model, tiny.tokenizer, ex)
    p2 = predict_probs(loaded.model, loaded.tokenizer, ex)
    np.testing.assert_allclose(p1, p2, atol=1e-6)
    with pytest.raises(InputError, match="fine-tuned for NLI-M, not QA-B"):
        load_checkpoint(out, task="qa_b")
    with pytest.raises(InputError, match="not an ABSA checkpoint"):
        load_checkpoint(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="is not an ABSA checkpoint; choose a new folder"):
        save_checkpoint(res.model, tiny.tokenizer, other, card)
    # a crash while writing leaves neither a half-written folder nor a temp folder
    class Broken:
        def save_pretrained(self, path):
            (Path(path) / "partial").write_text("x")
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        save_checkpoint(res.model, Broken(), tmp_path / "new", card)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt", "other"]
    # a card with another architecture's head
    bad = json.loads((out / CARD_NAME).read_text())
    bad["task"] = "qa_b"
    (out / CARD_NAME).write_text(json.dumps(bad))
    with pytest.raises(InputError, match="classifier has 5 labels; QA-B needs 2"):
        load_checkpoint(out)


def test_card_is_strict_json_with_undefined_metrics_as_null(tiny, tmp_path):
    ex = build_examples(load_sample().select(range(2)), "nli_m")
    res = fine_tune(tiny, ex, "nli_m", epochs=1, batch_size=8, max_steps=1, lr=1e-3)
    card = make_card("tiny", "nli_m", "review-aux", "s", 0, 1, 128, res,
                       {"acc_binary": float("nan"), "aspect_f1": np.float64(12.5)},
                       curve=[{"epoch": 1, "acc_binary": float("inf")}])
    out = save_checkpoint(res.model, tiny.tokenizer, tmp_path / "ck", card)
    back = json.loads((out / CARD_NAME).read_text(), parse_constant=lambda c: pytest.fail(c))
    assert back["metrics"] == {"acc_binary": None, "aspect_f1": 12.5}
    assert back["curve"] == [{"epoch": 1, "acc_binary": None}]
