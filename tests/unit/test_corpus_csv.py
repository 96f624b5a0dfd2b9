"""The CSV helper: columns, pairs, a missing column."""

from __future__ import annotations

import pytest

from analysis.core.corpus import (corpus_notes, csv_columns, read_corpus)
from analysis.core.errors import DataError
from builders import rows, one_line


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
