"""Sentence-pair ABSA (Sun et al. 2019): templates, labels, metrics, fine-tuning a tiny model,
atomic checkpoints, head masking, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis import absa as A
from analysis.absa_data import load_sample, to_dataset
from analysis.attention import InputError
from analysis.errors import DataError


def one_sentence():
    return to_dataset([{
        "id": "1", "text": "The pasta was great but the waiter was rude.",
        "terms": [], "source": "json",
        "categories": [{"category": "food", "polarity": "positive"},
                       {"category": "service", "polarity": "negative"}]}])


def test_auxiliary_sentences_are_the_papers():
    assert A.auxiliary_sentence("qa_m", "service") == "what do you think of the service of it ?"
    assert A.auxiliary_sentence("nli_m", "anecdotes/miscellaneous") == "anecdotes"
    assert A.auxiliary_sentence("qa_b", "price", "negative") == \
        "the polarity of the aspect price is negative ."
    assert A.auxiliary_sentence("nli_b", "ambience", "none") == "none - ambience"
    with pytest.raises(InputError):
        A.auxiliary_sentence("qa_b", "price")
    with pytest.raises(InputError, match="Unknown task"):
        A.check_task("qa_x")


def test_m_task_examples_labels_and_pair_order():
    ex = A.build_examples(one_sentence(), "qa_m")
    assert [e.category for e in ex] == ["price", "anecdotes/miscellaneous", "food", "ambience",
                                        "service"]
    assert [A.LABELS[e.label] for e in ex] == ["none", "none", "positive", "none", "negative"]
    assert ex[2].text_a.startswith("The pasta") and ex[2].text_b == \
        "what do you think of the food of it ?"
    flipped = A.build_examples(one_sentence(), "qa_m", "aux-review")
    assert flipped[2].text_a == "what do you think of the food of it ?"
    assert flipped[2].review == ex[2].review


def test_b_task_examples_have_five_rows_per_aspect():
    ex = A.build_examples(one_sentence(), "nli_b")
    assert len(ex) == 25
    food = [e for e in ex if e.category == "food"]
    assert [e.text_a for e in food] == ["positive - food", "neutral - food", "negative - food",
                                        "conflict - food", "none - food"]
    assert [e.label for e in food] == [1, 0, 0, 0, 0]
    assert food[0].text_b.startswith("The pasta")  # B tasks: (aux, review)
    price = [e.label for e in ex if e.category == "price"]
    assert price == [0, 0, 0, 0, 1]


def test_data_without_categories_is_refused():
    ds = to_dataset([{"id": "1", "text": "Good food.", "terms": [], "categories": [],
                      "source": "aste"}])
    with pytest.raises(DataError, match="no sentence-level category"):
        A.build_examples(ds, "qa_m")


def test_aspect_prf_by_hand():
    N = A.NONE
    # sentence 1: gold {food, service}, predicted {food, price}; sentence 2: gold {ambience},
    # predicted {ambience}; sentence 3: no gold aspect -> skipped (its prediction too).
    y_true = [N, N, 0, N, 2,   N, N, N, 1, N,   N, N, N, N, N]
    y_pred = [0, N, 0, N, N,   N, N, N, 2, N,   0, 0, N, N, N]
    p, r, f = A.aspect_prf(y_true, y_pred)
    assert p == pytest.approx(100 * 2 / 3)
    assert r == pytest.approx(100 * 2 / 3)
    assert f == pytest.approx(100 * 2 / 3)


def test_sentiment_accuracies_by_hand():
    N = A.NONE
    y_true = [0, 2, 1, 3, N]
    scores = np.array([
        [.1, .1, .1, .1, .6],   # predicted none -> argmax of 4 = 0 (ties: first) -> right
        [.5, .0, .4, .0, .1],   # predicted positive, gold negative -> wrong
        [.1, .5, .2, .1, .1],   # neutral right
        [.1, .0, .0, .2, .7],   # none -> argmax of 4 = conflict -> right (4-way only)
        [.9, 0, 0, 0, .1],      # gold none: ignored
    ])
    m = A.metrics_from_scores(y_true, scores)
    assert m["acc_4way"] == pytest.approx(75.0)
    assert m["acc_3way"] == pytest.approx(100 * 2 / 3)
    assert m["acc_binary"] == pytest.approx(50.0)
    # binary: a neutral prediction falls back to the larger of positive and negative
    assert A.sentiment_accuracy([2], [1], np.array([[.2, .5, .3, 0, 0]]), 2) == 100.0


def test_b_task_scores_are_softmaxed_yes_probabilities():
    ex = A.build_examples(one_sentence(), "qa_b")
    probs = np.zeros((25, 2))
    probs[:, 1] = 0.1
    probs[2 * 5 + 0, 1] = 0.9  # food: positive row says yes
    gold, scores = A.pair_scores(ex, probs, "qa_b")
    assert gold == [4, 4, 0, 4, 2]
    assert scores.shape == (5, 5)
    np.testing.assert_allclose(scores.sum(1), 1.0)
    e = np.exp([0.9, 0.1, 0.1, 0.1, 0.1])
    np.testing.assert_allclose(scores[2], e / e.sum())
    assert scores[0].argmax() == 0  # all rows tie -> first


# ---------------------------------------------------------------------------------------------
# Tiny model: fine-tune, checkpoint, masking


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.models import load_model

    return load_model(str(tiny_model_dir("bert")))


def make_tiny_checkpoint(folder: Path, task: str = "qa_m", steps: int = 2) -> Path:
    """A small fine-tuned checkpoint (tiny BERT, default tokenizer) for page tests."""
    import torch
    from transformers import AutoModel, AutoTokenizer, BertConfig

    from analysis.models import LoadedModel, default_model_path

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=37, max_position_embeddings=130)
    model = AutoModel.from_config(cfg, attn_implementation="eager").eval()
    tok = AutoTokenizer.from_pretrained(default_model_path())
    loaded = LoadedModel("tiny", "tiny", tok, model, "bert", 2, 4, 0, 128, {})
    ds = load_sample().select(range(8))
    ex = A.build_examples(ds, task)
    res = A.fine_tune(loaded, ex, task, epochs=1, max_steps=steps, batch_size=8, lr=1e-3)
    card = A.make_card("tiny", task, A.default_pair_order(task), "sample[:8]", 0, 1, 128, res)
    return A.save_checkpoint(res.model, tok, folder, card)


def test_two_step_fine_tune_lowers_loss_and_leaves_base_untouched(tiny):
    before = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    ex = A.build_examples(load_sample().select(range(3)), "qa_m")
    res = A.fine_tune(tiny, ex, "qa_m", epochs=2, batch_size=len(ex), lr=1e-3, seed=0)
    assert len(res.losses) == 2
    assert res.losses[1] < res.losses[0]
    assert res.model is not tiny.model
    after = tiny.model.state_dict()
    assert all(torch_equal(before[k], after[k]) for k in before)
    # the classifier starts from the base encoder's weights
    ref = A.make_classifier(tiny, "qa_m")
    assert torch_equal(ref.bert.embeddings.word_embeddings.weight,
                       tiny.model.embeddings.word_embeddings.weight)


def test_epoch_end_sees_each_full_pass_in_eval_mode(tiny):
    ex = A.build_examples(load_sample().select(range(2)), "nli_m")  # 10 pairs
    seen = []
    res = A.fine_tune(tiny, ex, "nli_m", epochs=3, batch_size=4, lr=1e-3,
                      epoch_end=lambda k, m: seen.append((k, m.training)))
    assert [k for k, _ in seen] == [1, 2, 3]
    assert not any(training for _, training in seen)
    assert res.model.training is False
    assert len(res.losses) == 9  # ceil(10 / 4) steps a pass
    # a pass cut short by max_steps gets no call
    seen.clear()
    A.fine_tune(tiny, ex, "nli_m", epochs=3, batch_size=4, lr=1e-3, max_steps=4,
                epoch_end=lambda k, m: seen.append(k))
    assert seen == [1]


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b))


def test_checkpoint_round_trip_and_refusals(tiny, tmp_path):
    ex = A.build_examples(load_sample().select(range(3)), "nli_m")
    res = A.fine_tune(tiny, ex, "nli_m", epochs=1, batch_size=8, lr=1e-3)
    card = A.make_card(tiny.spec, "nli_m", "review-aux", "sample", 0, 1, 128, res,
                       {"aspect_f1": 12.5})
    out = A.save_checkpoint(res.model, tiny.tokenizer, tmp_path / "ckpt", card)
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no temp folder left
    loaded, card2 = A.load_checkpoint(out, task="nli_m")
    assert card2["task"] == "nli_m" and card2["metrics"] == {"aspect_f1": 12.5}
    assert card2["seed"] == 0 and card2["base_model"] == tiny.spec
    p1 = A.predict_probs(res.model, tiny.tokenizer, ex)
    p2 = A.predict_probs(loaded.model, loaded.tokenizer, ex)
    np.testing.assert_allclose(p1, p2, atol=1e-6)
    with pytest.raises(InputError, match="fine-tuned for NLI-M, not QA-B"):
        A.load_checkpoint(out, task="qa_b")
    with pytest.raises(InputError, match="not an ABSA checkpoint"):
        A.load_checkpoint(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="is not an ABSA checkpoint; choose a new folder"):
        A.save_checkpoint(res.model, tiny.tokenizer, other, card)
    # a crash while writing leaves neither a half-written folder nor a temp folder
    class Broken:
        def save_pretrained(self, path):
            (Path(path) / "partial").write_text("x")
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        A.save_checkpoint(res.model, Broken(), tmp_path / "new", card)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt", "other"]
    # a card with another architecture's head
    bad = json.loads((out / A.CARD_NAME).read_text())
    bad["task"] = "qa_b"
    (out / A.CARD_NAME).write_text(json.dumps(bad))
    with pytest.raises(InputError, match="classifier has 5 labels; QA-B needs 2"):
        A.load_checkpoint(out)


def test_masking_a_head_equals_zeroing_its_output_columns(tiny):
    import copy

    import torch

    clf = A.make_classifier(tiny, "qa_m", seed=1)
    ex = A.build_examples(load_sample().select(range(2)), "qa_m")
    mask = np.ones((2, 4), dtype=np.float32)
    mask[1, 2] = 0
    masked = A.predict_probs(clf, tiny.tokenizer, ex, head_mask=mask)
    ref = copy.deepcopy(clf)
    with torch.no_grad():
        ref.bert.encoder.layer[1].attention.output.dense.weight[:, 16:24] = 0
    np.testing.assert_allclose(masked, A.predict_probs(ref, tiny.tokenizer, ex), atol=1e-6)
    full = A.predict_probs(clf, tiny.tokenizer, ex)
    assert np.abs(full - masked).max() > 1e-6  # the hook was removed afterwards:
    np.testing.assert_allclose(A.predict_probs(clf, tiny.tokenizer, ex), full)
    with pytest.raises(InputError, match="head_mask must have shape"):
        A.predict_probs(clf, tiny.tokenizer, ex, head_mask=np.ones((3, 4)))


def test_a_head_mask_leaves_other_threads_forwards_alone(tiny):
    """Models are shared across Streamlit sessions (threads): one session's causal check must
    not mask another session's forward running meanwhile."""
    import threading

    clf = A.make_classifier(tiny, "qa_m", seed=1)
    ex = A.build_examples(load_sample().select(range(2)), "qa_m")
    full = A.predict_probs(clf, tiny.tokenizer, ex)
    mask = np.zeros((2, 4), dtype=np.float32)
    seen = {}
    with A.masked_heads(clf, mask):
        masked_here = A.predict_probs(clf, tiny.tokenizer, ex)
        t = threading.Thread(target=lambda: seen.update(
            other=A.predict_probs(clf, tiny.tokenizer, ex)))
        t.start()
        t.join()
    change = np.abs(full - masked_here).max()
    assert change > 1e-6  # masked in the thread that asked
    assert np.abs(seen["other"] - full).max() < change / 100  # untouched elsewhere


