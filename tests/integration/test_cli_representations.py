"""The ``representations`` command: the JSON holds the library's (the page's) numbers; options
checked before any work; bad input gives exit status 2 and one line."""

from __future__ import annotations

import json

import pytest

import builders

import analysis.cli as cli
from analysis.core.models import load_model
from analysis.representations import corpus_representations, input_representations
from analysis.syntax.treebank import read_conllu

ROW = "{i}\t{w}\t_\t{u}\t_\t_\t{h}\t{r}\t_\t_"
SENTENCES = [[("Dogs", "NOUN", 2, "nsubj"), ("bark", "VERB", 0, "root")],
             [("Cats", "NOUN", 2, "nsubj"), ("sleep", "VERB", 0, "root")],
             [("Birds", "NOUN", 2, "nsubj"), ("sing", "VERB", 0, "root")]]


def conllu(upos=True) -> str:
    return "\n\n".join("\n".join(ROW.format(i=i, w=w, u=u if upos else "_", h=h, r=r)
                                 for i, (w, u, h, r) in enumerate(s, 1))
                       for s in SENTENCES) + "\n\n"


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return str(tiny_model_dir("bert"))


def run(capsys, *argv):
    code = cli.main(list(argv))
    return code, capsys.readouterr()


def test_text_json_equals_the_library(tmp_path, tiny, capsys):
    out = tmp_path / "r.json"
    code, _ = run(capsys, "representations", "--model", tiny, "--compare", tiny, "--text",
                  "The soup was cold.", "--pair", "soup", "--method", "aligned", "--out",
                  str(out))
    assert code == 0
    got = json.loads(out.read_text())
    m = load_model(tiny)
    want = input_representations(m, "The soup was cold.", "soup", m, method="aligned")
    assert got == json.loads(json.dumps(want.to_json()))
    assert got["projection"]["method"] == "aligned" and len(got["projection"]["layers"]) == 3
    from analysis.representations.study import STUDY  # the result reads its JSON back

    back = STUDY.result.from_json(got)
    assert back.to_json() == got and back.points[2].shape == (len(got["tokens"]), 2)


def test_data_json_equals_the_library(tmp_path, tiny, capsys):
    data = tmp_path / "tb.conllu"
    data.write_text(conllu(), encoding="utf-8")
    out = tmp_path / "c.json"
    code, io = run(capsys, "representations", "--model", tiny, "--data", str(data), "--out",
                   str(out))
    assert code == 0, io.err
    m = load_model(tiny)
    want = corpus_representations(m, read_conllu(data), scatter=False).to_json()
    assert json.loads(out.read_text()) == json.loads(json.dumps(want))
    assert want["compare"] is None and want["probes"]["upos"]["majority"] == 0.5
    # each layer's accuracy with its bootstrap 95% interval over sentences
    upos = json.loads(out.read_text())["probes"]["upos"]
    assert len(upos["layers_ci"]) == len(upos["layers"])
    from analysis.representations.study import CORPUS  # back from the JSON, but the intervals

    back = CORPUS.result.from_json(json.loads(out.read_text())).to_json()
    assert back["probes"]["upos"] == {k: upos[k] for k in ("layers", "majority")}
    assert back["anisotropy"] == want["anisotropy"] and back["compare"] is None
    assert all(lo <= acc <= hi for (lo, hi), acc in zip(upos["layers_ci"], upos["layers"]))


def labelled_csv(tmp_path):
    data = tmp_path / "l.csv"
    rows = [("The soup was cold.", "neg"), ("Great food and a view!", "pos"),
            ("Slow service.", "neg"), ("Tasty and cheap.", "pos")] * 2
    data.write_text("text,label\n" + "".join(f"{t},{lab}\n" for t, lab in rows),
                    encoding="utf-8")
    return data


