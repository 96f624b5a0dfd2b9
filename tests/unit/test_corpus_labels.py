"""analysis/core/corpus/labels.py: gold labels matched to a corpus's rows by text, from .jsonl and
.csv, and the one line said when they cannot be used."""

from __future__ import annotations

from analysis.core.corpus.labels import NO_COLUMN, NO_MATCH, read_labels

DATA = {"text": ["The soup was cold.", "Great service"]}


def test_jsonl_labels_in_row_order_blank_rows_skipped(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"text": "The soup was cold.", "label": " neg "}\n\n'
                 '{"text": "  ", "label": "x"}\n{"text": "Great service", "label": "pos"}\n')
    assert read_labels(str(f), DATA) == (["neg", "pos"], "")


def test_csv_labels_and_a_cut_text_matches_by_its_start(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text("text,label\nThe soup was cold.,neg\nGreat service and food,pos\n")
    assert read_labels(str(f), DATA) == (["neg", "pos"], "")
    assert read_labels(str(f), DATA, label_column="gold") == (None, NO_COLUMN.format("gold"))


def test_texts_that_do_not_line_up_are_not_used(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"text": "Great service", "label": "pos"}\n'
                 '{"text": "The soup was cold.", "label": "neg"}\n')
    assert read_labels(str(f), DATA) == (None, NO_MATCH)
    f.write_text('{"text": "The soup was cold."}\n{"text": "Great service"}\n')
    assert read_labels(str(f), DATA) == (None, NO_COLUMN.format("label"))


def test_other_formats_and_unreadable_rows_have_no_labels(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("The soup was cold.\nGreat service\n")
    assert read_labels(str(f), DATA) == (None, "")
    g = tmp_path / "c.jsonl"
    g.write_text("{not json\n")
    assert read_labels(str(g), DATA) == (None, "")
