"""Head importance of one example (analysis.importance.one): the batched changes equal a loop
that disables one head (or layer) at a time and runs the model; the gate gradient and the loss
changes equal the whole-set study's on a set of that one example; the reading says what the
numbers say; bad input is one plain line."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.errors import DataError, InputError
from analysis.core.forward import forward, forward_ablations
from analysis.importance import importance_study
from analysis.importance.ablate import padded_batches, single_ablations
from analysis.importance.evalset import load_classifier
from analysis.importance.one import (NO_INTERVAL, OneResult, encode_one, one_example_study,
                                     one_reading, top_heads, whole_set_sentence)
from analysis.importance.scoring import softmax
from analysis.importance.study import ONE, OneInputs
from importance_util import cached_checkpoint, classifier_folder

REVIEW = "the food was great but the service was slow"


@pytest.fixture(scope="module")
def absa():
    return load_classifier(str(cached_checkpoint("nli_m")))


def _brute(loaded, one, method):
    """Probabilities [A, C] of the example with each ablation of single_ablations run alone:
    mask through the model's own head_mask, uniform one ablation per forward."""
    import torch

    (idx, inputs), = padded_batches(loaded.tokenizer, one.ev, 1)
    L, H = loaded.n_layers, loaded.n_heads
    out = []
    for dis in single_ablations(L, H):
        if method == "mask":
            mask = torch.from_numpy((~dis).astype(np.float32))
            logits = forward(loaded.model, inputs=inputs, attentions=False,
                             head_mask=mask).output.logits.float().numpy()[0]
        else:
            logits = forward_ablations(loaded.model, inputs, dis[None], "uniform")[0, 0]
        out.append(softmax(logits))
    return np.array(out)


@pytest.mark.parametrize("method", ["mask", "uniform"])
def test_changes_equal_one_head_disabled_at_a_time(absa, method):
    loaded, card = absa
    one = encode_one(loaded, card, REVIEW, None, "negative", "service")
    assert one.ev.texts == [(REVIEW, "service")]  # NLI-M: the review, then the aspect word
    r = one_example_study(loaded, one, method=method)
    p = _brute(loaded, one, method)
    L, H = 2, 4
    g = 2  # negative
    k = int(p[0].argmax())
    assert r.gold == g and r.predicted == k
    assert np.abs(r.probabilities - p[0]).max() < 1e-5
    assert r.loss == pytest.approx(-np.log(p[0, g]), abs=1e-5)
    heads, layers = p[1:1 + L * H], p[1 + L * H:]
    assert np.abs(r.heads["gold_probability"].ravel() - (heads[:, g] - p[0, g])).max() < 1e-5
    assert np.abs(r.heads["predicted_probability"].ravel() - (heads[:, k] - p[0, k])).max() \
        < 1e-5
    assert np.abs(r.heads["loss"].ravel() - (np.log(p[0, g]) - np.log(heads[:, g]))).max() \
        < 1e-4
    assert (r.heads["flips"].ravel() == (heads.argmax(1) != k)).all()
    assert (r.heads["answer"].ravel() == heads.argmax(1)).all()
    assert np.abs(r.layers["gold_probability"] - (layers[:, g] - p[0, g])).max() < 1e-5
    assert (r.layers["flips"] == (layers.argmax(1) != k)).all()
    # disabling a head changes something (the test is not vacuous)
    assert np.abs(r.heads["gold_probability"]).max() > 1e-4


def test_gradient_and_loss_equal_the_whole_set_study_of_that_one_example(absa):
    loaded, card = absa
    one = encode_one(loaded, card, REVIEW, None, "positive", "food")
    r = one_example_study(loaded, one, method="mask")
    whole = importance_study(loaded, one.ev, method="mask", metric="loss", n_boot=10)
    assert np.allclose(r.gradient_raw, whole.gradient_raw, rtol=1e-6, atol=1e-12)
    assert r.gradient_raw.max() > 0
    assert np.allclose(r.heads["loss"], whole.heads["loss"], atol=1e-9)
    assert np.allclose(r.layers["loss"], whole.layers["loss"], atol=1e-9)
    assert whole.intact["loss"] == pytest.approx(r.loss)


def test_a_text_and_pair_with_a_label_name_and_the_study_interface(tmp_path):
    folder = classifier_folder(tmp_path / "clf")
    loaded, card = load_classifier(str(folder))
    one = encode_one(loaded, card, "the soup was cold", "was it good?", "NEG")
    assert (one.label, one.classes, one.gold) == ("neg", ("neg", "neu", "pos"), 0)
    via = ONE.run(OneInputs(str(folder), "the soup was cold", "was it good?", "0", None,
                            "mask"))
    direct = one_example_study(loaded, one, method="mask")
    for m in ("gold_probability", "predicted_probability", "loss"):
        assert np.allclose(via.heads[m], direct.heads[m], atol=1e-9)
    j = via.to_json()
    assert j["intervals"] is None and j["reading"][-1] == NO_INTERVAL
    assert np.shape(j["heads"]["loss"]) == (2, 4) and np.shape(j["layers"]["flips"]) == (2,)
    assert OneResult.from_json(j).to_json() == j


