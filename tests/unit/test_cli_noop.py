"""The ``noop`` command (alias ``stats``): JSON schema and values against the one-by-one
reference, the cap, one-line errors (docs/METHODS.md section 3)."""

from __future__ import annotations

import json

import numpy as np

from analysis.core.corpus import read_corpus
from bench.references.noop import corpus_stats_loop


def test_cli_stats_schema_and_values(tmp_path, default_model, capsys):
    from analysis.cli import main

    data = tmp_path / "c.jsonl"
    rows = [{"text": "The soup was cold, and the bread was stale."},
            {"text": "Is it open?", "text_pair": "Only on Sundays."},
            {"text": "Lovely."}]
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    out = tmp_path / "s.json"
    assert main(["stats", "--data", str(data), "--out", str(out), "--batch-size", "2"]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert set(got) >= {"model", "n_examples", "n_layers", "n_heads", "metrics"}
    assert ((got["model"], got["n_examples"], got["n_layers"], got["n_heads"])
            == ("default", 3, 6, 12))
    assert list(got["metrics"]) == ["cls", "sep", "punct", "self", "prev", "next", "entropy"]
    ref = corpus_stats_loop(default_model, read_corpus(data))
    for k, v in got["metrics"].items():
        arr = np.array(v)
        assert arr.shape == (6, 12) and isinstance(v[0][0], float)
        assert np.abs(arr - ref[k]).max() < 1e-5, k
    assert "wrote" in capsys.readouterr().out
    # the cap
    assert main(["stats", "--data", str(data), "--out", str(out), "--max-examples", "1"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["n_examples"] == 1


def test_cli_stats_bad_input(tmp_path, capsys):
    from analysis.cli import main

    empty = tmp_path / "e.txt"
    empty.write_text("", encoding="utf-8")
    csvf = tmp_path / "c.csv"
    csvf.write_text("review\nnice\n", encoding="utf-8")
    cases = [
        (["--data", str(empty), "--out", str(tmp_path / "o.json")], "empty"),
        (["--data", str(csvf), "--out", str(tmp_path / "o.json")], "no column 'text'"),
        (["--data", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "o.json")],
         "not found"),
        (["--data", str(csvf), "--out", str(tmp_path / "o.txt")], ".json"),
    ]
    blanks = tmp_path / "b.txt"
    blanks.write_text("The soup was cold.\n\nService was fine.\n", encoding="utf-8")
    # a note about the blank line goes to stdout; stderr holds the one error line
    cases.append((["--data", str(blanks), "--model", str(tmp_path / "none"), "--out",
                   str(tmp_path / "o.json")], "does not exist"))
    for args, expect in cases:
        assert main(["stats", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and expect in err and "\n" not in err


def test_cli_noop_and_its_alias_stats_write_the_same_json(tmp_path, default_model):
    from analysis.cli import main

    data = tmp_path / "c.txt"
    data.write_text("The soup was cold, sadly.\nIs it open?\tYes, on Sundays.\n", encoding="utf-8")
    outs = [tmp_path / "noop.json", tmp_path / "stats.json"]
    for command, out in zip(("noop", "stats"), outs):
        assert main([command, "--data", str(data), "--out", str(out)]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()
