"""A plain labelled corpus (text + label) in the representations corpus part: every word
carries its sentence's label; the scatter's label colours are capped (an 'other labels'
bucket beyond ten) and stable; the label probe reads planted separable vectors perfectly and
noise at the majority rate; a corpus without labels is refused in one line."""

from __future__ import annotations

import datasets
import numpy as np
import pytest

from analysis.core.errors import DataError, InputError
from analysis.core.models import load_model
from analysis.representations.corpus import check_probes, model_side, scatter_of
from analysis.representations.run import corpus_representations
from analysis.representations.labelled import (NONE, OTHER, capped_labels, label_legend,
                                               labelled_words)
from analysis.representations.states import WordCorpus

TEXTS = ["The soup was cold.", "Great food and a view!", "Slow service.", "Tasty and cheap."]
LABELS = ["neg", "pos", "neg", "pos"]


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return load_model(str(tiny_model_dir("bert")))


def labelled(texts=TEXTS, labels=LABELS):
    return datasets.Dataset.from_dict({"text": texts, "text_pair": [None] * len(texts),
                                       "label": labels})


def test_words_carry_their_sentence_label(tiny):
    w = labelled_words(tiny, labelled())
    assert w.kind == "labelled" and w.n_sentences == 4
    assert w.forms[:5] == ["The", "soup", "was", "cold", "."]
    assert w.labels["label"][:5] == ["neg"] * 5
    assert w.labels["label"][5:11] == ["pos"] * 6  # Great food and a view !
    assert list(w.groups[:5]) == [0] * 5 and w.groups[5] == 1
    assert w.sentence_labels == LABELS
    assert w.context(1) == "The «soup» was cold . (label: neg)"
    assert len(w.layers) == 3 and w.layers[0].shape == (len(w.forms), 32)


def test_legend_caps_at_ten_labels_most_frequent_first():
    labels = [f"L{k:02d}" for k in range(12) for _ in range(12 - k)] + ["", None]
    legend = label_legend(labels)
    assert legend == [f"L{k:02d}" for k in range(10)] + [OTHER, NONE]
    assert capped_labels(["L00", "L11", "_", "L09"], legend) == ["L00", OTHER, NONE, "L09"]
    assert label_legend(["b", "a", "b", "a", "c"]) == ["a", "b", "c"]  # ties by name


def planted(n_sent=40, per=5, dim=8, seed=0, labels=None):
    """Word rows whose layer 0 separates the sentence labels and layer 1 is noise."""
    rng = np.random.default_rng(seed)
    cycle = ["pos", "pos", "neg", "pos", "neu", "neg"]  # period 6: every fold gets each class
    labels = labels or [cycle[s % 6] for s in range(n_sent)]
    centre = {lab: k for k, lab in enumerate(sorted(set(labels)))}
    rows = [lab for lab in labels for _ in range(per)]
    sep = rng.normal(size=(len(rows), dim)) * 0.1
    for i, lab in enumerate(rows):
        sep[i, centre[lab] % dim] += 5.0
    noise = rng.normal(size=(len(rows), dim))
    groups = np.repeat(np.arange(len(labels)), per)
    places = [(s, p) for s in range(len(labels)) for p in range(per)]
    sentences = [[f"w{p}" for p in range(per)] for _ in labels]
    return WordCorpus([sep.astype(np.float32), noise.astype(np.float32)],
                      [f"w{p}" for _ in labels for p in range(per)], groups, places, sentences,
                      {"label": rows}, "labelled", len(labels), sentence_labels=list(labels))


def test_label_probe_perfect_on_separable_and_majority_on_noise():
    words = planted()
    side = model_side("m", words, ("label",))
    curve = side.probes["label"]
    assert curve.layers[0] == 1.0
    assert curve.majority == pytest.approx(21 / 40)  # 21 of 40 sentences are "pos"
    assert curve.majority - 0.15 <= curve.layers[1] <= curve.majority + 0.05
    assert curve.n_sentences == 40 and curve.counts == {"neg": 65, "neu": 30, "pos": 105}


def colour_encoding(spec):
    """The one colour encoding of a chart spec (found wherever the layers nest it)."""
    if isinstance(spec, dict):
        if "color" in spec.get("encoding", {}) and "field" in spec["encoding"]["color"]:
            return spec["encoding"]["color"]
        values = spec.values()
    elif isinstance(spec, list):
        values = spec
    else:
        return None
    for v in values:
        found = colour_encoding(v)
        if found is not None:
            return found
    return None


def test_scatter_colours_by_label_with_a_stable_scale():
    from ui.representations import charts as C
    from analysis.representations.corpus import CorpusResult, ModelSide

    names = [f"c{k:02d}" for k in range(12)]
    labels = [names[s % 12] if s < 36 else names[0] for s in range(48)]
    words = planted(n_sent=48, labels=labels)
    scatters = []
    for seed in (0, 1):  # two different samples of 60 words
        sc, notes = scatter_of(words, None, "pca", max_points=60, seed=seed)
        assert any(OTHER in n for n in notes)
        scatters.append(sc)
        side = ModelSide("m", {}, [None, None], [None, None])
        res = CorpusResult("labelled", side, None, sc, 48, len(words.forms))
        _, items = C.corpus_frames(res)
        assert list(items["group"]) == sc.colours
        # every word's colour field is its sentence's label, capped at ten
        assert set(items["group"]) - {OTHER} <= set(names[:10])
        chart, _, _ = C.corpus_scatter(res)
        colour = colour_encoding(chart.to_dict())
        assert colour["field"] == "group" and colour["title"] == "label"
        assert colour["scale"]["domain"] == sc.legend
        assert dict(zip(colour["scale"]["domain"], colour["scale"]["range"]))[OTHER] == \
            C.OTHER_COLOUR
    # c00 has the most sentences: first, the same colour whatever the sample
    assert scatters[0].legend == scatters[1].legend
    assert scatters[0].legend[:2] == ["c00", "c01"] and scatters[0].legend[-1] == OTHER
    assert set(scatters[0].colours) <= set(scatters[0].legend)
    assert "c11" not in scatters[0].colours  # beyond the ten: the bucket


def test_corpus_part_on_a_labelled_corpus_and_refusals(tiny):
    ds = labelled(TEXTS * 2, LABELS * 2)
    assert check_probes(ds) == ("label",)
    r = corpus_representations(tiny, ds, folds=2, max_points=50)
    assert r.kind == "labelled" and set(r.to_json()["probes"]) == {"label"}
    assert r.model.probes["label"].majority == pytest.approx(0.5, abs=0.25)
    assert r.scatter.colour_by == "label" and r.scatter.legend == ["neg", "pos"]
    assert set(r.scatter.colours) == {"neg", "pos"}
    nolabel = datasets.Dataset.from_dict({"text": TEXTS, "text_pair": [None] * 4})
    for bad in (nolabel, labelled(labels=[""] * 4)):
        with pytest.raises(DataError, match="no 'label' column") as exc:
            corpus_representations(tiny, bad)
        assert "\n" not in str(exc.value)
    from analysis.syntax.treebank import sample_treebank
    with pytest.raises(InputError, match="label probe needs a labelled corpus"):
        check_probes(sample_treebank(max_sentences=3), ["label"])