def _made(probs, gold_change, flips_to=None):
    """A hand-made result of 1 layer x 3 heads over classes a, b."""
    L, H = 1, 3
    ch = np.asarray(gold_change, dtype=float).reshape(L, H)
    p = np.asarray(probs, dtype=float)
    answer = np.full((L, H), int(p.argmax()))
    if flips_to is not None:
        answer.flat[flips_to] = 1 - int(p.argmax())
    heads = {"gold_probability": ch, "predicted_probability": ch, "loss": -ch,
             "flips": answer != p.argmax(), "answer": answer}
    layers = {"gold_probability": np.array([-0.3]), "predicted_probability": np.array([-0.3]),
              "loss": np.array([0.5]), "flips": np.array([True]), "answer": np.array([1])}
    return OneResult("m", "t", None, None, "a", ("a", "b"), "mask", p, 0.4, heads, layers,
                     np.array([[0.1, 0.3, 0.2]]))


def test_the_reading_names_the_heads_the_flips_and_the_missing_interval():
    r = _made([0.55, 0.45], [-0.02, -0.08, 0.01], flips_to=1)
    assert top_heads(r) == [(0, 1, pytest.approx(-0.08)), (0, 0, pytest.approx(-0.02))]
    lines = one_reading(r)
    assert lines[0].startswith("The intact model answers a (55%), which is right")
    assert "head 1-2 (-8.0 points, to 47%); head 1-1 (-2.0 points, to 53%)." in lines[1]
    assert lines[2].startswith("1 single head flips the answer when removed: head 1-2 (to b)")
    assert "leads the next class by 10.0 points" in lines[2]
    assert lines[3] == ("Switching off a whole layer: layer 1 lowers the gold label's probability "
                        "most (-30.0 points); 1 of 1 layers flips the answer.")
    assert "rank head 1-2 first" in lines[4]
    assert lines[-1] == NO_INTERVAL
    calm = one_reading(_made([0.9, 0.1], [0.01, 0.0, 0.02]))
    assert calm[1] == "No single head's removal lowers the gold label's probability."
    assert calm[2].startswith("No single head flips the answer")


@pytest.mark.parametrize("case, kind, words", [
    ("empty", InputError, "The text is empty"),
    ("no_label", InputError, "gold label"),
    ("bad_label", DataError, "is not one of the aspect labels"),
    ("bad_aspect", InputError, "Unknown aspect"),
    ("aspect_and_pair", InputError, "not both"),
])
def test_bad_input_is_refused(absa, case, kind, words):
    loaded, card = absa
    args = {"empty": ("  ", None, "positive", "food"),
            "no_label": (REVIEW, None, "", "food"),
            "bad_label": (REVIEW, None, "great", "food"),
            "bad_aspect": (REVIEW, None, "positive", "decor"),
            "aspect_and_pair": (REVIEW, "food", "positive", "food")}[case]
    with pytest.raises(kind, match=words):
        encode_one(loaded, card, *args)


def test_labels_and_aspects_the_classifier_cannot_take(tmp_path):
    folder = classifier_folder(tmp_path / "clf")
    loaded, card = load_classifier(str(folder))
    with pytest.raises(DataError, match="not one of clf's labels"):
        encode_one(loaded, card, "fine", None, "positive")
    with pytest.raises(InputError, match="no ABSA card"):
        encode_one(loaded, card, "fine", None, "neg", "food")
    qa_b, card_b = load_classifier(str(cached_checkpoint("qa_b")))
    with pytest.raises(InputError, match="five yes/no inputs"):
        encode_one(qa_b, card_b, "fine", None, "positive", "food")


def test_the_reading_compares_with_the_whole_set_when_one_is_at_hand():
    from types import SimpleNamespace

    r = _made([0.55, 0.45], [-0.02, -0.08, 0.01])  # loss changes 0.02, 0.08, -0.01
    whole = SimpleNamespace(heads={"loss": np.array([[0.01, 0.03, 0.02]])}, method="mask",
                            shape=(1, 3), description="the 33 held-out sentences")
    line = whole_set_sentence(r, whole)
    assert line.startswith("Against the whole set (the 33 held-out sentences), where the mean "
                           "loss is measured: Spearman 0.50 between")
    assert "costliest head, 1-2, is also among the set's five costliest (1-2, 1-3, 1-1)" in line
    assert one_reading(r, whole)[-2] == line and one_reading(r)[-2] != line
    assert whole_set_sentence(r, SimpleNamespace(**{**vars(whole), "method": "uniform"})) \
        is None
