"""Counterfactuals over the set and edit-and-compare: the suggestions are Causal patching's (so a
flip opens there on the same pair), the word swap is hand-checked, the flip rates count the
answers that changed, an edit marks its changed words and is answered as the table's rows;
the shipped example is read back only under its recipe; the CLI writes the library's numbers
and refuses bad input in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.patching.counterfactuals import opinion_pool, suggest
from analysis.core import example as E
from analysis.predictions.data import from_eval_set, load_labelled
from analysis.predictions.edit import changed_words, compare_edit
from analysis.predictions.predict import predict, predict_inputs
from analysis.predictions.result import Result
from analysis.predictions.robustness import kinds_for, robustness, word_swaps
from analysis.predictions.run import Inputs, Models, run
from analysis.predictions.slices import slices
from builders import run_cli
from importance_util import LABELLED_CSV, cached_checkpoint, classifier_folder, tiny_absa


@pytest.fixture(scope="module")
def absa():
    loaded, card, ev = tiny_absa("qa_m", 8)
    return loaded, card, from_eval_set(ev, loaded, 128)


def test_word_swaps_and_changed_words_by_hand():
    assert word_swaps("The food was Great, the staff RUDE and slow.") == [
        ("The food was Awful, the staff RUDE and slow.", "'Great' replaced by 'awful'"),
        ("The food was Great, the staff FRIENDLY and slow.", "'RUDE' replaced by 'friendly'"),
        ("The food was Great, the staff RUDE and fast.", "'slow' replaced by 'fast'")]
    assert word_swaps("nothing to see") == []
    assert changed_words("the food was great".split(), "the food was not awful".split()) == (
        {3}, {3, 4})
    assert changed_words(None, None) == (set(), set())


def test_absa_counterfactuals_are_causal_patchings_and_flips_count(absa):
    loaded, card, data = absa
    assert kinds_for(data) == ("aspect", "opinion", "swap")
    answers = predict(loaded, data)
    cuts = slices(data.gold, data.classes, data.tokens, data.categories)
    rob = robustness(loaded, data, answers.predictions, cuts)
    sentences = data.ev.sentences.to_list()
    pool = opinion_pool(sentences)
    for kind in ("aspect", "opinion"):
        rows = rob.rows[kind].tolist()
        assert rows, kind
        for j, k in enumerate(rows[:6]):
            ex = data.ev.scorer.examples[k]
            first = suggest(loaded.tokenizer, sentences[int(data.sentence[k])], ex, "qa_m",
                            pool, 128)[kind][0]
            assert rob.counterfactuals[kind][j] == (first.text, first.pair, first.note)
        cf = rob.counterfactuals[kind]
        probs = predict_inputs(loaded, data, [t for t, _, _ in cf], [p for _, p, _ in cf])
        flipped = probs.argmax(1) != answers.predictions[rob.rows[kind]]
        assert rob.flipped[kind].tolist() == flipped.tolist()
        assert rob.rates[kind]["all"]["value"] == pytest.approx(100 * flipped.mean())
        assert rob.rates[kind]["all"]["n"] == len(rows)
        food = [r for r in rows if data.categories[r] == "food"]
        assert rob.rates[kind]["aspect:food"]["n"] == len(food)


def test_an_edit_marks_its_words_and_is_answered_as_a_row(tmp_path):
    folder = classifier_folder(tmp_path / "clf")
    (tmp_path / "d.csv").write_text(LABELLED_CSV)
    from analysis.importance.evalset import load_classifier

    loaded, _ = load_classifier(str(folder))
    data = load_labelled(loaded, None, str(tmp_path / "d.csv"))
    edit = compare_edit(loaded, data, "the food was great, really", None,
                        "the food was awful, really", None, "grad_input")
    before, after = edit.before, edit.after
    assert after.attribution.words[1:-1] == ["the", "food", "was", "awful", ",", "really"]
    assert after.changed[1:-1] == [False, False, False, True, False, False]
    assert before.changed[4] and sum(before.changed) == 1
    probs = predict_inputs(loaded, data, ["the food was awful, really"], [None])[0]
    assert np.allclose(after.probabilities, probs)
    assert after.attribution.methods["grad_input"].input.shape == (8,)
    assert edit.flipped == (before.prediction != after.prediction)


def test_the_example_is_read_back_only_under_its_recipe(absa, tmp_path, monkeypatch):
    """The result's JSON through the core's precomputed record (analysis.core.example) and
    back; the shipped file is small and of the current recipe."""
    loaded, card, data = absa
    result = run(Inputs(data, robustness=False, n_boot=50), Models(loaded, card))
    out = E.write_precomputed("predictions", result.to_json(), "the command", "today", tmp_path)
    doc = json.loads(out.read_text())
    assert doc["command"] == "the command" and doc["model"] == "example"
    back = Result.from_json(E.precomputed("predictions", tmp_path)["result"])
    assert (back.predictions == result.predictions).all()
    shipped = E.precomputed_path("predictions")
    assert shipped.stat().st_size < 500_000 and E.precomputed("predictions") is not None
    assert len(Result.from_json(E.precomputed("predictions")["result"]).gold) == 165
    monkeypatch.setattr(E, "recipe_dict", lambda: {"version": -1})
    assert E.precomputed("predictions", tmp_path) is None


def test_cli_writes_the_librarys_numbers_and_refuses_bad_input(tmp_path):
    ck = cached_checkpoint("qa_m")
    out = tmp_path / "p.json"
    got = run_cli("predictions", "--model", ck, "--data", "sample", "--max-examples", "4",
                  "--out", out)
    assert got.returncode == 0, got.stderr
    doc = json.loads(out.read_text())
    from analysis.importance.evalset import load_classifier

    loaded, card = load_classifier(str(ck))
    data = load_labelled(loaded, card, "sample", max_examples=4)
    ref = run(Inputs(data), Models(loaded, card)).to_json()
    assert doc["metrics"] == ref["metrics"] and doc["robustness"] == ref["robustness"]
    assert [r["prediction"] for r in doc["rows"]] == [r["prediction"] for r in ref["rows"]]
    assert "wrote" in got.stdout and "20 examples" in got.stdout
    for args, says in (
            (["--data", tmp_path / "none.csv"], "File not found"),
            (["--data", "sample", "--max-examples", "3", "--precomputed"],
             "--precomputed writes the example's own"),
            (["--data", "hf:owner/surely-absent-dataset"], "Could not load the dataset"),
            (["--data", "sample", "--compare", tmp_path], "holds no model")):
        bad = run_cli("predictions", "--model", ck, *args, "--out", tmp_path / "x.json")
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
        assert says in bad.stderr, bad.stderr
