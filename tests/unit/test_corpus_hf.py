"""Hugging Face datasets: a local folder, and a missing id offline."""

from __future__ import annotations

import json

import pytest

from analysis.core.corpus import (read_hf_dataset)
from analysis.core.errors import DataError
from builders import one_line


def test_read_hf_dataset_local_folder_and_missing(tmp_path):
    folder = tmp_path / "my_ds"
    folder.mkdir()
    (folder / "train.jsonl").write_text(
        "\n".join(json.dumps({"sentence": s, "label": i}) for i, s in
                  enumerate(["Good.", "Bad.", "", "Fine."])), encoding="utf-8")
    ds = read_hf_dataset(str(folder), "train", "sentence", max_examples=2)
    assert ds["text"] == ["Good.", "Bad."]
    assert ds["text_pair"] == [None, None]
    with pytest.raises(DataError) as exc:
        read_hf_dataset(str(folder), "train", "review")
    assert "no column 'review'" in one_line(exc)
    with pytest.raises(DataError) as exc:
        read_hf_dataset("no-such-user/no-such-dataset-xyz", "train", "text")
    assert "Could not load the dataset" in one_line(exc)
