"""The search index is built without holding its vectors (issue 50: 5.4 GB in the CLI for 300
lines of 2,000 characters): in this process they are written into the index folder as each
batch comes (analysis.search.store), so the build's peak of traced allocations stays below the
vectors' size, where a build in memory holds them whole; the streamed index equals the one built
in memory; a file open elsewhere keeps its own vectors when the index is built again; the
searchers held (float32 copies of exact sets) are bounded by bytes across indexes."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from analysis.search import build_index, search_corpus
from analysis.search.index import SearchIndex, searchers
from analysis.search.job import index_data
from analysis.search.store import RowsFile

WORDS = ("the soup was cold but the staff were kind and the bread was fresh so we stayed for "
         "coffee after the long walk").split()


def _corpus(n: int):
    import datasets

    rng = np.random.default_rng(50)
    texts = [" ".join(rng.choice(WORDS, 40)) for _ in range(n)]
    return datasets.Dataset.from_dict({"text": texts, "text_pair": [None] * n})


def _peak(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


def test_a_streamed_build_holds_less_than_its_vectors(tiny, tmp_path):
    corpus = search_corpus(_corpus(240))
    index_data(tiny, corpus, batch_size=8)  # warm: first-call allocations are not the build's
    held, peak_memory = _peak(lambda: index_data(tiny, corpus, batch_size=8))
    vector_bytes = held.layers.nbytes + held.heads.nbytes
    streamed, peak_stream = _peak(lambda: index_data(tiny, corpus, batch_size=8,
                                                     out=tmp_path))
    assert isinstance(streamed.layers, np.memmap) and isinstance(streamed.heads, np.memmap)
    assert vector_bytes > 2_500_000  # large against a batch's (8 sentences of ~45 pieces)
    assert peak_memory >= vector_bytes  # held whole in memory
    assert peak_stream < peak_memory - 0.8 * vector_bytes, (peak_stream, peak_memory,
                                                            vector_bytes)
    np.testing.assert_array_equal(np.asarray(streamed.layers), held.layers)
    np.testing.assert_array_equal(np.asarray(streamed.heads), held.heads)
    assert not list(tmp_path.glob("*.part"))


def test_rebuilding_an_index_leaves_a_reader_its_own_vectors(tiny, tmp_path):
    ds = _corpus(12)
    first = build_index(tiny, ds, tmp_path / "ix")
    before = np.asarray(first.layers[1]).copy()
    other = ds.select(range(6))
    second = build_index(tiny, other, tmp_path / "ix")  # the same folder, other sentences
    assert second.n < first.n
    np.testing.assert_array_equal(np.asarray(first.layers[1]), before)  # still readable


def test_a_failed_build_leaves_no_partial_file(tmp_path):
    rows = RowsFile(tmp_path / "layers.npy", (2,), 10, 4)
    rows.write(3, np.ones((2, 2, 4)))
    rows.discard()
    assert not list(tmp_path.iterdir())


def test_rows_file_is_the_array_written_in_any_order(tmp_path):
    rng = np.random.default_rng(0)
    whole = rng.normal(size=(3, 2, 9, 5)).astype(np.float16)
    rows = RowsFile(tmp_path / "heads.npy", (3, 2), 9, 5)
    for lo, hi in ((4, 9), (0, 1), (1, 4)):
        rows.write(lo, whole[:, :, lo:hi])
    np.testing.assert_array_equal(rows.finish(), whole)
    np.testing.assert_array_equal(np.load(tmp_path / "heads.npy"), whole)


def test_searchers_are_bounded_by_bytes_across_indexes(tiny, tmp_path, monkeypatch):
    a = build_index(tiny, _corpus(10), tmp_path / "a")
    b = build_index(tiny, _corpus(11), tmp_path / "b")
    one = a.n * 32 * 4  # a layer set's float32 copy (hidden size 32)
    monkeypatch.setattr(searchers, "max_bytes", int(2.5 * one))
    searchers.clear()
    for layer in range(3):
        a.searcher(layer)
    assert len(searchers) == 2 and searchers.total <= 2.5 * one
    b.searcher(0)
    assert searchers.total <= 2.5 * one and b.searcher_key(0) in searchers
    assert a.searcher_key(0) not in searchers  # the oldest went
    # a query still answers whatever was pushed out
    assert a.search(np.asarray(a.layers[0][0], np.float32), 0, k=1)[0].row == 0
    searchers.clear()


def test_an_opened_index_is_sized_without_its_mapped_vectors(tiny, tmp_path):
    from analysis.core.bytecache import nbytes

    index = SearchIndex.open(build_index(tiny, _corpus(20), tmp_path / "ix").folder)
    held = nbytes(index)
    assert held < index.layers.size * 2  # the mapped files are not the process's
    assert held >= sum(len(t) for t in index.tokens)


def test_two_builds_of_one_corpus_taking_turns_both_get_the_index(tiny, tmp_path, monkeypatch):
    """Two visitors' jobs for the same corpus and model take turns in the queue (a paused job
    resumes after the other's): in the cache each builds in a folder of its own and moves it
    into place when whole. Writing the one folder, the second truncated and renamed the first's
    vectors (the hostile benchmark's 3 tabs: a FileNotFoundError traceback for one visitor).
    Here the second build runs to its end in the middle of the first's, at its first step."""
    import os

    from analysis.search.job import BUILDING, prune_cache

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path))
    ds = _corpus(12)
    inner = {}

    def first_progress(done, total):
        if not inner and done < total:  # the other visitor's turn, mid-way
            inner["index"] = build_index(tiny, ds, batch_size=4)

    first = build_index(tiny, ds, batch_size=4, progress=first_progress)
    second = inner["index"]
    assert first.folder == second.folder and (first.folder / "meta.json").is_file()
    for index in (first, second):
        np.testing.assert_array_equal(np.asarray(index.layers), np.asarray(second.layers))
    root = first.folder.parent
    assert [p.name for p in root.iterdir()] == [first.folder.name]  # no build folder left
    # a build folder of a process that is gone is removed by the next prune, a running one's kept
    dead = root / f"{first.folder.name}.build-999999999-abc"
    live = root / f"{first.folder.name}.build-{os.getpid()}-def"
    for f in (dead, live):
        f.mkdir()
    assert BUILDING.search(dead.name) and BUILDING.search(live.name)
    prune_cache()
    assert not dead.exists() and live.is_dir()
