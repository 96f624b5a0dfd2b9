"""CoNLL-U treebanks -> Dataset: columns, skipped ranges and empty nodes, the cap, tree
validation and one-line errors (docs/METHODS.md section 10, "Data")."""

from __future__ import annotations

import io

import pytest

from analysis.core.errors import DataError
from analysis.syntax.treebank import (COLUMNS, SAMPLE_TREEBANK, read_conllu, sample_treebank,
                                      treebank_fingerprint, treebank_notes, validate_tree)


def row(i, form, upos, head, rel, lemma="_"):
    return "\t".join([str(i), form, lemma, upos, "_", "_", str(head), rel, "_", "_"])


GOOD = "\n".join([
    "# sent_id = s1",
    "# text = Don't go there.",
    "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_",
    row(1, "Do", "AUX", 3, "aux"),
    row(2, "n't", "PART", 3, "advmod"),
    row(3, "go", "VERB", 0, "root"),
    "3.1\tgone\t_\t_\t_\t_\t_\t_\t_\t_",
    row(4, "there", "ADV", 3, "advmod"),
    row(5, ".", "PUNCT", 3, "punct"),
    "",
    "# text = no sent_id here",
    row(1, "My", "PRON", 2, "nmod:poss"),
    row(2, "cat", "NOUN", 3, "nsubj"),
    row(3, "sleeps", "VERB", 0, "root"),
    "",
]) + "\n"


def sentence(*rows):
    return ("\n".join(rows) + "\n\n").encode("utf-8")


def test_read_columns_ranges_and_empty_nodes_skipped():
    ds = read_conllu(GOOD.encode("utf-8"), name="good.conllu")
    assert ds.column_names == list(COLUMNS)
    assert len(ds) == 2
    first = ds[0]
    assert first == {"id": "s1", "words": ["Do", "n't", "go", "there", "."],
                     "heads": [3, 3, 0, 3, 3],
                     "deprels": ["aux", "advmod", "root", "advmod", "punct"],
                     "upos": ["AUX", "PART", "VERB", "ADV", "PUNCT"]}
    # no sent_id: the sentence's number in the file; the full DEPREL is kept
    assert ds[1]["id"] == "2" and ds[1]["deprels"][0] == "nmod:poss"
    assert any("2 multiword-token range(s) and empty node(s)" in n for n in treebank_notes(ds))


def test_sources_path_upload_bytes_and_cap(tmp_path):
    path = tmp_path / "t.conllu"
    path.write_text(GOOD, encoding="utf-8")
    upload = io.BytesIO(GOOD.encode("utf-8"))
    upload.name = "upload.conllu"
    a, b, c = read_conllu(path), read_conllu(upload), read_conllu(GOOD.encode("utf-8"))
    assert a["words"] == b["words"] == c["words"]
    assert treebank_fingerprint(a) == treebank_fingerprint(c)
    capped = read_conllu(path, max_sentences=1)
    assert len(capped) == 1 and "Capped to the first 1 sentences." in treebank_notes(capped)
    # a BOM and Windows line ends are fine
    assert len(read_conllu(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode("utf-8"))) == 2


@pytest.mark.parametrize("heads, expect", [
    ([2, 0, 2], None),
    ([0], None),
    ([2, 3, 0, 3], None),
    ([2, 1, 0], "a cycle (1 -> 2 -> 1)"),
    ([1, 0], "a cycle (1 -> 1)"),
    ([0, 0, 2], "two roots (words 1 and 2 both have head 0)"),
    ([2, 3, 1], "no word has head 0 (no root)"),
    ([2, 0, 7], "word 3 has head 7, outside the sentence of 3 words"),
    ([-1, 0], "word 1 has head -1, outside the sentence of 2 words"),
    ([], "the sentence has no words"),
])
def test_validate_tree(heads, expect):
    assert validate_tree(heads) == expect


