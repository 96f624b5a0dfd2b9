"""The ABSA row schema: single-category terms, opinion linking, the held-out split."""

from __future__ import annotations

import pytest

from analysis.absa import readers as D
from analysis.absa.data import attach_opinions, sole_category_terms, split_dataset, to_dataset
from analysis.core.errors import DataError


def assign_single_category(ds):
    """SemEval-14 terms have no category; where a sentence has exactly one category, every
    uncategorised term gets it (the rule build_pairs applies row by row). A new Dataset."""
    return to_dataset([{**row, "terms": sole_category_terms(row)} for row in ds])


def test_attach_opinions_links_the_same_sentence_up_to_whitespace(tmp_path):
    from test_aspects_readers import ASTE, write

    ds = D.read_aste(write(tmp_path, "t.txt", ASTE))
    # link to the same sentence written without the space before the full stop
    base = to_dataset([{"id": "x", "text": "The food is great but the service was slow.",
                        "terms": [{"term": "service", "start": 26, "end": 33,
                                   "category": "service", "polarity": "negative",
                                   "opinions": []}],
                        "categories": [{"category": "service", "polarity": "negative"}],
                        "source": "json"}])
    linked = attach_opinions(base, ds)
    assert linked[0]["terms"][0]["opinions"] == [{"word": "slow", "start": 38, "end": 42}]


def test_split_refuses_too_little_data(tmp_path):
    from test_aspects_readers import SE14, write

    ds = D.read_semeval14(write(tmp_path, "a.xml", SE14))
    train, test = split_dataset(ds, 0.5, seed=0)
    assert len(train) == 1 and len(test) == 1
    one = ds.select([0])
    with pytest.raises(DataError, match="too few to split"):
        split_dataset(one, 0.1)


def test_invalid_rows_are_named():
    row = {"id": "7", "text": "Nice view.", "source": "json", "categories": [],
           "terms": [{"term": "view", "start": 5, "end": 9, "category": "parking",
                      "polarity": "positive", "opinions": []}]}
    with pytest.raises(DataError, match="Sentence 7: unknown category 'parking'"):
        to_dataset([row])
    ds = to_dataset([row, {**row, "id": "8", "terms": []}], skip_invalid=True)
    assert len(ds) == 1 and ds.info.description == "skipped 1 invalid sentence(s)"
