"""The classifier and its labelled examples (analysis.importance.evalset): ABSA checkpoints
on their held-out sentences, labelled corpora, and one plain line for each bad input."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.absa.readers import load_sample
from analysis.core.errors import DataError, InputError
from analysis.importance.evalset import (absa_eval_set, load_classifier, load_eval_set)
from builders import one_line
from importance_util import LABELLED_CSV, cached_checkpoint, classifier_folder


def test_absa_set_takes_the_cards_task_and_held_out_sentences(tmp_path):
    loaded, card = load_classifier(str(cached_checkpoint("qa_m")))
    sample = load_sample()
    card = dict(card, heldout_ids=list(sample["id"][3:6]))
    ev = absa_eval_set(loaded, card, sample)
    assert ev.n_units == 3 and ev.n_examples == 15 and ev.task == "qa_m"
    assert "held-out" in ev.description
    assert ev.texts[0][1] == "what do you think of the price of it ?"
    assert ev.units.tolist() == [i // 5 for i in range(15)]
    enc = loaded.tokenizer(ev.texts[0][0], ev.texts[0][1], truncation=True, max_length=128)
    assert ev.features["input_ids"][0] == enc["input_ids"]
    capped = absa_eval_set(loaded, dict(card, heldout_ids=[]), sample, max_sentences=2)
    assert capped.n_units == 2 and "some may be training data" in capped.description


def test_labelled_corpus_maps_label_names_and_indices(tmp_path):
    folder = classifier_folder(tmp_path / "clf")
    loaded, card = load_classifier(str(folder))
    assert card is None
    data = tmp_path / "d.csv"
    data.write_text(LABELLED_CSV)
    ev = load_eval_set(loaded, None, str(data))
    assert ev.labels.tolist() == [2, 0, 1, 0, 2, 1]
    assert ev.scorer.metrics == ("accuracy",) and ev.n_units == 6
    assert ev.features["input_ids"][0][0] == loaded.tokenizer.cls_token_id


def test_bad_inputs_give_one_line(tmp_path, tiny_model_dir):
    with pytest.raises(InputError) as exc:  # a model with no task head
        load_classifier(str(tiny_model_dir("bert")))
    assert "no task head" in one_line(exc)
    folder = classifier_folder(tmp_path / "clf")
    loaded, _ = load_classifier(str(folder))
    data = tmp_path / "nolabel.csv"
    data.write_text("text\nthe food was great\nslow\n")
    with pytest.raises(DataError) as exc:  # data without labels
        load_eval_set(loaded, None, str(data))
    assert "no labels" in one_line(exc)
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\ngood,excellent\n")
    with pytest.raises(DataError) as exc:
        load_eval_set(loaded, None, str(bad))
    assert "'excellent' is not one of" in one_line(exc)
    with pytest.raises(InputError) as exc:  # 3 labels: not an ABSA classifier
        load_eval_set(loaded, None, "sample", task="qa_m")
    assert "was not trained for QA-M" in one_line(exc)
    ck, card = load_classifier(str(cached_checkpoint("qa_m")))
    with pytest.raises(InputError) as exc:  # a task the checkpoint was not trained for
        load_eval_set(ck, card, "sample", task="nli_b")
    assert "fine-tuned for QA-M, not NLI-B" in one_line(exc)
    aste = tmp_path / "x_triplets.txt"
    aste.write_text("The food was great .####[([1], [3], 'POS')]\n")
    with pytest.raises(DataError) as exc:  # ABSA data without category labels
        load_eval_set(ck, card, str(aste))
    assert "no sentence-level category" in one_line(exc)
    assert np.all(ck.model.config.num_labels == 5)