@pytest.mark.parametrize("data, expect", [
    (sentence(row(1, "a", "X", 2, "dep"), row(2, "b", "X", 1, "dep"), row(3, "c", "X", 0, "root")),
     "sentence 1 (line 1): not a dependency tree: a cycle (1 -> 2 -> 1)."),
    (sentence("# sent_id = two", row(1, "a", "X", 0, "root"), row(2, "b", "X", 0, "root")),
     "sentence 1 (two): not a dependency tree: two roots"),
    (sentence(row(1, "a", "X", 0, "root"), row(2, "b", "X", 5, "dep")),
     "word 2 has head 5, outside the sentence of 2 words"),
    (sentence(row(1, "a", "X", 0, "root"), "2\tb\t_\tX\t_\t_\t1\tdep"),
     "line 2: a missing column (8 of the 10"),
    (sentence(row(1, "a", "X", 0, "root"), row(3, "b", "X", 1, "dep")),
     "word ids must run 1, 2, 3...; found 3 where 2 was expected"),
    (sentence(row(1, "a", "X", 0, "root"), row(2, "b", "X", "x", "dep")),
     "line 2: Failed parsing field 'head'"),
    (sentence(row(1, "a", "X", 0, "root"), row(2, "b", "X", 1, "_")), "word 2 has no DEPREL"),
    (sentence(row(1, "a", "X", 0, "root")) + sentence(row(1, "a", "X", "_", "_")),
     "sentence 2 (line 3), line 3: word 1 has no HEAD"),
    (sentence(row(1, "a", "X", "_", "_")) + sentence(row(1, "a", "X", 0, "root")),
     "sentence 1 (line 1), line 1: word 1 has no HEAD"),
])
def test_malformed_sentences_name_the_sentence(data, expect):
    with pytest.raises(DataError) as err:
        read_conllu(data, name="bad.conllu")
    msg = str(err.value)
    assert expect in msg and msg.startswith("bad.conllu") and "\n" not in msg


@pytest.mark.parametrize("data", [
    b"", b"\n\n", b"# only a comment\n\n", b"one two three\n",
    sentence(row(1, "a", "X", "_", "_"), row(2, "b", "X", "_", "_")),  # tokens, no HEAD at all
])
def test_no_dependency_rows(data):
    with pytest.raises(DataError, match="has no dependency rows") as err:
        read_conllu(data, name="x.conllu")
    assert "\n" not in str(err.value)


def test_plain_text_line_after_a_sentence_is_a_missing_column():
    with pytest.raises(DataError, match="sentence 2 .line 3., line 3: a missing column"):
        read_conllu(sentence(row(1, "a", "X", 0, "root")) + b"The cat sat.\n", name="x.conllu")


def test_non_utf8_and_missing_file(tmp_path):
    with pytest.raises(DataError, match="not UTF-8"):
        read_conllu(GOOD.encode("latin-1") + b"\xe9\xff", name="latin.conllu")
    with pytest.raises(DataError, match="File not found"):
        read_conllu(tmp_path / "none.conllu")
    with pytest.raises(DataError, match="at least 1"):
        read_conllu(GOOD.encode("utf-8"), max_sentences=0)


def test_sample_treebank_when_present():
    if not SAMPLE_TREEBANK.is_file():
        pytest.skip("the sample treebank is not there yet")
    ds = sample_treebank()
    assert len(ds) >= 80
    assert all(validate_tree(list(h)) is None for h in ds["heads"])


def test_ewt_dev(shared_data):
    ds = read_conllu(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu")
    assert len(ds) == 2001
    assert ds[0]["words"] == ["From", "the", "AP", "comes", "this", "story", ":"]
    assert ds[0]["heads"] == [3, 3, 4, 0, 6, 4, 4]
    assert ds[0]["id"].endswith("-0001")
    assert all(sum(1 for h in hs if h == 0) == 1 for hs in ds["heads"])


def test_hugging_face_folder_with_ud_columns(tmp_path):
    import json

    from analysis.syntax.treebank import read_hf_treebank

    folder = tmp_path / "ud"
    folder.mkdir()
    rows = [{"idx": "a-1", "tokens": ["My", "cat", "sleeps"], "head": ["2", "3", "0"],
             "deprel": ["nmod:poss", "nsubj", "root"], "upos": ["PRON", "NOUN", "VERB"]},
            {"idx": "a-2", "tokens": ["Yes"], "head": ["0"], "deprel": ["root"],
             "upos": ["INTJ"]}]
    (folder / "train.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    ds = read_hf_treebank(str(folder), "train")
    assert ds[0] == {"id": "a-1", "words": ["My", "cat", "sleeps"], "heads": [2, 3, 0],
                     "deprels": ["nmod:poss", "nsubj", "root"], "upos": ["PRON", "NOUN", "VERB"]}
    assert len(read_hf_treebank(str(folder), "train", max_sentences=1)) == 1
    rows[1]["head"] = ["1"]
    (folder / "train.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with pytest.raises(DataError, match="sentence 2: not a dependency tree: no word has head 0"):
        read_hf_treebank(str(folder), "train")
    with pytest.raises(DataError, match="Could not load the dataset"):
        read_hf_treebank(str(tmp_path / "nothing-here"), "train")
