"""Bytes in: size caps, UTF-8, the format sniffer (one plain DataError each)."""

from __future__ import annotations

import io

import pytest

from analysis.core.corpus import (MAX_BYTES, read_corpus)
from analysis.core.errors import DataError
from builders import rows, one_line


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


def test_caps_are_parameters_with_plain_sizes(tmp_path):
    with pytest.raises(DataError) as exc:
        read_corpus(b"x" * 3000, name="u.txt", max_bytes=2048)
    assert one_line(exc) == ("u.txt is 3 KB; files over 2 KB are refused (split the corpus or "
                             "cap it first).")
    for bad in (0, -1, 1.5, "10"):
        with pytest.raises(DataError, match="cap must be a whole number of at least 1"):
            read_corpus(b"x\n", name="u.txt", max_chars=bad)
    assert read_corpus(b"abcdef\n", name="u.txt", max_chars=3)["text"] == ["abc"]


def test_lines_are_decoded_one_at_a_time():
    from analysis.core.corpus.files import iter_lines

    data = "\ufeffone\r\ntwo\rthree\nfour \u2028 still four".encode("utf-8")
    assert list(iter_lines(data, "x.txt")) == ["one", "two", "three", "four \u2028 still four"]
    with pytest.raises(DataError) as exc:
        list(iter_lines(b"good\n" * 3000 + b"caf\xe9\n", "latin.txt"))
    assert one_line(exc) == ("latin.txt is not UTF-8 text (byte 15003 cannot be decoded); save "
                             "it as UTF-8.")
