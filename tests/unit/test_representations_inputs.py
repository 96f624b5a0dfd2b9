"""One input from labelled data: a planted ABSA review asked about one category gives each
token its role (aspect term, opinion word, other aspect, other; the category's tokens and the
specials apart); a treebank sentence gives each token its word's UPOS, sub-word pieces
inheriting it; the chart's colour field and the JSON carry those labels; the reading says what
the colours show."""

from __future__ import annotations

import pytest

from analysis.absa.data import to_dataset
from analysis.core.errors import InputError
from analysis.core.models import load_model
from analysis.representations.inputs import (ASKED, SPECIAL, absa_categories, absa_input,
                                             treebank_input)
from analysis.representations.reading import colour_reading
from analysis.representations.single import input_representations

TEXT = "The pasta was superb but the waiter ignored us."
ROW = {"id": "r1", "text": TEXT, "source": "sample",
       "terms": [{"term": "pasta", "start": 4, "end": 9, "category": "food",
                  "polarity": "positive", "opinions": [{"word": "superb", "start": 14, "end": 20}]},
                 {"term": "waiter", "start": 29, "end": 35, "category": "service",
                  "polarity": "negative",
                  "opinions": [{"word": "ignored", "start": 36, "end": 43}]}],
       "categories": [{"category": "food", "polarity": "positive"},
                      {"category": "service", "polarity": "negative"}]}


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return load_model(str(tiny_model_dir("bert")))


def test_absa_roles_of_a_planted_review(tiny):
    row = dict(to_dataset([ROW])[0])
    assert absa_categories(row) == ["food", "service"]
    food = absa_input(tiny, row, "food")
    enc = food.encoder(tiny)
    got = dict(zip(enc.tokens, food.labels))
    assert enc.tokens[:4] == ["[CLS]", "the", "pasta", "was"]
    assert (got["pasta"], got["superb"], got["waiter"], got["ignored"], got["us"]) == \
        ("aspect", "opinion", "other aspect", "other", "other")
    assert got["[CLS]"] == SPECIAL and food.labels[-1] == SPECIAL
    assert food.labels[enc.tokens.index("food")] == ASKED  # the NLI-M pair's second text
    service = dict(zip(enc.tokens, absa_input(tiny, row, "service").labels))
    assert (service["waiter"], service["ignored"], service["pasta"]) == \
        ("aspect", "opinion", "other aspect")
    with pytest.raises(InputError, match="no aspect term of the category 'price'"):
        absa_input(tiny, row, "price")


def test_upos_pieces_inherit_their_word_tag(tiny):
    row = {"id": "t1", "words": ["We", "grilled", "unbelievably", "tasty", "salmon", "."],
           "upos": ["PRON", "VERB", "ADV", "ADJ", "NOUN", "PUNCT"]}
    li = treebank_input(tiny, row)
    enc = li.encoder(tiny)
    pieces = {}
    for tok, w, lab in zip(enc.tokens, enc.word_ids, li.labels):
        pieces.setdefault(w, []).append((tok, lab))
    words = [pieces[w] for w in sorted(pieces) if not pieces[w][0][0].startswith("[")]
    assert [p[0][1] for p in words] == row["upos"]
    split = [p for p in words if len(p) > 1]
    assert split, "no word was split into pieces"
    for p in split:  # every piece of a split word has the word's tag
        assert len({lab for _, lab in p}) == 1
    assert li.labels[0] == li.labels[-1] == SPECIAL and li.colour == "upos"


def test_result_chart_and_json_carry_the_labels(tiny):
    from ui.representations import charts as C

    li = absa_input(tiny, dict(to_dataset([ROW])[0]), "food")
    r = input_representations(tiny, "", labelled=li, compare=tiny)
    assert r.tokens == li.encoder(tiny).tokens and r.colourings == {"role": li.labels}
    assert r.to_json()["colours"] == {"role": li.labels}
    _, items = C.input_frames(r, "role")
    assert list(items["group"]) == li.labels
    _, items = C.input_frames(r, "segment")  # the other colourings stay offered
    assert items["group"].iloc[1] == "segment A"
    lines = colour_reading(r, "role")
    assert "aspect term (pasta)" in lines[0] and "opinion words (superb)" in lines[0]
    assert "closest to its opinion words" in lines[1]
    assert colour_reading(r, "segment") == []
    plain = input_representations(tiny, TEXT)
    assert "colours" not in plain.to_json() and plain.source == ""
