"""The ``syntax`` and ``probe`` commands: JSON schemas and values, options checked before any
work, one-line errors with exit status 2 (docs/METHODS.md section 10). The module is added to
the CLI's command list here (the lead registers it in analysis/cli/__init__.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import analysis.cli as cli

ROW = "{i}\t{w}\t_\t{u}\t_\t_\t{h}\t{r}\t_\t_"
SENTENCES = [
    [("The", "DET", 2, "det"), ("soup", "NOUN", 4, "nsubj"), ("was", "AUX", 4, "cop"),
     ("cold", "ADJ", 0, "root"), (".", "PUNCT", 4, "punct")],
    [("We", "PRON", 2, "nsubj"), ("loved", "VERB", 0, "root"), ("the", "DET", 5, "det"),
     ("fresh", "ADJ", 5, "amod"), ("bread", "NOUN", 2, "obj"), ("!", "PUNCT", 2, "punct")],
    [("Service", "NOUN", 4, "nsubj"), ("was", "AUX", 4, "cop"), ("very", "ADV", 4, "advmod"),
     ("slow", "ADJ", 0, "root")],
    [("A", "DET", 2, "det"), ("waiter", "NOUN", 3, "nsubj"), ("smiled", "VERB", 0, "root"),
     ("at", "ADP", 5, "case"), ("us", "PRON", 3, "obl"), (".", "PUNCT", 3, "punct")],
]


def conllu(sentences) -> str:
    return "\n\n".join("\n".join(ROW.format(i=i, w=w, u=u, h=h, r=r)
                                 for i, (w, u, h, r) in enumerate(s, 1))
                       for s in sentences) + "\n\n"


@pytest.fixture()
def main(monkeypatch):
    mods = [m for m in cli.COMMAND_MODULES if m != "analysis.cli.syntax"]
    monkeypatch.setattr(cli, "COMMAND_MODULES", [*mods, "analysis.cli.syntax"])
    return cli.main


@pytest.fixture()
def files(tmp_path):
    good = tmp_path / "good.conllu"
    good.write_text(conllu(SENTENCES[:2] + SENTENCES[3:]), encoding="utf-8")
    return tmp_path, good


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return str(tiny_model_dir("bert"))


def test_syntax_schema_and_values(main, files, tiny, capsys):
    from analysis.core.models import load_model
    from analysis.syntax import read_conllu, syntax_heads

    tmp, good = files
    out = tmp / "s.json"
    assert main(["syntax", "--data", str(good), "--model", tiny, "--out", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert set(got) == {"n_sentences", "skipped", "relations"}
    assert (got["n_sentences"], got["skipped"]) == (3, 0)
    assert list(got["relations"])[0] == "all" and got["relations"]["all"]["n"] == 14
    det = got["relations"]["det"]
    assert det["n"] == 3 and np.array(det["dep_to_head"]).shape == (2, 4)
    assert set(det["best"]) == {"layer", "head", "direction", "accuracy"}
    assert det["baseline"] == {"offset": 1, "accuracy": pytest.approx(2 / 3)}
    # the page's numbers
    ref = syntax_heads(load_model(tiny), read_conllu(good)).to_json()
    assert got == json.loads(json.dumps(ref))
    # the study's result reads its JSON back (the precomputed example, a report)
    from analysis.syntax import STUDY

    back = STUDY.result.from_json(got)
    assert back.to_json() == got and back.relations["det"].dep_to_head.shape == (2, 4)
    assert (back.n_layers, back.n_heads) == (2, 4)
    assert "wrote" in capsys.readouterr().out
    assert main(["syntax", "--data", str(good), "--model", tiny, "--max-examples", "1",
                 "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["n_sentences"] == 1


def test_probe_schema(main, files, tiny, capsys):
    tmp, good = files
    evalf = tmp / "eval.conllu"
    evalf.write_text(conllu(SENTENCES[1:]), encoding="utf-8")
    out = tmp / "p.json"
    assert main(["probe", "--train", str(good), "--eval", str(evalf), "--model", tiny,
                 "--rank", "4", "--seed", "1", "--out", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert set(got) == {"layers", "baselines"}
    assert [r["layer"] for r in got["layers"]] == [0, 1, 2]
    assert all(set(r) == {"layer", "uuas", "dspr", "root_acc", "depth_spearman"}
               for r in got["layers"])
    assert all(0 <= r["uuas"] <= 1 and 0 <= r["root_acc"] <= 1 for r in got["layers"])
    # evaluation: 3 sentences, 4 + 3 + 4 gold edges among non-punctuation words; the chain
    # finds 2 + 1 + 3
    assert got["baselines"]["linear_chain_uuas"] == pytest.approx(6 / 11)
    assert "best UUAS" in capsys.readouterr().out
    from analysis.syntax import PROBES

    assert PROBES.result.from_json(got).to_json() == got


def bad_cases(tmp, good):
    cyc = tmp / "cycle.conllu"
    cyc.write_text(ROW.format(i=1, w="a", u="X", h=2, r="dep") + "\n"
                   + ROW.format(i=2, w="b", u="X", h=1, r="dep") + "\n"
                   + ROW.format(i=3, w="c", u="X", h=0, r="root") + "\n\n", encoding="utf-8")
    latin = tmp / "latin.conllu"
    latin.write_bytes(conllu(SENTENCES[:1]).encode("utf-8") + b"\xff\xfe")
    empty = tmp / "empty.conllu"
    empty.write_text("# nothing\n", encoding="utf-8")
    o = str(tmp / "o.json")
    return [
        (["syntax", "--data", str(good), "--out", str(tmp / "o.txt")], "--out must name a .json"),
        (["syntax", "--data", str(good), "--out", str(tmp / "no" / "o.json")],
         "--out names a folder that does not exist"),
        (["syntax", "--data", str(tmp / "none.conllu"), "--out", o],
         "--data names a file that does not exist"),
        (["syntax", "--data", str(tmp), "--out", o], "--data is a folder"),
        (["syntax", "--data", str(good), "--max-examples", "0", "--out", o],
         "--max-examples must be a whole number of at least 1"),
        (["syntax", "--data", str(good), "--batch-size", "x", "--out", o], "--batch-size must"),
        (["syntax", "--data", str(cyc), "--out", o], "a cycle (1 -> 2 -> 1)"),
        (["syntax", "--data", str(latin), "--out", o], "not UTF-8"),
        (["syntax", "--data", str(empty), "--out", o], "no dependency rows"),
        (["syntax", "--data", str(good), "--model", str(tmp / "nomodel"), "--out", o],
         "does not exist"),
        (["probe", "--train", str(good), "--eval", str(good), "--rank", "0", "--out", o],
         "--rank must be a whole number of at least 1"),
        # issue 34 item 6: was a 22-line traceback after trying to allocate 1.5 TB
        (["probe", "--train", str(good), "--eval", str(good), "--rank", "1000000000",
          "--out", o], "--rank must be a whole number from 1 to 4096, not '1000000000'"),
        (["probe", "--train", str(good), "--eval", str(good), "--seed", "-1", "--out", o],
         "--seed must be a whole number from 0"),
        (["probe", "--train", str(good), "--eval", str(tmp / "x.conllu"), "--out", o],
         "--eval names a file that does not exist"),
        (["probe", "--train", str(cyc), "--eval", str(good), "--out", o], "a cycle"),
        (["probe", "--train", str(good), "--eval", str(good), "--out", str(tmp / "o.csv")],
         "--out must name a .json"),
        (["probe", "--train", str(good), "--out", o], "--eval"),
    ]


def test_bad_input_one_line_exit_2(main, files, capsys):
    tmp, good = files
    for args, expect in bad_cases(tmp, good):
        assert main(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err, (args, err)
        assert expect in err, (args, err)
    assert not (tmp / "o.json").exists()


def test_options_checked_before_any_work(main, files, monkeypatch, capsys):
    """A bad option fails before the treebank is read or the model loaded."""
    import analysis.cli.syntax as mod

    tmp, good = files

    def boom(*a, **k):
        raise AssertionError("work started")

    monkeypatch.setattr(mod, "load_model", boom)
    monkeypatch.setattr("analysis.syntax.read_conllu", boom)
    assert main(["probe", "--train", str(good), "--eval", str(good), "--rank", "0",
                 "--out", str(tmp / "o.json")]) == 2
    assert main(["syntax", "--data", str(good), "--out", str(tmp / "o.txt")]) == 2
    assert capsys.readouterr().err.count("\n") == 2


def test_too_long_sentences_are_skipped_and_counted(main, files, tiny, tmp_path):
    long = tmp_path / "long.conllu"
    words = [("w", "X", 1, "dep")] * 140
    long.write_text(conllu([SENTENCES[0], [("root", "X", 0, "root")] + words[1:]]),
                    encoding="utf-8")
    out = tmp_path / "l.json"
    assert main(["syntax", "--data", str(long), "--model", tiny, "--out", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    assert (got["n_sentences"], got["skipped"]) == (1, 1)