def test_labelled_csv_json_equals_the_library(tmp_path, tiny, capsys):
    from analysis.cli.representations import read_labelled

    data = labelled_csv(tmp_path)
    out = tmp_path / "l.json"
    code, io = run(capsys, "representations", "--model", tiny, "--data", str(data), "--probe",
                   "label", "--out", str(out))
    assert code == 0, io.err
    ds = read_labelled(str(data))
    assert ds["label"] == ["neg", "pos"] * 4
    want = corpus_representations(load_model(tiny), ds, scatter=False).to_json()
    got = json.loads(out.read_text())
    assert got == json.loads(json.dumps(want)) and set(got["probes"]) == {"label"}
    assert got["probes"]["label"]["majority"] <= 0.5  # two classes, even


def test_ray_option_gives_the_in_process_json(tmp_path, tiny, capsys):
    """--ray on this process's own local cluster (started here on 127.0.0.1, so 'auto' never
    joins a cluster someone else runs on the machine): the in-process JSON."""
    pytest.importorskip("ray", reason="Ray is not installed")
    data = labelled_csv(tmp_path)
    outs = []
    with builders.local_ray_cluster():
        for extra in ([], ["--ray", "auto", "--ray-workers", "2"]):
            out = tmp_path / f"r{len(outs)}.json"
            code, io = run(capsys, "representations", "--model", tiny, "--data", str(data),
                           "--batch-size", "3", "--out", str(out), *extra)
            assert code == 0, io.err
            outs.append(json.loads(out.read_text()))
    assert set(outs[0]["probes"]) == {"label"} and outs[0]["compare"] is None
    # the shards' batches are padded differently: equal to float rounding
    assert outs[1]["probes"] == outs[0]["probes"]
    for key in ("anisotropy", "self_similarity"):
        assert outs[1][key] == pytest.approx(outs[0][key], abs=1e-6)


@pytest.mark.parametrize("argv, line", [
    (["--text", "Hello"], "error: The text has one token; a projection needs at least two "
                          "(type a few words)."),
    (["--text", "Dogs bark.", "--compare", "default"],
     "error: The models have different shapes (2 layers of 32 numbers against 6 layers of "
     "384), so their vectors cannot share one projection."),
    (["--data", "NOUPOS", "--probe", "upos"],
     "error: The treebank has no UPOS column (every word's UPOS is '_'), so its words cannot "
     "be coloured or probed by part of speech."),
    (["--text", "Dogs bark.", "--probe", "upos"], "error: --probe is used with --data, not "
                                                  "with --text."),
    (["--text", "Dogs bark.", "--method", "lda"], None),
    (["--data", "missing.conllu"], "error: --data names a file that does not exist: "
                                   "missing.conllu"),
    (["--data", "NOLABEL", "--probe", "label"],
     "error: The corpus has no 'label' column (or every label is blank), so its words cannot "
     "be coloured or probed by label; give a .csv or .jsonl file with a 'label' column."),
    (["--data", "NOUPOS", "--probe", "label"],
     "error: The label probe needs a labelled corpus (a .csv or .jsonl file with a 'label' "
     "column); the data given is a treebank."),
    (["--text", "Dogs bark.", "--ray", "auto"], None),
])
def test_bad_input_one_line(tmp_path, tiny, capsys, argv, line):
    bad = tmp_path / "noupos.conllu"
    bad.write_text(conllu(upos=False), encoding="utf-8")
    nolabel = tmp_path / "nolabel.csv"
    nolabel.write_text("text,topic\nThe soup was cold.,food\nSlow service.,service\n",
                       encoding="utf-8")
    argv = [str(bad) if a == "NOUPOS" else str(nolabel) if a == "NOLABEL" else a
            for a in argv]
    code, io = run(capsys, "representations", "--model", tiny, *argv, "--out",
                   str(tmp_path / "x.json"))
    assert code == 2
    assert io.err.count("\n") == 1 and "Traceback" not in io.err
    if line:
        assert io.err.strip() == line
    assert not (tmp_path / "x.json").exists()
