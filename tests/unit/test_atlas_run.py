"""``python -m analysis atlas`` on tiny models: the numbers are those the studies' own commands
write for the same inputs (noop, importance, patching --data, drift), a second run reads every
study back from the cache, bad input is one line; and one source of truth: the statements the
Aspect heads, causal check, Head importance, Causal patching and No-op statistics readings
make about their top heads are the atlas's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from builders import run_cli

HELD_OUT = [f"s{i:03d}" for i in range(1, 7)]  # six held-out sentences: 30 pairs
CORPUS = "\n".join(["The pasta was delicious, and the waiter was friendly.",
                    "We waited an hour.\tWas the service slow?", "Prices are fair.",
                    "The room was quiet; the staff, polite.", "Stop!",
                    "Is the soup hot?\tYes, it is.", "I loved the view.",
                    "The bread was stale but the wine was good.",
                    "She said the dessert was too sweet.", "Thank you.",
                    "Service was slow, food was cold.", "Great place, great people."]) + "\n"


def _checkpoint(folder: Path) -> Path:
    """A tiny NLI-M ABSA checkpoint (random weights, the classifier scaled up so that a
    counterfactual moves the logits by more than patching's minimum) whose card names six
    held-out sentences of the bundled sample."""
    import torch

    from analysis.absa.checkpoints import make_card, save_checkpoint
    from analysis.absa.finetune import FineTuneResult
    from analysis.absa.tasks import num_labels
    from importance_util import tiny_classifier

    model, tok = tiny_classifier(num_labels("nli_m"))
    with torch.no_grad():
        model.classifier.weight.mul_(60.0)
    card = make_card("tiny", "nli_m", "review-aux", "sample", 0, 1, 64,
                     FineTuneResult(model, tok, [1.0], 0.0, [], 0), heldout_ids=HELD_OUT)
    return save_checkpoint(model, tok, folder, card)


@pytest.fixture(scope="module")
def atlas(tmp_path_factory, tiny_model_dir):
    root = tmp_path_factory.mktemp("atlas")
    ck, corpus = _checkpoint(root / "ck"), root / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    env = {"DASHBOARD_CACHE": str(root / "cache")}
    args = ["atlas", "--model", ck, "--before", tiny_model_dir("bert"), "--data", corpus,
            "--out", root / "atlas.json"]
    done = run_cli(*args, env=env)
    assert done.returncode == 0, done.stderr
    again = run_cli(*args[:-1], root / "again.json", env=env)
    return {"ck": ck, "corpus": corpus, "before": tiny_model_dir("bert"), "env": env,
            "root": root, "json": json.loads((root / "atlas.json").read_text()),
            "first": done.stdout, "again": again,
            "json_again": json.loads((root / "again.json").read_text())}


def _grid(js, key):
    return np.array([[h[key] for h in row] for row in js["heads"]], dtype=float)


def test_the_numbers_are_the_studies_own_commands(atlas, tmp_path):
    js, ck, corpus = atlas["json"], str(atlas["ck"]), str(atlas["corpus"])
    assert js["layers"] == 2 and js["heads_per_layer"] == 4
    assert [len(row) for row in js["heads"]] == [4, 4]
    assert all(h["layer"] == l and h["head"] == k for l, row in enumerate(js["heads"])
               for k, h in enumerate(row))
    outs = {name: tmp_path / f"{name}.json" for name in ("noop", "imp", "pat", "drift")}
    for args in (["noop", "--model", ck, "--data", corpus, "--out", outs["noop"]],
                 ["importance", "--model", ck, "--data", "sample", "--max-examples", "40",
                  "--out", outs["imp"]],
                 ["patching", "--model", ck, "--data", "sample", "--max-examples", "40",
                  "--no-importance", "--out", outs["pat"]],
                 ["drift", "--before", atlas["before"], "--after", ck, "--data", corpus,
                  "--out", outs["drift"]]):
        done = run_cli(*args)
        assert done.returncode == 0, (args[0], done.stderr)
    noop = json.loads(outs["noop"].read_text())
    for key in ("sep", "cls", "punct", "self", "prev", "next", "entropy"):
        np.testing.assert_array_equal(_grid(js, key), noop["metrics"][key], err_msg=key)
    imp = json.loads(outs["imp"].read_text())
    np.testing.assert_array_equal(_grid(js, "importance"), imp["heads"])
    np.testing.assert_array_equal([[h["importance_ci"] for h in row] for row in js["heads"]],
                                  imp["heads_ci"])
    pat = json.loads(outs["pat"].read_text())["corpus"]
    assert pat["pairs"] > 0  # the scaled classifier: pairs whose counterfactual moves it
    np.testing.assert_array_equal(_grid(js, "patching"), pat["heads"])
    drift = json.loads(outs["drift"].read_text())
    np.testing.assert_array_equal(_grid(js, "cosine"), drift["cosine"])
    assert js["before"]["heads"][0][0]["used"] == "not measured"


def test_a_second_run_reads_every_study_back(atlas):
    assert "9 studies (9 computed, 0 read back)" in atlas["first"]
    assert atlas["again"].returncode == 0
    assert "9 studies (0 computed, 9 read back)" in atlas["again"].stdout
    assert atlas["json_again"]["heads"] == atlas["json"]["heads"]


def test_the_rules_and_the_verdict(atlas):
    js = atlas["json"]
    heads = [h for row in js["heads"] for h in row]
    v = js["verdict"]
    assert v["heads"] == 8 and sum(v["families"].values()) == 8
    assert v["used"]["yes"] + v["used"]["no"] == 8 and v["used"]["not measured"] == 0
    for h in heads:  # the flat keys are the facts' numbers, the role is the rules'
        assert h["sep"] == h["facts"]["noop"]["sep"]
        assert h["role"] == ("none" if not h["roles"] else h["roles"][0]
                             if len(h["roles"]) == 1 else "mixed")
        assert (h["disagreement"] is not None) == (h["name"] in " ".join(js["disagreements"]))
    assert js["reading"][0].startswith(f"{8 - v['families']['none']} of the 8 heads of ck")
    assert js["thresholds"]["noop"] == 0.5 and js["model"]["before"] == str(atlas["before"])


def test_bad_input_is_one_line(atlas, tmp_path):
    for args, said in ((["--model", str(tmp_path / "nothing")], "does not exist"),
                       (["--data", str(tmp_path / "none.txt")],
                        "--data names a file that does not exist"),
                       (["--carry", "2"], "--carry must be a number from 0 to 1"),
                       (["--contrast", "both"], "--contrast must be aspect or opinion")):
        done = run_cli("atlas", *args, "--out", tmp_path / "x.json", env=atlas["env"])
        err = done.stderr.strip()
        assert done.returncode == 2 and err.count("\n") == 0 and said in err, err


def test_the_pages_statements_about_their_top_heads_are_the_atlas_s(atlas):
    """One source of truth: every statement the pages' readings make about their top heads,
    on the data they open on, is the atlas's statement of that head (the same clause, the same
    numbers), and the heads they mark are the ones the atlas names."""
    from analysis.absa.readers import load_sample
    from analysis.aspects.causal import causal_check
    from analysis.aspects.heads import PAGE_SENTENCES, discover, kind_verdict
    from analysis.aspects.reading import causal_reading, margin_sentence
    from analysis.atlas import facts as F
    from analysis.atlas.run import Result
    from analysis.absa.tasks import build_examples
    from analysis.core.corpus import read_corpus
    from analysis.importance import importance_study
    from analysis.importance.evalset import load_classifier, load_eval_set
    from analysis.importance.links import aspect_heads, sep_heads
    from analysis.importance.reading import reading as importance_reading
    from analysis.noop import corpus_stats, noop_heads, positional_heads
    from analysis.patching.corpus import corpus_patching
    from analysis.patching.reading import corpus_reading

    result = Result.from_json(atlas["json"])
    heads = {(h["layer"], h["head"]): h for h in result.heads()}

    def said_of(layer, head, only):
        return F.head_statement(layer, head, heads[(layer, head)]["facts"], only=only)

    loaded, card = load_classifier(str(atlas["ck"]))
    # Aspect heads: the page's ranking (its default data) and its causal check's heads
    disc = discover(loaded, load_sample(), card["task"], card["pair_order"],
                    max_sentences=PAGE_SENTENCES)
    top = [(r["layer"], r["head"]) for r in disc.ranked["aspect"][:F.TOP_RANKED]]
    atlas_top = sorted((k for k, h in heads.items()
                        if h["facts"]["aspects"]["aspect"]["rank"] <= F.TOP_RANKED),
                       key=lambda k: heads[k]["facts"]["aspects"]["aspect"]["rank"])
    assert top == atlas_top
    v = kind_verdict(disc.ranked["aspect"], disc.baselines["aspect"])
    line = margin_sentence("aspect", v)
    best = heads[top[0]]
    assert re.search(rf"head {best['name']}\b", line)
    assert ("does clearly better" in line) == ("aspect" in best["roles"])
    examples = build_examples(load_eval_set(loaded, card, "sample").sentences, card["task"],
                              card["pair_order"])
    check = causal_check(loaded.model, loaded.tokenizer, examples, card["task"],
                         disc.ranked["aspect"], 3, loaded.n_layers, loaded.n_heads)
    names = ", ".join(F.head_name(*k) for k in atlas_top)
    assert f"best track aspect terms ({names})" in causal_reading(check, "aspect terms")[0]
    # Head importance: the heads it names, each as the atlas states it
    ev = load_eval_set(loaded, card, "sample", max_examples=40)
    imp = importance_study(loaded, ev)
    marks_a, marks_s = aspect_heads(loaded, ev), sep_heads(loaded, ev)
    assert marks_a == atlas_top
    assert marks_s == [k for k in marks_s if "[SEP] no-op" in heads[k]["roles"]]
    assert {k for k, h in heads.items() if "[SEP] no-op" in h["roles"]} <= set(marks_s) or \
        not marks_s  # the atlas's [SEP] heads are read on the No-op page's corpus
    lines = importance_reading(imp, marks_a, marks_s)
    def uniform(k):
        return F.head_statement(*k, {"importance": {
            "uniform": heads[k]["facts"]["importance"]["uniform"]}})

    hurts = next((x for x in lines if x.startswith("Removing these hurts most")), "")
    for l1, h1 in re.findall(r"head (\d+)-(\d+) \(", hurts):
        assert uniform((int(l1) - 1, int(h1) - 1)) in hurts
    marked = next(x for x in lines if x.startswith("The top-ranked aspect heads"))
    assert all(uniform(k) in marked for k in marks_a)
    # Causal patching: the corpus view's top heads, each the atlas's statement
    cr = corpus_patching(loaded, ev, importance=False, max_length=card["max_length"])
    said = " ".join(corpus_reading(cr))
    found = re.findall(r"head (\d+)-(\d+) \(patched", said)
    assert found
    for l1, h1 in found:
        assert said_of(int(l1) - 1, int(h1) - 1, ("patching",)) in said
    assert f"top heads ({', '.join(F.head_name(*k) for k in atlas_top)};" in said
    # No-op statistics: its tables' roles and positional heads are the atlas's
    stats = corpus_stats(loaded, read_corpus(atlas["corpus"]), norms=False)
    for row in noop_heads(stats, top=8) + positional_heads(stats):
        roles = heads[(row["layer"] - 1, row["head"] - 1)]["roles"]
        assert row["role"] == (", ".join(r for r in roles if F.family(r) in (
            "positional", "broad", "no-op")) or "none")
