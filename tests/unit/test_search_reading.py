"""The search study's reading and label shares on a hand-made index with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.search import IndexData, write_index
from analysis.search.reading import label_rows, others, own_row, reading

# six pieces in three sentences; along the first axis, piece 0 is the query's own piece
VECS = np.array([[1, 0], [0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0, 1], [0.1, 0.9]], np.float32)
UPOS = ["NOUN", "NOUN", "VERB", "NOUN", "ADJ", "NOUN"]


@pytest.fixture()
def index(tmp_path):
    from analysis.search.index import unit_rows

    lay = np.stack([unit_rows(VECS)] * 2).astype(np.float16)  # layers 0 and 1
    data = IndexData(tokens=["cat", "cat", "runs", "dog", "red", "mat"],
                     sentence=np.array([0, 0, 1, 1, 2, 2], np.int32),
                     position=np.array([1, 2, 1, 2, 1, 2], np.int32),
                     word=np.array([0, 1, 0, 1, 0, 1], np.int32), labels={"upos": UPOS},
                     numbers=[0, 3, 7], texts=["cat cat", "runs dog", "red mat"],
                     pairs=[None] * 3, layers=lay,
                     heads=np.ones((1, 1, 6, 2), np.float16) / np.sqrt(2),
                     label_names=("upos",))
    return write_index(data, tmp_path / "ix", {"name": "hand", "hash": "0"}, "fp")


def test_matches_shares_and_reading_by_hand(index):
    matches = index.search(VECS[0], 1, None, k=4)
    assert [m.row for m in matches] == [0, 1, 2, 3]          # ordered by cosine
    assert [m.sentence for m in matches] == [0, 0, 3, 3]     # the sentences' own numbers
    own = own_row(index, "cat cat", 1)
    assert own == 0
    rest = others(matches, own)
    rows = {r["label"]: r for r in label_rows(index, rest, "upos")}
    # matches without the query: cat (NOUN), runs (VERB), dog (NOUN): 2/3 nouns
    assert rows["NOUN"]["matches (%)"] == pytest.approx(200 / 3)
    assert rows["VERB"]["matches (%)"] == pytest.approx(100 / 3)
    # corpus: 4 of 6 pieces are nouns, 1 verb, 1 adjective
    assert rows["NOUN"]["corpus (%)"] == pytest.approx(400 / 6)
    assert rows["ADJ"]["matches (%)"] == 0 and rows["ADJ"]["corpus (%)"] == pytest.approx(100 / 6)
    lines = reading(index, "cat", matches, 1, None, own)
    cos = [float(VECS[0] @ VECS[r] / np.linalg.norm(VECS[r])) for r in (1, 2, 3)]
    assert lines[0] == (f"At layer 1, the 3 pieces of the corpus nearest to «cat» have cosine "
                        f"similarities from {min(cos):.2f} to {max(cos):.2f}.")
    assert lines[1].startswith("33% of them are the same piece «cat»")
    assert lines[2] == ("At layer 1 the nearest pieces share the word's part of speech (NOUN) "
                        "67% of the time, against 67% by chance (its share of the corpus).")


def test_reading_without_the_query_in_the_corpus_names_the_commonest_label(index):
    matches = index.search(VECS[4], 0, None, k=3)   # red, mat, then the nearest of the rest
    assert [m.token for m in matches[:2]] == ["red", "mat"]
    lines = reading(index, "blue", matches, 0, None, None)
    assert lines[0].startswith("In the embeddings (layer 0), the 3 pieces")
    assert "same piece «blue»" in lines[1] and lines[1].startswith("0%")
    # red (ADJ), mat (NOUN), dog (NOUN): NOUN 67% against 67% of the corpus
    assert lines[2] == ("In the embeddings (layer 0) the most common part of speech among the "
                        "nearest pieces is NOUN (67%), against 67% of the corpus by chance.")


def test_the_cache_keeps_the_folders_built_last(tmp_path, monkeypatch):
    import os

    from analysis.search.job import cache_folder, prune_cache

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path))
    folders = [cache_folder(f"{k:016d}", "fp") for k in range(5)]
    for k, f in enumerate(folders):
        f.mkdir(parents=True)
        (f / "meta.json").write_text("{}")
        os.utime(f / "meta.json", (1000 + k, 1000 + k))
    gone = prune_cache(keep=3, spare=folders[0])  # the oldest, but just opened: spared
    assert sorted(gone) == sorted(folders[1:3])
    assert [f.is_dir() for f in folders] == [True, False, False, True, True]


def test_the_cache_keeps_at_most_its_bytes_on_disk(tmp_path, monkeypatch):
    import os

    from analysis.search.job import cache_folder, prune_cache

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path))
    folders = [cache_folder(f"{k:016d}", "fp") for k in range(4)]
    for k, (f, size) in enumerate(zip(folders, (300, 500, 200, 400))):
        f.mkdir(parents=True)
        (f / "layers.npy").write_bytes(b"\0" * size)
        (f / "meta.json").write_text("{}")
        os.utime(f / "meta.json", (1000 + k, 1000 + k))
    # newest first: 400 (spared, counted first: 402 with its meta), 200 -> 604, then 500 passes
    # 1,000 bytes and goes, 300 still fits
    gone = prune_cache(keep=8, spare=folders[3], max_bytes=1000)
    assert gone == [folders[1]]
    assert [f.is_dir() for f in folders] == [True, False, True, True]
