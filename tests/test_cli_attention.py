"""CLI `attention`: same maps as the library, clear one-line errors with exit status 2."""

import subprocess
import sys

import numpy as np
import pytest

from analysis.attention import attention_for
from analysis.cli import main

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


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


def test_module_entry_point_decoder_model(tmp_path, tiny_model_dir):
    proc = subprocess.run(
        [sys.executable, "-m", "analysis", "attention", "--text", "hello", "--model",
         str(tiny_model_dir("gpt2")), "--out", str(tmp_path / "x.npz")],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "decoder-only" in lines[0]
