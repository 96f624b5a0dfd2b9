"""The predictions study on tiny classifiers: the answers are the model's own (batched or one at
a time, as the Aspect heads page evaluates), the whole set's metrics are the paper's, two models
are compared row by row, the result's JSON round-trips, and the shipped example is read back
only under its recipe."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.absa.finetune import evaluate, predict_probs
from analysis.core.encoding import encode
from analysis.core.errors import DataError
from analysis.core.forward import forward
from analysis.predictions.data import from_eval_set, load_labelled
from analysis.predictions.predict import predict, second_rows
from analysis.predictions.result import KEYS, SCHEMA, Result
from analysis.predictions.run import Inputs, Models, run
from builders import one_line
from importance_util import LABELLED_CSV, classifier_folder, tiny_absa, tiny_classifier


@pytest.fixture(scope="module")
def absa():
    loaded, card, ev = tiny_absa("qa_m", 8)
    return loaded, card, from_eval_set(ev, loaded, 128)


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pred")
    data = folder / "d.csv"
    data.write_text(LABELLED_CSV)
    from analysis.importance.evalset import load_classifier

    loaded, _ = load_classifier(str(classifier_folder(folder / "clf")))
    return loaded, load_labelled(loaded, None, str(data)), folder


def test_absa_answers_are_the_aspect_heads_evaluation(absa):
    """Batched answers = one input at a time = the Aspect heads page's predict_probs; the whole
    set's aspect F1, 4-way and 3-way accuracy = its evaluate()."""
    loaded, card, data = absa
    assert data.n == 40 and data.absa and data.categories[:2] == ["price",
                                                                   "anecdotes/miscellaneous"]
    got = predict(loaded, data, batch_size=7)
    examples = data.ev.scorer.examples
    ref = predict_probs(loaded.model, loaded.tokenizer, examples, max_length=128)
    assert np.allclose(got.scores, ref, atol=1e-6)
    k = 5
    one = loaded.tokenizer(examples[k].text_a, examples[k].text_b, return_tensors="pt")
    logits = forward(loaded.model, inputs=dict(one), attentions=False).output.logits
    assert np.allclose(got.scores[k], logits.softmax(-1)[0].numpy(), atol=1e-6)
    result = run(Inputs(data, robustness=False, n_boot=100), Models(loaded, card))
    paper = evaluate(loaded.model, loaded.tokenizer, examples, "qa_m", max_length=128)
    for m in ("aspect_f1", "acc_4way", "acc_3way"):
        assert result.metrics["all"][m]["value"] == pytest.approx(paper[m]), m
    assert result.confusion.sum() == 40
    assert set(result.metrics) >= {"all", "aspect:food", "label:none"}


def test_new_inputs_are_encoded_as_the_data_was(labelled):
    """Counterfactuals and edits are tokenised in one call per kind of input: the ids of the
    data's own per-example encoding (invisible characters out, pairs, truncation)."""
    from analysis.core.corpus.table import make_dataset
    from analysis.importance.evalset import labelled_eval_set
    from analysis.predictions.predict import encode_inputs

    loaded, data, _ = labelled
    texts = ["the food\u200b was great", "bad", "a " * 200 + "end", "fine"]
    pairs = [None, "service", "x " * 100, None]
    got, lengths = encode_inputs(loaded, data, texts, pairs)
    ref = labelled_eval_set(loaded, make_dataset(texts, pairs), ["neg"] * 4)
    assert got == ref.features and lengths == ref.lengths


def test_labelled_data_and_a_second_model(labelled, tmp_path):
    loaded, data, folder = labelled
    assert data.classes == ("neg", "neu", "pos") and data.gold.tolist() == [2, 0, 1, 0, 2, 1]
    other = tmp_path / "other"
    model, tok = tiny_classifier(seed=1)
    model.config.id2label = {0: "POS", 1: "neg", 2: "neu"}  # the same labels, another order
    model.save_pretrained(other)
    tok.save_pretrained(other)
    from analysis.importance.evalset import load_classifier

    loaded_b, _ = load_classifier(str(other))
    result = run(Inputs(data, n_boot=200), Models(loaded, None, loaded_b, None))
    a, b = result.predictions, result.predictions_b
    logits_b = forward(loaded_b.model, loaded_b.tokenizer,
                       [encode(loaded_b.tokenizer, "the food was great")],
                       attentions=False).output.logits[0]
    assert b[0] == [2, 0, 1][int(logits_b.argmax())]  # its POS, neg, neu are our 2, 0, 1
    assert [f["row"] for f in result.flips] == np.flatnonzero(a != b).tolist()
    for f in result.flips:
        g = data.classes.index(f["label"])
        assert f["change"] == ("fixed" if b[f["row"]] == g else "broken" if a[f["row"]] == g
                               else "both wrong")
    ch = result.changes["all"]["accuracy"]
    assert ch["change"] == pytest.approx(result.metrics_b["all"]["accuracy"]["value"]
                                         - result.metrics["all"]["accuracy"]["value"])
    assert list(result.robustness) == ["swap"]
    model.config.id2label = {0: "bad", 1: "neg", 2: "neu"}
    model.save_pretrained(other)
    with pytest.raises(DataError) as exc:
        second_rows(load_classifier(str(other))[0], None, data)
    assert "no label 'pos'" in one_line(exc)


