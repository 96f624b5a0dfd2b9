"""Loading and checking the two checkpoints: plain messages for another shape, another
tokenizer, a missing folder; an empty corpus."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import torch

from analysis.drift import DriftError, check_compatible, load_pair
from analysis.core.encoding import encode_corpus, encode_dataset
from analysis.core.errors import DataError
from analysis.core.models import ModelLoadError, checkpoint_stamp, default_model_path, load_model


@pytest.fixture(scope="module")
def base():
    return load_model("default")


def make_two_layer_folder(folder: Path) -> Path:
    """A randomly initialised 2-layer BERT with the default tokenizer (a different shape)."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=2,
                        num_attention_heads=12, intermediate_size=512)
    folder.mkdir(parents=True, exist_ok=True)
    BertModel(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(default_model_path()).save_pretrained(folder)
    return folder


def test_different_tokenizer_and_shape_are_refused(base):
    other = copy.copy(base)
    other.tokenizer = copy.deepcopy(base.tokenizer)
    other.tokenizer.add_tokens(["zzqxword"])
    with pytest.raises(DriftError, match="different tokenizers"):
        check_compatible(base, other)
    smaller = copy.copy(base)
    smaller.n_layers = base.n_layers - 1
    with pytest.raises(DriftError, match="different shapes: before has 6 layers x 12 heads"):
        check_compatible(base, smaller)


def test_folder_of_another_shape_is_refused_plainly(tmp_path):
    folder = make_two_layer_folder(tmp_path / "small")
    with pytest.raises(DriftError) as info:
        load_pair("default", str(folder))
    assert str(info.value) == (
        "The models have different shapes: before has 6 layers x 12 heads, after has 2 layers "
        "x 12 heads; heads can only be compared between checkpoints of one architecture.")


def test_checkpoint_stamp_changes_when_a_folder_is_written_again(tmp_path):
    assert checkpoint_stamp("default") == "" and checkpoint_stamp(str(tmp_path / "x")) == ""
    (tmp_path / "config.json").write_text("{}")
    first = checkpoint_stamp(str(tmp_path))
    os.utime(tmp_path / "config.json", ns=(1, int(first) + 10**9))
    assert first and checkpoint_stamp(str(tmp_path)) == str(int(first) + 10**9)


def test_missing_folder_and_empty_corpus(base, tmp_path):
    with pytest.raises(ModelLoadError, match=r"^After model: The folder .* does not exist\."):
        load_pair("default", str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="The corpus is empty"):
        encode_corpus(base.tokenizer, ["", "   ", "\u200b"])
    from datasets import Dataset

    with pytest.raises(DataError, match="The corpus is empty"):
        encode_dataset(base.tokenizer, Dataset.from_dict({"text": []}))
