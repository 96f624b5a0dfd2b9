"""The files a search corpus is read from (``analysis.search.corpus.read_data``), one reader for
the CLI and the Search page's upload: a .txt file's sentences keep their file line numbers (blank
lines skipped), a .conllu file is a treebank with UPOS and relations, ASTE triplets in a .txt
file and SemEval/JSON files are ABSA data with aspect roles, a .csv file's label column labels
its sentences; anything else is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.cli.search import read_data as cli_read_data
from analysis.core.errors import DataError
from analysis.search.corpus import looks_aste, read_data, search_corpus, with_lines

DATA = Path(__file__).resolve().parents[2] / "data"
TXT = b"The cat sat on the mat.\n\n  \nA dog barked.\tIt was loud.\n\nThe end.\n"


def test_a_txt_file_is_numbered_by_its_lines_and_the_cap_keeps_the_first():
    ds, lines = read_data(TXT, name="c.txt")
    assert list(ds["text"]) == ["The cat sat on the mat.", "A dog barked.", "The end."]
    assert list(ds["text_pair"]) == [None, "It was loud.", None]
    assert lines == [0, 3, 5]
    corpus = search_corpus(with_lines(ds, lines))
    assert corpus.kind == "text" and corpus.numbers == [0, 3, 5]
    ds2, lines2 = read_data(TXT, name="c.txt", max_examples=2)
    assert len(ds2) == 2 and lines2 == [0, 3]
    assert search_corpus(with_lines(ds2, lines2)).numbers == [0, 3]
    # a .tsv file is read the same way; a dataset without line numbers is numbered by row
    assert read_data(TXT, name="c.tsv")[1] == [0, 3, 5]
    assert search_corpus(with_lines(ds, None)).numbers == [0, 1, 2]


def test_the_cli_reads_a_path_as_the_page_reads_its_bytes(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(TXT)
    ds, lines = cli_read_data(str(path))
    page_ds, page_lines = read_data(TXT, name="c.txt")
    assert lines == page_lines and list(ds["text"]) == list(page_ds["text"])
    tb, none = cli_read_data(str(DATA / "treebank" / "sample.conllu"), max_examples=3)
    assert none is None and len(tb) == 3


def test_a_conllu_upload_is_a_treebank_with_its_labels():
    data = (DATA / "treebank" / "sample.conllu").read_bytes()
    ds, lines = read_data(data, name="my.conllu", max_examples=2)
    assert lines is None and len(ds) == 2
    corpus = search_corpus(ds)
    assert corpus.kind == "treebank" and corpus.label_names == ("upos", "deprel")
    assert corpus.texts[0] == "The soup was cold , but the bread was fresh ."
    assert corpus.span_labels[0]["upos"][:4] == ["DET", "NOUN", "AUX", "ADJ"]
    assert corpus.span_labels[0]["deprel"][:4] == ["det", "nsubj", "cop", "root"]


def test_aste_triplets_in_a_txt_file_are_absa_data_with_aspect_roles():
    line = b"The soup was cold .####[([1], [3], 'NEG')]\n"
    assert looks_aste(line) and looks_aste(b"\xef\xbb\xbf" + line)
    assert not looks_aste(b"The soup was cold.\nA line with #### later.\n")
    ds, lines = read_data(line, name="r.txt")
    corpus = search_corpus(ds)
    assert lines is None and corpus.kind == "absa"
    assert corpus.span_labels[0]["role"] == ["other", "aspect term", "other", "opinion word",
                                             "other"]


def test_a_csv_label_column_labels_its_sentences():
    data = b"text,label\nThe soup was cold.,food\n,skip\nSlow service.,service\n"
    ds, lines = read_data(data, name="c.csv")
    corpus = search_corpus(ds)
    assert lines is None and corpus.kind == "labelled"
    assert [s["label"] for s in corpus.sentence_labels] == ["food", "service"]


def test_other_files_are_refused_in_one_line():
    with pytest.raises(DataError) as err:
        read_data(b"\x00\x01", name="model.bin")
    assert "\n" not in str(err.value) and ".conllu" in str(err.value)
    with pytest.raises(DataError):
        read_data(b"just words, no format\n", name="r.json")