def test_the_json_round_trips_strictly(absa):
    loaded, card, data = absa
    result = run(Inputs(data, n_boot=100), Models(loaded, card, loaded, card))
    text = json.dumps(result.to_json(), allow_nan=False)
    doc = json.loads(text)
    assert tuple(doc) == KEYS == SCHEMA.names
    assert doc["flips"] == [] and doc["changes"]["all"]["accuracy"]["change"] == 0.0
    row = doc["rows"][3]
    assert set(row) >= {"text", "pair", "label", "prediction", "probabilities", "loss",
                        "review", "aspect", "prediction_b"}
    back = Result.from_json(doc)
    assert (back.predictions == result.predictions).all()
    assert np.allclose(back.scores, result.scores, atol=1e-6)
    assert back.metrics["aspect:food"]["acc_4way"] == pytest.approx(
        result.metrics["aspect:food"]["acc_4way"], nan_ok=True)
    assert back.robustness["opinion"]["flipped"].tolist() == \
        result.robustness["opinion"]["flipped"].tolist()
    # the page measures a visitor's slice from the rows it has: the same numbers
    assert np.allclose(back.counts(), result.counts(), atol=1e-5)


def test_b_task_rows_are_aspects_with_five_way_scores():
    from analysis.absa.tasks import pair_scores
    from analysis.importance.scoring import softmax

    loaded, card, ev = tiny_absa("qa_b", 4)
    data = from_eval_set(ev, loaded, 128)
    assert data.n == 20 and data.per_row == 5 and data.pairs[2] == "food"
    got = predict(loaded, data)
    logits = forward(loaded.model, inputs=dict(loaded.tokenizer(
        [e.text_a for e in ev.scorer.examples], [e.text_b for e in ev.scorer.examples],
        padding=True, return_tensors="pt")), attentions=False).output.logits.numpy()
    _, ref = pair_scores(ev.scorer.examples, softmax(logits), "qa_b")
    assert np.allclose(got.scores, ref, atol=1e-5)
    assert np.allclose(got.losses, -np.log(ref[np.arange(20), data.gold]), atol=1e-5)


def test_a_hugging_face_dataset_with_its_labels(labelled, tmp_path):
    """A local dataset folder (as the hub's cache holds them): the label column comes along
    with the kept rows (blank texts skipped with their labels), class-label names or values,
    and the rows are answered as a labelled file's."""
    import datasets

    from analysis.core.corpus import read_hf_dataset
    from analysis.predictions.data import hf_labelled

    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "test.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"sentence": "the food was great", "stars": "pos"}, {"sentence": "", "stars": "neg"},
        {"sentence": "awful", "stars": "neg"}, {"sentence": "it was ok", "stars": "1"}]))
    ds = read_hf_dataset(str(folder), "test", "sentence", label_column="stars")
    assert ds["text"] == ["the food was great", "awful", "it was ok"]
    assert ds["label"] == ["pos", "neg", "1"]
    loaded, _, _ = labelled
    rows = hf_labelled(loaded, str(folder), "test", "sentence", label_column="stars")
    assert rows.gold.tolist() == [2, 0, 1] and rows.texts[1] == "awful"
    named = tmp_path / "named"
    named.mkdir()
    datasets.Dataset.from_dict(
        {"text": ["good", "bad"], "label": [1, 0]},
        features=datasets.Features({"text": datasets.Value("string"),
                                    "label": datasets.ClassLabel(names=["neg", "pos"])})
    ).to_parquet(str(named / "test.parquet"))
    got = read_hf_dataset(str(named), "test", "text", label_column="label")
    assert got["label"] == ["pos", "neg"]  # a class label by its name
