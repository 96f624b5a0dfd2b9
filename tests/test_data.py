"""Corpus readers: formats, pairs, caps, and every kind of bad input (one plain DataError)."""

from __future__ import annotations

import io
import json

import pytest

from analysis.data import (MAX_BYTES, SAMPLE_DIR, corpus_fingerprint, corpus_notes, csv_columns,
                           read_corpus, read_hf_dataset, read_pasted, sample_corpus)
from analysis.errors import DataError


def rows(ds):
    return list(zip(ds["text"], ds["text_pair"]))


def one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and msg
    return msg


# --- .txt -----------------------------------------------------------------------------------


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


def test_empty_and_blank_only_files(tmp_path):
    empty = tmp_path / "e.txt"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(empty)
    assert "empty" in one_line(exc)
    blank = tmp_path / "b.txt"
    blank.write_text("\n  \n\t\n", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(blank)
    assert "no examples" in one_line(exc) or "empty" in one_line(exc)


def test_non_utf8_refused(tmp_path):
    f = tmp_path / "latin.txt"
    f.write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    with pytest.raises(DataError) as exc:
        read_corpus(f)
    assert "UTF-8" in one_line(exc)


def test_unknown_extension_and_missing_file(tmp_path):
    f = tmp_path / "c.docx"
    f.write_text("x", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(f)
    assert ".txt" in one_line(exc)
    with pytest.raises(DataError) as exc:
        read_corpus(tmp_path / "missing.txt")
    assert "not found" in one_line(exc)


def test_size_limit_path_and_upload(tmp_path):
    big = tmp_path / "big.txt"
    with open(big, "wb") as fh:  # sparse: 200 MB on paper, nothing on disk
        fh.truncate(200 * 1024 * 1024)
    with pytest.raises(DataError) as exc:
        read_corpus(big)
    assert "200 MB" in one_line(exc) and "50 MB" in one_line(exc)

    class Upload(io.BytesIO):  # what st.file_uploader hands over: name + size + read()
        name = "huge.txt"
        size = 200 * 1024 * 1024

    with pytest.raises(DataError) as exc:
        read_corpus(Upload(b"tiny"))
    assert "huge.txt" in one_line(exc)
    with pytest.raises(DataError):
        read_corpus(b"x" * (MAX_BYTES + 1), name="b.txt")


def test_uploaded_file_and_bytes_use_name_for_format():
    up = io.BytesIO(b'{"text": "A", "text_pair": "B"}\n')
    up.name = "u.jsonl"
    assert rows(read_corpus(up)) == [("A", "B")]
    assert rows(read_corpus(b"x\ty\n", name="p.txt")) == [("x", "y")]


# --- .jsonl ---------------------------------------------------------------------------------


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


# --- .csv -----------------------------------------------------------------------------------


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


# --- .xml -----------------------------------------------------------------------------------


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


def test_semeval_xml(tmp_path):
    f = tmp_path / "s14.xml"
    f.write_text(SEMEVAL14, encoding="utf-8")
    ds = read_corpus(f)
    assert ds["text"] == ["But the staff was so horrible to us.", "The food was great & cheap."]
    assert corpus_notes(ds) == ["Skipped 1 empty sentence(s)."]
    g = tmp_path / "s16.xml"
    g.write_text(SEMEVAL16, encoding="utf-8")
    assert read_corpus(g)["text"] == ["Judging from posts this used to be good.",
                                      "The staff acted rude."]


def test_xml_malformed_bomb_and_wrong_schema(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<sentences><sentence><text>open", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(bad)
    assert "not well-formed" in one_line(exc)
    bomb = tmp_path / "bomb.xml"
    bomb.write_text(
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
        "<sentences><sentence><text>&lol2;</text></sentence></sentences>", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(bomb)
    assert "entit" in one_line(exc)
    other = tmp_path / "other.xml"
    other.write_text("<root><item>hello</item></root>", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(other)
    assert "<sentence><text>" in one_line(exc)


def test_real_semeval_files(shared_data):
    ds = read_corpus(shared_data / "semeval2014" / "Restaurants_Train.xml")
    assert len(ds) == 3044
    assert ds["text"][0] == "But the staff was so horrible to us."
    ds16 = read_corpus(shared_data / "semeval2016" / "ABSA16_Restaurants_Train_SB1_v2.xml",
                       max_examples=5)
    assert ds16["text"][0] == ("Judging from previous posts this used to be a good place, "
                               "but not any longer.")


# --- pasted, HF, sample, fingerprint --------------------------------------------------------


def test_read_pasted():
    ds = read_pasted("First line.\n\nSecond\tpair\n")
    assert rows(ds) == [("First line.", None), ("Second", "pair")]
    assert corpus_notes(ds) == ["Skipped 1 blank line(s)."]
    with pytest.raises(DataError):
        read_pasted("  \n ")


def test_read_hf_dataset_local_folder_and_missing(tmp_path):
    folder = tmp_path / "my_ds"
    folder.mkdir()
    (folder / "train.jsonl").write_text(
        "\n".join(json.dumps({"sentence": s, "label": i}) for i, s in
                  enumerate(["Good.", "Bad.", "", "Fine."])), encoding="utf-8")
    ds = read_hf_dataset(str(folder), "train", "sentence", max_examples=2)
    assert ds["text"] == ["Good.", "Bad."]
    assert ds["text_pair"] == [None, None]
    with pytest.raises(DataError) as exc:
        read_hf_dataset(str(folder), "train", "review")
    assert "no column 'review'" in one_line(exc)
    with pytest.raises(DataError) as exc:
        read_hf_dataset("no-such-user/no-such-dataset-xyz", "train", "text")
    assert "Could not load the dataset" in one_line(exc)


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


def test_fingerprint_tracks_content():
    a = read_pasted("one\ntwo")
    assert corpus_fingerprint(a) == corpus_fingerprint(read_pasted("one\n\ntwo\n"))
    assert corpus_fingerprint(a) != corpus_fingerprint(read_pasted("one\ttwo"))
    assert corpus_fingerprint(a) != corpus_fingerprint(read_pasted("one\ntwo."))
