"""analysis.representations.corpus: which probes a corpus can feed (one-line refusals), the
corpus JSON schema, and the default model's UPOS probe on the bundled treebank."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.absa.readers import load_sample
from analysis.core.errors import DataError, InputError
from analysis.core.models import load_model
from analysis.representations.corpus import check_probes
from analysis.representations.run import corpus_representations
from analysis.syntax.treebank import make_treebank, sample_treebank


def treebank(upos=True):
    words = [["Dogs", "bark", "."], ["Cats", "sleep", "."], ["Birds", "sing", "."]]
    return make_treebank({"id": ["1", "2", "3"], "words": words,
                          "heads": [[2, 0, 2]] * 3, "deprels": [["nsubj", "root", "punct"]] * 3,
                          "upos": [["NOUN", "VERB", "PUNCT"] if upos else ["_"] * 3] * 3})


def test_probes_the_data_can_feed():
    assert check_probes(treebank()) == ("upos",)
    assert check_probes(treebank(upos=False)) == ()
    assert check_probes(load_sample()) == ("aspect",)
    with pytest.raises(DataError, match="no UPOS column"):
        check_probes(treebank(upos=False), ["upos"])
    with pytest.raises(InputError, match="needs a treebank"):
        check_probes(load_sample(), ["upos"])
    with pytest.raises(InputError, match="needs ABSA data"):
        check_probes(treebank(), ["aspect"])


def test_corpus_json_schema_with_two_models(tiny_model_dir):
    tiny = load_model(str(tiny_model_dir("bert")))
    r = corpus_representations(tiny, treebank(), compare=tiny, max_points=5, folds=3)
    js = r.to_json()
    assert set(js) == {"probes", "anisotropy", "self_similarity", "compare"}
    assert set(js["probes"]) == {"upos"}
    assert len(js["probes"]["upos"]["layers"]) == 3
    assert js["probes"]["upos"]["majority"] == pytest.approx(3 / 9)  # 3 of 9 are each class
    assert js["compare"] == {k: v for k, v in js.items() if k != "compare"}
    assert js["self_similarity"] == [None] * 3  # no word form in 5 sentences
    assert r.scatter.colour_by == "upos" and len(r.scatter.forms) == 5
    for a, b in zip(r.scatter.points, r.scatter.compare_points):
        np.testing.assert_array_equal(a, b)
    assert any("5 of the 9 words" in n for n in r.notes)


def test_default_model_reads_part_of_speech_far_above_the_majority(default_model):
    r = corpus_representations(default_model, sample_treebank(max_sentences=40),
                               scatter=False)
    curve = r.model.probes["upos"]
    assert len(curve.layers) == 7 and curve.n_sentences == 40
    assert max(curve.layers) > curve.majority + 0.5
    assert r.model.anisotropy[3] > 0.05  # a shared direction in the middle layers
    # a word's vector depends more on its sentence at the top than at the embeddings
    assert r.model.self_similarity[0] > r.model.self_similarity[-1]
