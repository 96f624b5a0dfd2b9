"""CLI `attention`: same maps as the library, clear one-line errors with exit status 2."""

import json
import subprocess
import sys

import numpy as np
import pytest

from analysis.attention import attention_for
from analysis.cli import main

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_attention_npz_matches_library(tmp_path, default_model, capsys):
    out = tmp_path / "maps.npz"
    rc = main(["attention", "--text", "The food was great.", "--pair",
               "what do you think of the food of it ?", "--out", str(out)])
    assert rc == 0
    assert "6 layers x 12 heads" in capsys.readouterr().out
    data = np.load(out)
    ref = attention_for(default_model, "The food was great.",
                        "what do you think of the food of it ?")
    assert data["attentions"].dtype == np.float32
    assert data["attentions"].shape == (6, 12, ref.encoding.n_tokens, ref.encoding.n_tokens)
    np.testing.assert_array_equal(data["attentions"], ref.attentions)
    assert data["tokens"].tolist() == ref.encoding.tokens
    assert data["segments"].tolist() == ref.encoding.segments.tolist()
    # the .npz holds the study's result under its declared JSON keys, and reads back
    from analysis.attention import STUDY

    assert sorted(data.files) == sorted(STUDY.result.SCHEMA.names)
    assert str(data["model"]) == ref.model == "default"
    back = STUDY.result.from_json({k: data[k] for k in data.files})
    np.testing.assert_array_equal(back.attentions, ref.attentions)
    assert (back.tokens, back.encoding.words, back.encoding.word_ids) == (
        ref.tokens, ref.encoding.words, ref.encoding.word_ids)
    js = json.loads(json.dumps(ref.to_json(), allow_nan=False))
    assert js["special"][0] is True and js["segments"][-1] == 1
    assert STUDY.result.from_json(js).to_json() == js


@pytest.mark.parametrize("args,needle", [
    (["--text", "   "], "empty"),
    (["--text", "hi", "--model", "/no/such/folder"], "does not exist"),
    (["--text", "hi", "--out", "maps.json"], ".npz"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, args, needle):
    if "--out" not in args:
        args = args + ["--out", str(tmp_path / "x.npz")]
    rc = main(["attention", *args])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and needle in err
    assert not (tmp_path / "x.npz").exists()


def test_unusual_characters(tmp_path, capsys):
    """Emoji become [UNK] (said on stdout), zero-width and direction marks are removed (said),
    right-to-left text is analysed as it is; text made only of invisible characters is empty."""
    out = tmp_path / "x.npz"
    assert main(["attention", "--text", "great food \U0001F600", "--out", str(out)]) == 0
    io = capsys.readouterr()
    assert "[UNK]" in io.out and not io.err
    assert "[UNK]" in np.load(out)["tokens"].tolist()
    assert main(["attention", "--text", "good\u200b food \u202e", "--out", str(out)]) == 0
    io = capsys.readouterr()
    assert "removed 2 invisible" in io.out and not io.err
    assert np.load(out)["tokens"].tolist() == ["[CLS]", "good", "food", "[SEP]"]
    assert main(["attention", "--text", "\u05e9\u05dc\u05d5\u05dd", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["attention", "--text", "\u200b\u200d\u2060",
                 "--out", str(tmp_path / "y.npz")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty" in err[0]


def test_module_entry_point_decoder_model(tmp_path, tiny_model_dir):
    proc = subprocess.run(
        [sys.executable, "-m", "analysis", "attention", "--text", "hello", "--model",
         str(tiny_model_dir("gpt2")), "--out", str(tmp_path / "x.npz")],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "decoder-only" in lines[0]