def test_cli_finetune_with_heldout_records_the_curve(tiny_model_dir, tmp_path, capsys):
    from analysis.cli import main

    out = tmp_path / "ck"
    rc = main(["finetune", "--data", "sample", "--task", "nli_m", "--model",
               str(tiny_model_dir("bert")), "--epochs", "2", "--heldout", "0.2",
               "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr()
    text = (out / A.CARD_NAME).read_text()
    card = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the card"))
    assert [c["epoch"] for c in card["curve"]] == [1, 2]
    assert card["curve"][-1]["aspect_f1"] == pytest.approx(card["metrics"]["aspect_f1"])
    assert "held-out after epoch 2: aspect F1" in printed.out + printed.err
    # the last point is what the checkpoint scores on the card's held-out sentences
    loaded, _ = A.load_checkpoint(out, task="nli_m")
    held = load_sample().filter(lambda r: r["id"] in set(card["heldout_ids"]))
    ref = A.evaluate(loaded.model, loaded.tokenizer, A.build_examples(held, "nli_m"), "nli_m")
    assert card["curve"][-1]["acc_4way"] == pytest.approx(ref["acc_4way"], abs=1e-9)


def test_card_is_strict_json_with_undefined_metrics_as_null(tiny, tmp_path):
    ex = A.build_examples(load_sample().select(range(2)), "nli_m")
    res = A.fine_tune(tiny, ex, "nli_m", epochs=1, batch_size=8, max_steps=1, lr=1e-3)
    card = A.make_card("tiny", "nli_m", "review-aux", "s", 0, 1, 128, res,
                       {"acc_binary": float("nan"), "aspect_f1": np.float64(12.5)},
                       curve=[{"epoch": 1, "acc_binary": float("inf")}])
    out = A.save_checkpoint(res.model, tiny.tokenizer, tmp_path / "ck", card)
    back = json.loads((out / A.CARD_NAME).read_text(), parse_constant=lambda c: pytest.fail(c))
    assert back["metrics"] == {"acc_binary": None, "aspect_f1": 12.5}
    assert back["curve"] == [{"epoch": 1, "acc_binary": None}]


def test_cli_finetune_evaluate(tiny_model_dir, tmp_path, capsys):
    from analysis.cli import main

    out = tmp_path / "ck"
    rc = main(["finetune", "--data", "sample", "--task", "qa_m", "--model",
               str(tiny_model_dir("bert")), "--epochs", "0.05", "--out", str(out)])
    assert rc == 0 and (out / A.CARD_NAME).is_file()
    res = tmp_path / "m.json"
    rc = main(["evaluate", "--model", str(out), "--data", "sample", "--task", "qa_m",
               "--out", str(res)])
    assert rc == 0
    m = json.loads(res.read_text())
    loaded, card = A.load_checkpoint(out, task="qa_m")
    ref = A.evaluate(loaded.model, loaded.tokenizer,
                     A.build_examples(load_sample(), "qa_m", card["pair_order"]), "qa_m")
    for key in ("aspect_precision", "aspect_recall", "aspect_f1", "acc_4way", "acc_3way",
                "acc_binary"):
        assert 0.0 <= m[key] <= 100.0
        assert m[key] == pytest.approx(ref[key], abs=1e-9)  # the library's numbers
    capsys.readouterr()
    assert main(["evaluate", "--model", str(out), "--data", "sample", "--task", "nli_b",
                 "--out", str(res)]) == 2
    assert "fine-tuned for QA-M, not NLI-B" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"sentences": [{"text": "x", "categories": [{"category": "parking", '
                   '"polarity": "positive"}]}]}')
    assert main(["finetune", "--data", str(bad), "--task", "qa_m", "--out",
                 str(tmp_path / "z")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: Sentence 0: unknown category 'parking'") and "\n" not in err
    assert not (tmp_path / "z").exists()


def test_cli_refuses_a_bad_out_folder_before_training(tmp_path, capsys, monkeypatch):
    from analysis.cli import main

    def no_training(*a, **k):
        raise AssertionError("trained although --out is unusable")

    monkeypatch.setattr(A, "fine_tune", no_training)
    taken = tmp_path / "notes"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep me")
    assert main(["finetune", "--data", "sample", "--task", "qa_m", "--out", str(taken)]) == 2
    err = capsys.readouterr().err.strip()
    assert "exists and is not an ABSA checkpoint" in err and "\n" not in err
    assert (taken / "mine.txt").read_text() == "keep me"


def test_cli_aspect_heads_refuses_another_task_than_the_checkpoints(tmp_path, capsys):
    from analysis.cli import main

    ck = make_tiny_checkpoint(tmp_path / "ck", "qa_m")
    rc = main(["aspect-heads", "--model", str(ck), "--data", "sample", "--task", "qa_b",
               "--causal", "--out", str(tmp_path / "h.json")])
    assert rc == 2
    assert "fine-tuned for QA-M, not QA-B" in capsys.readouterr().err
    assert not (tmp_path / "h.json").exists()


def test_cli_json_has_null_for_undefined_metrics(tmp_path):
    from analysis.cli.absa import _write

    out = tmp_path / "m.json"
    _write(out, {"acc_binary": float("nan"), "acc_4way": np.float64(50.0), "x": [np.inf, 1]})
    assert json.loads(out.read_text()) == {"acc_binary": None, "acc_4way": 50.0,
                                          "x": [None, 1]}
    assert "NaN" not in out.read_text()


@pytest.mark.parametrize("arch", ["roberta", "distilbert", "electra"])
def test_other_encoders_fine_tune_and_mask_heads(tiny_model_dir, arch):
    from analysis.models import load_model

    loaded = load_model(str(tiny_model_dir(arch)))
    ex = A.build_examples(load_sample().select(range(2)), "nli_m")
    res = A.fine_tune(loaded, ex, "nli_m", epochs=2, batch_size=len(ex), lr=1e-3)
    assert res.losses[1] < res.losses[0]
    mask = np.ones((loaded.n_layers, loaded.n_heads))
    mask[0, 0] = 0
    full = A.predict_probs(res.model, loaded.tokenizer, ex)
    masked = A.predict_probs(res.model, loaded.tokenizer, ex, head_mask=mask)
    assert np.abs(full - masked).max() > 1e-7
