"""The CSV helper: columns, pairs, a missing column."""

from __future__ import annotations

import pytest

from analysis.corpus import (corpus_notes, csv_columns, read_corpus)
from analysis.errors import DataError


def rows(ds):
    return list(zip(ds["text"], ds["text_pair"]))


def one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and msg
    return msg


def test_csv_columns_and_pairs(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text('id,review,aspect\n1,"Great food, slow service.",food\n2,,price\n3,Cheap.,price\n',
                 encoding="utf-8")
    assert csv_columns(f) == ["id", "review", "aspect"]
    ds = read_corpus(f, text_column="review", pair_column="aspect")
    assert rows(ds) == [("Great food, slow service.", "food"), ("Cheap.", "price")]
    assert corpus_notes(ds) == ["Skipped 1 row(s) with an empty text cell."]


def test_csv_without_chosen_column(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text("id,review\n1,Nice\n", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(f)  # default column 'text'
    msg = one_line(exc)
    assert "'text'" in msg and "id, review" in msg
    with pytest.raises(DataError):
        read_corpus(f, text_column="review", pair_column="aspect")




SEMEVAL14 = """<?xml version="1.0" encoding="UTF-8"?>
<sentences>
  <sentence id="1"><text>But the staff was so horrible to us.</text>
    <aspectTerms><aspectTerm term="staff" polarity="negative" from="8" to="13"/></aspectTerms>
  </sentence>
  <sentence id="2"><text>The food was great &amp; cheap.</text></sentence>
  <sentence id="3"><text>  </text></sentence>
</sentences>"""

SEMEVAL16 = """<Reviews><Review rid="1"><sentences>
  <sentence id="1:0"><text>Judging from posts this used to be good.</text>
    <Opinions><Opinion target="NULL" category="RESTAURANT#GENERAL" polarity="negative"/></Opinions>
  </sentence>
  <sentence id="1:1"><text>The staff acted rude.</text></sentence>
</sentences></Review></Reviews>"""
