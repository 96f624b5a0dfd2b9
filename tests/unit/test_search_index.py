"""The search study's index on a tiny model and on hand-made vectors: the exact index gives
brute-force numpy's neighbours and scores, HNSW's recall at k = 50 is at least 0.95, the
stored vectors are the forward's own (unit, float16), the context vectors are the input of
each attention output projection, labels follow the data's words, shards merge exactly."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.errors import InputError
from analysis.search import (IndexData, SearchIndex, build_index, exact_search, query,
                             recall_at, search_corpus, write_index)
from analysis.search.index import hnsw_index, tuned_hnsw, unit_rows
from analysis.search.job import SearchJob
from analysis.core.execution.corpus import run_sharded

SENTENCES = ["The cat sat on the mat.", "A dog barked at the postman.",
             "The waiter recommended the house wine.", "Prices are high but worth it.",
             "She sat by the window and read."]


def _random_data(n: int, d: int = 24, layers: int = 3, heads: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    lay = unit_rows(rng.normal(size=(layers + 1, n, d))).astype(np.float16)
    hd = unit_rows(rng.normal(size=(layers, heads, n, d // heads))).astype(np.float16)
    return IndexData(tokens=[f"t{i}" for i in range(n)], sentence=np.arange(n, dtype=np.int32),
                     position=np.ones(n, np.int32), word=np.ones(n, np.int32),
                     labels={"upos": ["NOUN" if i % 3 else "VERB" for i in range(n)]},
                     numbers=list(range(n)), texts=[f"t{i}" for i in range(n)],
                     pairs=[None] * n, layers=lay, heads=hd, label_names=("upos",))


def test_exact_index_equals_numpy_brute_force(tmp_path):
    data = _random_data(3000)
    index = write_index(data, tmp_path / "ix", {"name": "random", "hash": "0"}, "fp")
    rng = np.random.default_rng(1)
    for layer, head in [(0, None), (2, None), (3, 1), (1, 0)]:
        vecs = np.asarray(index.vectors(layer, head), np.float32)
        assert index.info(layer, head).backend == "exact"
        q = rng.normal(size=vecs.shape[1]).astype(np.float32)
        matches = index.search(q, layer, head, k=50)
        ref_s, ref_i = exact_search(vecs, unit_rows(q[None]), 50)
        assert [m.row for m in matches] == ref_i[0].tolist()
        np.testing.assert_allclose([m.score for m in matches], ref_s[0], atol=1e-3)
        # the numpy reference by hand: cosine of the float16 unit vectors
        cos = vecs @ (q / np.linalg.norm(q))
        assert matches[0].score == pytest.approx(float(cos.max()), abs=1e-3)
        assert matches[0].row == int(np.argmax(cos))


def test_vectors_are_stored_unit_length_float16(tmp_path):
    index = write_index(_random_data(50), tmp_path / "ix", {"name": "r", "hash": "0"}, "fp")
    assert index.layers.dtype == np.float16 and index.heads.dtype == np.float16
    norms = np.linalg.norm(np.asarray(index.layers, np.float32), axis=-1)
    np.testing.assert_allclose(norms, 1.0, atol=2e-3)


def test_hnsw_recall_at_50_is_at_least_095(tmp_path):
    data = _random_data(6000, d=32, layers=1, heads=2)
    index = write_index(data, tmp_path / "ix", {"name": "r", "hash": "0"}, "fp",
                        exact_max_cells=5000 * 32)
    info = index.info(1)
    assert info.backend == "hnsw"
    assert info.recall >= 0.95
    # measured again with other queries, on the index as loaded from disk
    vecs = index.vectors(1)
    assert recall_at(index.searcher(1), vecs, seed=7) >= 0.95
    # the head set (16 numbers per vector) stays exact under the same cap
    assert index.info(1, 0).backend == "exact"


def test_hnsw_recall_is_measured_not_assumed():
    vecs = unit_rows(np.random.default_rng(3).normal(size=(2000, 16))).astype(np.float16)
    index = hnsw_index(vecs)
    index.hnsw.efSearch = 1  # far too narrow: the measure must say so
    assert recall_at(index, vecs) < 0.9
    _, info = tuned_hnsw(vecs)
    assert info.recall >= 0.95 and info.ef_search >= 64


def test_tiny_model_index_holds_the_forward_vectors(tmp_path, tiny_model_dir):
    import datasets

    from analysis.core.encoding import encode
    from analysis.core.forward import forward
    from analysis.core.models import load_model

    loaded = load_model(str(tiny_model_dir("bert")))
    ds = datasets.Dataset.from_dict({"text": SENTENCES, "text_pair": [None] * 5})
    index = build_index(loaded, ds, tmp_path / "ix")
    encs = [encode(loaded.tokenizer, t) for t in SENTENCES]
    assert index.n == sum(int((~e.special).sum()) for e in encs)
    assert index.layers.shape == (3, index.n, 32) and index.heads.shape == (2, 4, index.n, 8)
    # sentence 2, piece 3: hidden state of layer 1 and head 2's context vector of layer 2
    enc = encs[2]
    fw = forward(loaded.model, loaded.tokenizer, [enc], attentions=True, hidden_states=True,
                 capture=("value_vectors",))
    row = next(r for r in index.rows_of_sentence(2) if index.position[r] == 3)
    assert index.tokens[row] == enc.tokens[3]
    h = fw.hidden(0)[1, 3]
    np.testing.assert_allclose(np.asarray(index.layers[1, row], np.float32),
                               h / np.linalg.norm(h), atol=2e-3)
    # context vector of head 2 at layer 2 by hand: attention map x value vectors
    att = fw.attentions[1][0, 2].numpy()             # [n, n]
    v = fw.captured["value_vectors"][1][0].numpy()   # [n, 32]
    c = att[3] @ v[:, 16:24]
    np.testing.assert_allclose(np.asarray(index.heads[1, 2, row], np.float32),
                               c / np.linalg.norm(c), atol=3e-3)
    # a query with the sentence's own piece finds it first, cosine 1
    q, matches = query(loaded, index, SENTENCES[2], 3, 1, k=5)
    assert (matches[0].sentence, matches[0].position) == (2, 3)
    assert matches[0].score == pytest.approx(1.0, abs=2e-3)
    # a random tiny model's head averages its values almost evenly, so other pieces of the
    # sentence come as close: the own piece is among those at cosine 1
    q, matches = query(loaded, index, SENTENCES[2], 3, 2, k=5, head=2)
    own = next(m for m in matches if (m.sentence, m.position) == (2, 3))
    assert own.score == pytest.approx(1.0, abs=2e-3) and matches[0].score >= own.score - 1e-3


def test_shards_merge_to_the_whole_corpus_index(tmp_path, tiny_model_dir):
    import datasets

    from analysis.core.models import load_model

    loaded = load_model(str(tiny_model_dir("bert")))
    ds = datasets.Dataset.from_dict({"text": SENTENCES, "text_pair": [None] * 5})
    job = SearchJob(loaded.spec, batch_size=2)
    whole = job.merge([job.map(loaded, ds, range(5))])
    parts = run_sharded(job, loaded, ds, [0, 2, 2, 5])
    assert parts.tokens == whole.tokens and parts.numbers == whole.numbers == list(range(5))
    np.testing.assert_array_equal(parts.sentence, whole.sentence)
    # a 'line' column (a .txt upload's file lines) numbers the sentences, in every shard
    numbered = ds.add_column("line", [0, 2, 3, 7, 9])
    parts = run_sharded(job, loaded, numbered, [0, 2, 2, 5])
    assert parts.numbers == [0, 2, 3, 7, 9] and parts.tokens == whole.tokens
    np.testing.assert_allclose(np.asarray(parts.layers, np.float32),
                               np.asarray(whole.layers, np.float32), atol=2e-3)


def test_query_refuses_bad_input(tmp_path, tiny_model_dir):
    import datasets

    from analysis.core.models import load_model

    loaded = load_model(str(tiny_model_dir("bert")))
    ds = datasets.Dataset.from_dict({"text": SENTENCES[:2], "text_pair": [None] * 2})
    index = build_index(loaded, ds, tmp_path / "ix")
    with pytest.raises(InputError, match="token must be from 0 to"):
        query(loaded, index, "The cat", 9, 1)
    with pytest.raises(InputError, match="layer must be from 0"):
        query(loaded, index, "The cat", 1, 3)
    with pytest.raises(InputError, match="no heads"):
        query(loaded, index, "The cat", 1, 0, head=0)
    with pytest.raises(InputError, match="k must be from 1"):
        query(loaded, index, "The cat", 1, 1, k=0)
    other = load_model(str(tiny_model_dir("roberta")))
    with pytest.raises(InputError, match="other weights"):
        query(other, index, "The cat", 1, 1)
    assert SearchIndex.open(tmp_path / "ix").n == index.n


def test_labels_follow_the_treebank_words(default_model):
    from analysis.core.encoding import encode
    from analysis.syntax.treebank import make_treebank

    tb = make_treebank({"id": ["1"], "words": [["Unbelievably", "good", "food", "."]],
                        "heads": [[2, 3, 0, 3]], "deprels": [["advmod", "amod", "root",
                                                               "punct"]],
                        "upos": [["ADV", "ADJ", "NOUN", "PUNCT"]]})
    corpus = search_corpus(tb)
    assert corpus.texts == ["Unbelievably good food ."]
    enc = encode(default_model.tokenizer, corpus.texts[0])
    labels = corpus.piece_labels(0, enc)
    got = [(t, u) for t, u, s in zip(enc.tokens, labels["upos"], enc.special) if not s]
    # every piece of "Unbelievably" is an adverb
    assert [u for t, u in got[:-3]] == ["ADV"] * (len(got) - 3)
    assert got[-3:] == [("good", "ADJ"), ("food", "NOUN"), (".", "PUNCT")]
    assert labels["deprel"][-2] == "punct"


def test_absa_roles_follow_the_term_spans(default_model):
    from analysis.absa.data import to_dataset
    from analysis.core.encoding import encode

    row = {"id": "1", "text": "The sushi was great but the waiter was rude.",
           "terms": [{"term": "sushi", "start": 4, "end": 9, "category": "food",
                      "polarity": "positive",
                      "opinions": [{"word": "great", "start": 14, "end": 19}]},
                     {"term": "waiter", "start": 28, "end": 34, "category": "service",
                      "polarity": "negative", "opinions": []}],
           "categories": [{"category": "food", "polarity": "positive"},
                          {"category": "service", "polarity": "negative"}],
           "source": "test"}
    corpus = search_corpus(to_dataset([row]))
    enc = encode(default_model.tokenizer, corpus.texts[0])
    roles = dict(zip(enc.tokens, corpus.piece_labels(0, enc)["role"]))
    assert roles["su"] == roles["##shi"] == roles["waiter"] == "aspect term"
    assert roles["great"] == "opinion word"
    assert roles["rude"] == roles["was"] == "other"
