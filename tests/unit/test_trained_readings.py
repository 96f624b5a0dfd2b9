"""What a fine-tune trained (analysis.core.cards) and the pre/post readings that say so (Drift,
Syntax before/after, Representations' change, Head importance, the report's provenance), on
planted cards: a frozen recipe (top 2 of 6 layers), the whole model, and no card at all."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from analysis.core.cards import CONFIG_KEY, span, trained_layers, trained_of, training_record

FROZEN = {"kind": "absa-sentence-pair", "task": "nli_m", "frozen_layers": 4,
          "example_recipe": {"trained_layers": 2}}  # an issue-22 example's card
WHOLE = {"kind": "absa-sentence-pair", "task": "nli_m",
         "trained": training_record(0, 6)}  # an issue-29 card
OLD_WHOLE = {"kind": "absa-sentence-pair", "task": "nli_m"}  # a card before issue 22


def test_cards_read_as_all_these_or_unknown():
    f = trained_layers(FROZEN, 6)
    assert (f.kind, f.layers, f.frozen, f.embeddings) == ("some", (5, 6), (1, 2, 3, 4), False)
    assert f.is_frozen(0) and f.is_frozen(4) and not f.is_frozen(5)
    assert f.words() == ("trained layers: 5-6 of 6; the embeddings and layers 1-4 were frozen "
                         "by the recipe")
    w = trained_layers(WHOLE, 6)
    assert (w.kind, w.layers, w.frozen, w.embeddings) == ("all", (1, 2, 3, 4, 5, 6), (), True)
    assert w.words() == "trained layers: all 6 (embeddings included)"
    assert trained_layers(OLD_WHOLE, 6).kind == "all"
    # the recipe alone (no frozen_layers key) says the same as the key
    assert trained_layers({"example_recipe": {"trained_layers": 2}}, 6).frozen == (1, 2, 3, 4)
    u = trained_layers(None, 6)
    assert (u.kind, u.frozen, u.is_frozen(0)) == ("unknown", (), False)
    assert u.words() == "what was trained is unknown (the model has no fine-tuning card)"
    assert trained_layers({"frozen_layers": 9}, 6).kind == "unknown"  # does not fit the model
    assert trained_layers({"frozen_layers": "4"}, 6).kind == "unknown"
    assert trained_layers({"some": "card"}, 6).kind == "unknown"
    assert training_record(4, 6, True) == {"frozen_layers": 4, "n_layers": 6,
                                           "embeddings_trained": False,
                                           "word_embeddings_trained": False}
    assert span([1, 2, 3, 4]) == "1-4" and span([2, 4, 5]) == "2, 4-5" and span([6]) == "6"


def test_trained_of_reads_the_config_record_then_the_folder_card(tmp_path):
    class Config:
        pass

    class Model:
        config = Config()

    class Loaded:
        spec, n_layers, model = str(tmp_path), 6, Model()

    assert trained_of(Loaded()).kind == "unknown"  # no record, no card
    (tmp_path / "absa_card.json").write_text(json.dumps(FROZEN))
    assert trained_of(Loaded()).frozen == (1, 2, 3, 4)  # the folder's card
    setattr(Loaded.model.config, CONFIG_KEY, training_record(0, 6))
    assert trained_of(Loaded()).kind == "all"  # the record saved with the weights wins
    assert trained_of(Loaded(), card=FROZEN).kind == "all"


def test_the_example_spec_reads_the_cached_examples_card(tmp_path, monkeypatch):
    from analysis.core.cards import read_card_file
    from analysis.core.example import CACHE_ENV, FOLDER

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert read_card_file("example") is None
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / "absa_card.json").write_text(json.dumps(FROZEN))
    assert read_card_file("example") == FROZEN
    assert read_card_file("default") is None and read_card_file("org/some-hub-id") is None


# -- Drift -------------------------------------------------------------------------------------


def _drift(frozen_cos=1.0):
    """6 layers x 2 heads: layers 1-4 unchanged (cosine ``frozen_cos``), layer 6 changed more
    than layer 5; 10 examples with a small spread."""
    cos = np.full((6, 2), frozen_cos)
    cos[4] = [0.90, 0.88]
    cos[5] = [0.70, 0.60]
    rng = np.random.default_rng(0)
    ex = cos[None] + rng.normal(0, 0.01, (10, 6, 2))
    ex -= ex.mean(0) - cos  # whose mean is exactly ``cos``
    cka = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.7])
    return cos, cka, np.zeros((6, 2)), np.zeros((6, 2)), ex


def test_drift_reading_with_a_frozen_card_calls_no_frozen_layer_a_finding():
    from analysis.drift.reading import drift_reading

    cos, cka, vb, va, ex = _drift()
    lines = drift_reading(cos, cka, vb, va, cosine_examples=ex,
                          trained=trained_layers(FROZEN, 6))
    assert lines[0] == ("The embeddings and layers 1-4 were frozen by the recipe (only layers "
                        "5-6 were trained), so their mean head cosine of 1.00 is not a finding.")
    assert lines[1].startswith("Among the trained layers, layer 6 changed most (mean head "
                               "cosine 0.650")
    assert "and layer 5 least (0.890" in lines[1]
    assert "layer 1 " not in lines[1] and "layers 1" not in lines[1]
    assert lines[2] == ("The most changed heads of the trained layers are 6-2 (cosine 0.600), "
                        "6-1 (cosine 0.700), 5-2 (cosine 0.880).")


def test_drift_reading_names_the_layers_from_the_numbers_not_the_recipe():
    """A frozen recipe whose numbers say layer 5 changed more than 6: the reading says 5."""
    from analysis.drift.reading import drift_reading

    cos, cka, vb, va, ex = _drift()
    cos[[4, 5]] = cos[[5, 4]]
    ex[:, [4, 5]] = ex[:, [5, 4]]
    lines = drift_reading(cos, cka, vb, va, cosine_examples=ex,
                          trained=trained_layers(FROZEN, 6))
    assert lines[1].startswith("Among the trained layers, layer 5 changed most")
    assert "earlier layers changed more than later ones" in lines[1]


def test_drift_reading_flags_a_frozen_layer_that_moved():
    from analysis.drift.reading import drift_reading

    cos, cka, vb, va, ex = _drift(frozen_cos=0.95)
    (first, *_) = drift_reading(cos, cka, vb, va, cosine_examples=ex,
                                trained=trained_layers(FROZEN, 6))
    assert first.endswith("so their mean head cosine of 0.95 is not a finding; yet it is below "
                          "1 (0.950): the frozen layers' maps moved, so the card may not "
                          "describe these weights.")


def test_drift_reading_whole_and_unknown():
    from analysis.drift.reading import drift_reading

    cos, cka, vb, va, ex = _drift(frozen_cos=0.97)
    whole = drift_reading(cos, cka, vb, va, cosine_examples=ex, trained=trained_layers(WHOLE, 6))
    assert whole[0] == ("Its card says every layer was trained (trained layers: all 6 "
                        "(embeddings included)), so every layer's change below is a finding.")
    assert whole[1].startswith("Layer 6 changed most (mean head cosine 0.650")
    assert "and layer 4 least (0.970" in whole[1]  # every layer is read (1-4 tie)
    assert "later layers changed more than earlier ones" in whole[1]
    unknown = drift_reading(cos, cka, vb, va, cosine_examples=ex,
                            trained=trained_layers(None, 6))
    assert unknown[0].startswith("What was trained is unknown (the after model has no "
                                 "fine-tuning card)")
    assert unknown[1:] == whole[1:]
    assert drift_reading(cos, cka, vb, va, cosine_examples=ex) == whole[1:]  # no card asked


# -- Head importance ---------------------------------------------------------------------------


def _importance(worst_layer: int):
    """A planted 2-layer x 3-head result whose costliest head is in ``worst_layer`` (0-based)."""
    from analysis.importance.run import ImportanceResult

    ch = np.zeros((2, 3))
    ch[worst_layer, 2] = -8.0
    ci = np.stack([ch - 1.0, ch + 1.0], -1)
    loss = -ch / 100
    return ImportanceResult(
        "accuracy", "mask", ("accuracy", "loss"), "the 40 labelled examples of the data", 40,
        40, {"accuracy": 80.0, "loss": 0.5}, {"accuracy": ch, "loss": loss},
        {"accuracy": ci, "loss": np.stack([loss - 0.01, loss + 0.01], -1)},
        {"accuracy": np.array([-1.0, -12.0]), "loss": np.array([0.0, 0.2])},
        {"accuracy": np.array([[-2.5, 0.5], [-14.0, -10.0]]),
         "loss": np.array([[-0.01, 0.01], [0.15, 0.25]])},
        np.ones((2, 3)), np.ones((2, 3)) / np.sqrt(3), {"accuracy": 0.82, "loss": 0.1},
        {"fractions": [0.0, 0.5, 1.0], "prunable": {"by_importance": 0.5, "by_gradient": 0.0,
                                                "random_mean": 0.0}, "tolerance": 1.0})


def test_importance_reading_says_the_costliest_head_sits_in_a_frozen_layer():
    from analysis.importance.reading import reading

    frozen = trained_layers({"frozen_layers": 1}, 2)  # the embeddings and layer 1 frozen
    lines = reading(_importance(0), trained=frozen)
    i = next(k for k, x in enumerate(lines) if x.startswith("Removing these hurts most"))
    assert lines[i] == ("Removing these hurts most: head 1-3 (output zeroed: -8.0 points of "
                        "accuracy, 95% -9.0 to -7.0).")
    assert lines[i + 1] == (
        "Only layer 2 was fine-tuned: the embeddings and layer 1 were frozen by the recipe and "
        "are the base model's. The costliest head 1-3 sits in layer 1, which the fine-tune "
        "never changed: the classifier on top learned to rely on it, but the head itself is "
        "as pre-training left it, so this is not a finding about what fine-tuning made of the "
        "model.")
    trained_top = reading(_importance(1), trained=frozen)[i + 1]
    assert trained_top == ("Only layer 2 was fine-tuned: the embeddings and layer 1 were frozen "
                           "by the recipe and are the base model's, so a head there that costs "
                           "much was made by pre-training, not by this fine-tune.")


def test_importance_reading_whole_and_unknown():
    from analysis.importance.reading import reading

    plain = reading(_importance(0))
    whole = reading(_importance(0), trained=trained_layers({"trained": training_record(0, 2)},
                                                           2))
    unknown = reading(_importance(0), trained=trained_layers(None, 2))
    i = next(k for k, x in enumerate(plain) if x.startswith("Removing these hurts most"))
    assert whole[i + 1] == ("Its card says every layer was fine-tuned (trained layers: all 2 "
                            "(embeddings included)), so any head's cost may come from "
                            "pre-training or from fine-tuning alike.")
    assert unknown[i + 1].startswith("What this classifier's fine-tune trained is unknown (it "
                                     "has no fine-tuning card)")
    assert whole[:i + 1] + whole[i + 2:] == plain == unknown[:i + 1] + unknown[i + 2:]


# -- Representations ---------------------------------------------------------------------------


def _corpus():
    from analysis.representations.corpus import CorpusResult, ModelSide
    from analysis.representations.probes import ProbeCurve

    def curve(layers):
        return ProbeCurve("upos", layers, 0.2, ["a", "b"], {}, [], n_words=100)

    a = ModelSide("base", {"upos": curve([0.8, 0.95, 0.9])}, [0.1, 0.3, 0.2], [0.9, 0.7, 0.4])
    b = ModelSide("tuned", {"upos": curve([0.8, 0.95, 0.6])}, [0.1, 0.3, 0.5],
                  [0.9, 0.7, 0.2])
    return CorpusResult("treebank", a, b, None, 10, 100)


def test_representations_reading_with_planted_cards():
    from analysis.representations.reading import corpus_reading

    plain = corpus_reading(_corpus())
    frozen = corpus_reading(_corpus(), trained=trained_layers({"frozen_layers": 1}, 2))
    said = [x for x in frozen if x not in plain]
    assert [x for x in frozen if x in plain] == plain
    assert said == [("Only layer 2 was fine-tuned in tuned: the embeddings and layer 1 "
                          "were frozen by the recipe, so up to layer 1 its vectors are the "
                          "base model's and a probe's sameness there is not a finding; only "
                          "the changes above are the fine-tune's.")]
    whole = corpus_reading(_corpus(), trained=trained_layers(WHOLE, 2))
    assert [x for x in whole if x not in plain] == [
        "tuned's card says every layer was fine-tuned (trained layers: all 2 (embeddings "
        "included)), so a change at any layer is the fine-tune's."]
    unknown = corpus_reading(_corpus(), trained=trained_layers(None, 2))
    (said,) = [x for x in unknown if x not in plain]
    assert said.startswith("What tuned's fine-tune trained is unknown (it has no fine-tuning "
                           "card)")
    # a (contrived) recipe that froze the top layer: its probe's change is no finding
    from analysis.core.cards import Trained

    top_frozen = Trained("some", 2, (1,), True, True)
    text = " ".join(corpus_reading(_corpus(), trained=top_frozen))
    assert ("In tuned the top layer was frozen by the recipe (only layer 1 was trained), so its "
            "upos probe (90.0% before, 60.0% after) says nothing about fine-tuning.") in text
    assert "After fine-tuning (tuned) the top layer's upos probe" not in text


# -- Syntax before/after ------------------------------------------------------------------------


def _probes(uuas):
    from analysis.syntax.probes import ProbeResult

    return ProbeResult(layers=[{"layer": i, "uuas": u, "dspr": 0.5, "root_acc": 0.5,
                                "depth_spearman": 0.5} for i, u in enumerate(uuas)],
                       baselines={"linear_chain_uuas": 0.4}, n_eval=25)


def test_syntax_compare_reading_with_planted_cards():
    from analysis.syntax.reading import probe_compare_reading

    before, after = _probes([0.5, 0.72, 0.6]), _probes([0.5, 0.6, 0.7])
    plain = probe_compare_reading(before, after)
    frozen = probe_compare_reading(before, after,
                                   trained=trained_layers({"frozen_layers": 1}, 2))
    assert frozen[0] == plain[0]
    assert frozen[1:] == [
        "Only layer 2 was fine-tuned in the second model: the word vectors before any layer "
        "and layer 1 were frozen by the recipe, so their heads and word vectors are the first "
        "model's by construction and their sameness is not a finding."]
    # the second model's best layer is the frozen layer 1: its score is the base model's
    best_frozen = probe_compare_reading(before, _probes([0.5, 0.72, 0.3]),
                                        trained=trained_layers({"frozen_layers": 1}, 2))
    assert best_frozen[1] == ("The second model's best layer, layer 1, was frozen by its "
                              "recipe: its score there is the base model's, not something "
                              "fine-tuning made.")
    whole = probe_compare_reading(before, after, trained=trained_layers(WHOLE, 2))
    assert whole[1] == ("The second model's card says all 2 layers were fine-tuned, so a "
                        "change at any layer is the fine-tune's.")
    unknown = probe_compare_reading(before, after, trained=trained_layers(None, 2))
    assert unknown[1].startswith("What the second model's fine-tune trained is unknown")
    for lines in (frozen, best_frozen, whole, unknown):  # the page's words, no internal names
        assert "embedding" not in " ".join(lines) and "UUAS" not in " ".join(lines)


# -- the report's provenance -------------------------------------------------------------------


@pytest.mark.parametrize("record, words", [
    (training_record(4, 2 + 4), "trained layers: 5-6 of 6; the embeddings and layers 1-4 were "
                                "frozen by the recipe"),
    (training_record(0, 6), "trained layers: all 6 (embeddings included)"),
    (None, "what was trained is unknown (the model has no fine-tuning card)")])
def test_provenance_says_what_was_trained(record, words):
    from analysis.report.provenance import model_source

    class Config:
        pass

    class Model:
        config = Config()

        def state_dict(self):
            return {}

    if record is not None:
        setattr(Model.config, CONFIG_KEY, record)
    loaded = dataclasses.make_dataclass("L", ["spec", "name", "model_type", "n_layers",
                                              "n_heads", "model"])(
        "default", "tiny", "bert", 6, 2, Model())
    assert model_source(loaded, weights="ab" * 32)["fine-tuning"] == words
