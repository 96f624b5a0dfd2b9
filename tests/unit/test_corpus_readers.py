"""Corpus readers: .txt and .jsonl formats, pairs, caps, pasted text, the bundled sample."""

from __future__ import annotations

import json

import pytest

from analysis.core.corpus import (SAMPLE_DIR, corpus_notes, read_corpus, read_pasted, sample_corpus)
from analysis.core.errors import DataError
from builders import rows, one_line


def test_txt_pairs_blank_lines_counted(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("The soup was cold.\n\n   \nIs it open?\tYes, on Sundays.\nTrailing tab\t\n",
                 encoding="utf-8")
    ds = read_corpus(f)
    assert ds.column_names == ["text", "text_pair"]
    assert rows(ds) == [("The soup was cold.", None), ("Is it open?", "Yes, on Sundays."),
                        ("Trailing tab", None)]
    assert corpus_notes(ds) == ["Skipped 2 blank line(s)."]


def test_txt_cap_and_bom(tmp_path):
    f = tmp_path / "c.txt"
    f.write_bytes("\ufeffone\ntwo\nthree\n".encode("utf-8"))
    ds = read_corpus(f, max_examples=2)
    assert ds["text"] == ["one", "two"]
    assert corpus_notes(ds) == ["Capped to the first 2 of 3 examples."]
    with pytest.raises(DataError):
        read_corpus(f, max_examples=0)


def test_jsonl(tmp_path):
    f = tmp_path / "c.jsonl"
    lines = [{"text": "The pasta was great.", "text_pair": "food"}, {"text": "Slow service."},
             {"text": "   "}]
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    ds = read_corpus(f)
    assert rows(ds) == [("The pasta was great.", "food"), ("Slow service.", None)]
    assert corpus_notes(ds) == ["Skipped 2 blank line(s) or empty text(s)."]


def test_jsonl_errors(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"text": "ok"}\n{"text": broken}\n', encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(f)
    assert "Line 2" in one_line(exc)
    f.write_text('{"sentence": "ok"}\n', encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(f)
    assert "'text'" in one_line(exc)
    assert read_corpus(f, text_column="sentence")["text"] == ["ok"]


def test_read_pasted():
    ds = read_pasted("First line.\n\nSecond\tpair\n")
    assert rows(ds) == [("First line.", None), ("Second", "pair")]
    assert corpus_notes(ds) == ["Skipped 1 blank line(s)."]
    with pytest.raises(DataError):
        read_pasted("  \n ")


def test_sample_corpus():
    ds = sample_corpus()
    assert 250 <= len(ds) <= 600
    pairs = [p for p in ds["text_pair"] if p is not None]
    assert len(pairs) >= 50
    assert all(t.strip() for t in ds["text"])
    assert len(set(ds["text"])) > 0.9 * len(ds)
    assert sum("," in t for t in ds["text"]) > 30 and sum("?" in t for t in ds["text"]) > 5
    assert (SAMPLE_DIR / "README.md").read_text(encoding="utf-8").startswith("# Sample corpus")
    assert len(sample_corpus(max_examples=7)) == 7
