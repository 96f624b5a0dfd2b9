"""Heads as dependency parsers (Clark et al. 2019, section 4): word maps, predictions, accuracy
per relation, the offset baseline, the best head, the streamed pass and its JSON, the reading
(docs/METHODS.md section 10, "Syntactic heads")."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from analysis.syntax.heads import (HeadsAccumulator, best_head, offset_baseline, predictions,
                                   relation_accuracy, relation_hits, word_map)
from analysis.syntax.run import syntax_heads
from analysis.syntax.reading import compare_rows, example_sentences, reading, relation_rows
from analysis.syntax.treebank import read_conllu
from analysis.syntax.words import EncodedTreebank

# "the cat sat": the -> cat (det), cat -> sat (nsubj), sat = root
HEADS = [2, 3, 0]
RELS = ["det", "nsubj", "root"]


def test_word_map_pools_zeroes_the_diagonal_and_drops_specials():
    # tokens: [CLS] the ca ##t sat [SEP]; words: 0 [CLS], 1 the, 2 cat, 3 sat, 4 [SEP]
    word_ids = [0, 1, 2, 2, 3, 4]
    A = np.arange(36, dtype=float).reshape(6, 6)
    W = word_map(A, word_ids)
    assert W.shape == (3, 3)
    assert W[0, 1] == A[1, 2] + A[1, 3]                      # to "cat": sum of its columns
    assert W[1, 0] == (A[2, 1] + A[3, 1]) / 2                # from "cat": mean of its rows
    assert W[1, 2] == (A[2, 4] + A[3, 4]) / 2
    assert np.all(np.diag(W) == 0)
    # leading axes (layers, heads) are kept
    assert word_map(np.stack([A, A]), word_ids).shape == (2, 3, 3)


def test_predictions_both_directions_and_ties():
    W = np.array([[0, .7, .3],
                  [.1, 0, .9],
                  [.5, .5, 0]])
    assert predictions(W, "dep_to_head").tolist() == [2, 3, 1]  # row argmax, tie -> first
    assert predictions(W, "head_to_dep").tolist() == [3, 1, 2]  # column argmax
    with pytest.raises(ValueError):
        predictions(W, "sideways")


def test_relation_hits_and_accuracy():
    preds = np.array([[2, 3, 1],      # det right, nsubj right
                      [3, 3, 2],      # det wrong, nsubj right
                      [2, 1, 2]])     # det right, nsubj wrong
    hits = relation_hits(preds, HEADS, RELS)
    assert set(hits) == {"all", "det", "nsubj"}               # the root is no dependent
    assert hits["det"][0].tolist() == [1, 0, 1] and hits["det"][1] == 1
    assert hits["all"][0].tolist() == [2, 1, 1] and hits["all"][1] == 2
    acc, n = relation_accuracy(preds, HEADS, RELS, "all")
    assert n == 2 and acc.tolist() == [1.0, 0.5, 0.5]
    # over two sentences: "a b" with b -> a (det) pooled with the first
    acc, n = relation_accuracy([preds[:1], np.array([[2, 2]])], [HEADS, [0, 1]],
                               [RELS, ["root", "det"]], "det")
    assert n == 2 and acc.tolist() == [0.5]
    acc, n = relation_accuracy(preds, HEADS, RELS, "obj")
    assert n == 0 and np.isnan(acc).all()


def test_offset_baseline_best_and_ties():
    # dependents at i with head g: offsets g - i
    heads = [2, 0, 2, 3, 2]          # 1->2 (+1), 3->2 (-1), 4->3 (-1), 5->2 (-3)
    rels = ["det", "root", "obj", "obj", "obj"]
    assert offset_baseline(heads, rels, "det") == {"offset": 1, "accuracy": 1.0}
    assert offset_baseline(heads, rels, "obj") == {"offset": -1, "accuracy": pytest.approx(2 / 3)}
    # all: +1 once, -1 twice
    assert offset_baseline(heads, rels, "all") == {"offset": -1, "accuracy": 0.5}
    # a tie between +1 and -1 goes to the negative offset; +2 vs -1 to the smaller |k|
    assert offset_baseline([2, 0, 2], ["x", "root", "x"], "x")["offset"] == -1
    assert offset_baseline([3, 0, 2], ["x", "root", "x"], "x")["offset"] == -1
    # beyond 5 never counts; over a list of sentences
    far = [7, 0, 2, 2, 2, 2, 2]
    got = offset_baseline([far, [2, 0]], [["x", "root"] + ["y"] * 5, ["x", "root"]], "x")
    assert got == {"offset": 1, "accuracy": 0.5}


def test_best_head_ties_prefer_dep_to_head_then_lower_layer():
    a = np.array([[0.2, 0.9], [0.9, 0.1]])
    b = np.array([[0.9, 0.0], [0.0, 0.0]])
    assert best_head(a, b) == {"layer": 0, "head": 1, "direction": "dep_to_head", "accuracy": 0.9}
    b[1, 1] = 0.95
    assert best_head(a, b) == {"layer": 1, "head": 1, "direction": "head_to_dep", "accuracy": 0.95}


def one_hot_maps(word_ids, heads, L=2, H=3):
    """Token maps where head (1, 2) looks from every word's first piece at its gold head's first
    piece (dep -> head) and every other head looks at the previous token."""
    T = len(word_ids)
    maps = np.zeros((L, H, T, T))
    maps[..., np.arange(T), np.maximum(np.arange(T) - 1, 0)] = 1.0
    first = {w: word_ids.index(w) for w in set(word_ids)}
    maps[1, 2] = 0
    for t, w in enumerate(word_ids):
        g = heads[w - 1] if 1 <= w <= len(heads) else 0
        maps[1, 2, t, first[g] if g else 0] = 1.0
    return maps


def test_accumulator_on_hand_maps():
    word_ids = [0, 1, 2, 2, 3, 4]
    enc = EncodedTreebank([], [], [], [], [], [], [])
    acc = HeadsAccumulator(enc, 2, 3)
    acc.add(one_hot_maps(word_ids, HEADS), word_ids, HEADS, RELS)
    rel = acc.relations()
    assert list(rel) == ["all", "det", "nsubj"]
    assert rel["all"].dep_to_head[1, 2] == 1.0 and rel["all"].n == 2
    assert rel["det"].best == {"layer": 1, "head": 2, "direction": "dep_to_head", "accuracy": 1.0}
    # previous-token heads: "the" looks only at [CLS] (dropped: an all-zero row picks word 1,
    # itself), "cat" at "the": 0 of 2
    assert rel["all"].dep_to_head[0, 0] == 0.0
    # head_to_dep of (1, 2): who looks most at "cat"? "the" (its dependent), not "sat"
    assert rel["nsubj"].head_to_dep[1, 2] == 0.0 and rel["det"].head_to_dep[1, 2] == 0.0
    assert rel["det"].baseline == {"offset": 1, "accuracy": 1.0}


TREEBANK = "\n".join([
    "1\tThe\t_\tDET\t_\t_\t2\tdet\t_\t_", "2\tsoup\t_\tNOUN\t_\t_\t4\tnsubj\t_\t_",
    "3\twas\t_\tAUX\t_\t_\t4\tcop\t_\t_", "4\tcold\t_\tADJ\t_\t_\t0\troot\t_\t_",
    "5\t.\t_\tPUNCT\t_\t_\t4\tpunct\t_\t_", "",
    "1\tMy\t_\tPRON\t_\t_\t2\tnmod:poss\t_\t_", "2\tfriends\t_\tNOUN\t_\t_\t3\tnsubj\t_\t_",
    "3\tloved\t_\tVERB\t_\t_\t0\troot\t_\t_", "4\tthe\t_\tDET\t_\t_\t7\tdet\t_\t_",
    "5\tunbelievably\t_\tADV\t_\t_\t6\tadvmod\t_\t_", "6\tgood\t_\tADJ\t_\t_\t7\tamod\t_\t_",
    "7\tbread\t_\tNOUN\t_\t_\t3\tobj\t_\t_", "",
    "1\tYes\t_\tINTJ\t_\t_\t0\troot\t_\t_", "2\t!\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_", "",
]) + "\n"


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


def test_syntax_heads_batched_equals_one_by_one_and_json(tiny):
    ds = read_conllu(TREEBANK.encode("utf-8"))
    seen = []
    a = syntax_heads(tiny, ds, batch_size=2, progress=lambda d, t: seen.append((d, t)))
    b = syntax_heads(tiny, ds, batch_size=1)
    assert seen[-1] == (3, 3)
    assert a.n_sentences == 3 and a.skipped == 0 and list(a.relations)[0] == "all"
    assert a.relations["all"].n == 11 and a.relations["det"].n == 2
    for rel, r in a.relations.items():
        s = b.relations[rel]
        assert r.n == s.n and np.abs(r.dep_to_head - s.dep_to_head).max() < 1e-9
        assert np.abs(r.head_to_dep - s.head_to_dep).max() < 1e-9
    # the numbers are those of the definition, sentence by sentence
    from analysis.syntax.heads import sentence_attention

    hits = 0
    for words, heads, rels in zip(a.words, a.heads, a.deprels):
        _, _, W = sentence_attention(tiny, words)
        got = relation_hits(predictions(W, "dep_to_head"), heads, rels).get("det")
        hits = hits + (got[0] if got else 0)
    assert np.allclose(a.relations["det"].dep_to_head, hits / 2)
    js = a.to_json()
    assert set(js) == {"n_sentences", "skipped", "relations"}
    det = js["relations"]["det"]
    assert set(det) == {"n", "dep_to_head", "head_to_dep", "best", "baseline", "gap_ci"}
    assert a.relations["det"].gap_ci == b.relations["det"].gap_ci  # batched or not, same
    assert np.array(det["dep_to_head"]).shape == (2, 4)
    assert set(det["best"]) == {"layer", "head", "direction", "accuracy"}
    assert det["baseline"] == {"offset": 1, "accuracy": 0.5}   # The -> soup +1, the -> bread +3
    # a maximum that leaves out one sentence: skipped and counted
    tiny_short = dataclasses.replace(tiny, max_length=8)
    c = syntax_heads(tiny_short, ds)
    assert c.n_sentences == 2 and c.skipped == 1 and c.to_json()["skipped"] == 1


def test_reading_rows_and_examples(tiny):
    ds = read_conllu(TREEBANK.encode("utf-8"))
    res = syntax_heads(tiny, ds)
    rows = relation_rows(res, min_count=2)
    assert [r["relation"] for r in rows] == ["all", "det", "nsubj", "punct"]
    det = rows[1]
    assert det["layer"] == res.relations["det"].best["layer"] + 1
    assert det["above baseline"] == pytest.approx(det["accuracy"] - 0.5)
    ex = example_sentences(res, "det", k=5)
    assert [e["index"] for e in ex] == [0, 1] and ex[0]["arcs"] == [(1, 2)]
    assert ex[1]["arcs"] == [(4, 7)] and ex[1]["words"][3] == "the"
    assert example_sentences(ds, "nmod:poss")[0]["arcs"] == [(1, 2)]
    assert example_sentences(ds, "all", k=1, max_words=2)[0]["id"] == "3"
    lines = reading(res, min_count=2)
    assert "of 3 kinds of word link (relations with at least 2 examples) have an attention " \
        "head that points from a word to the word it belongs to" in lines[0]
    assert lines[-1].startswith("Over all 11 word links, the best single attention head (head ")
    # grammar's "head" (the word a word belongs to) never appears as a head of the model
    assert not any("finds the head" in s or "dependents" in s for s in lines)
    assert reading(res, min_count=500)[0].startswith("No relation has 500 or more")
    cmp = compare_rows(res, res, min_count=2)
    assert all(r["difference"] == 0 for r in cmp) and len(cmp) == 4


def test_ewt_some_head_beats_the_offset_on_det(shared_data, default_model):
    ds = read_conllu(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu", max_sentences=300)
    res = syntax_heads(default_model, ds)
    det = res.relations["det"]
    assert det.n > 300
    assert det.baseline["offset"] == 1 and 0.4 < det.baseline["accuracy"] < 0.7
    assert det.best["accuracy"] > det.baseline["accuracy"] + 0.1
    obj = res.relations["obj"]
    assert obj.best["accuracy"] > obj.baseline["accuracy"] + 0.15


def test_reading_says_what_a_relation_is_in_everyday_words():
    """A planted result for 'mark' (the issue's example): the sentence explains the relation,
    names the attention head as one, and puts the numbers after the words."""
    from types import SimpleNamespace

    from analysis.syntax.reading import reading, relation_words

    mark = SimpleNamespace(n=120, best={"layer": 4, "head": 7, "direction": "head_to_dep",
                                        "accuracy": 0.69},
                           baseline={"offset": -2, "accuracy": 0.40})
    res = SimpleNamespace(relations={"mark": mark}, n_sentences=50)
    lines = reading(res, min_count=100)
    assert lines[1] == ("mark (a word that opens a clause (like 'that' or 'because')): from the "
                        "word each such word belongs to, attention head 8 of layer 5 looks most "
                        "at that word in 69% of 120 cases; always taking the word 2 places "
                        "before is right in 40% (29 points less).")
    assert relation_words("obl:npmod") == relation_words("obl")
    assert relation_words("weird") == "'weird' word"


# -- the lead over the baseline with its interval (issue 35) -----------------------------------

def _planted_sentences(words, head_hits, base_hits, offset=1, L=1, H=2):
    """Per-sentence records as HeadsAccumulator keeps them, for relation 'x' whose best head
    is layer 0 head 1 (dep_to_head)."""
    out = []
    for n, a, b in zip(words, head_hits, base_hits):
        d2h = np.zeros((L, H), np.uint16)
        d2h[0, 1] = a
        out.append({"x": (d2h, np.zeros((L, H), np.uint16), n, {offset: b})})
    return out


def test_gap_interval_is_the_seeded_sentence_bootstrap():
    from analysis.syntax.heads import gap_ci

    words, hit, base = [3, 5, 2, 4, 6, 1, 3], [3, 4, 1, 4, 5, 1, 2], [1, 2, 1, 1, 3, 0, 1]
    sents = _planted_sentences(words, hit, base)
    best = {"layer": 0, "head": 1, "direction": "dep_to_head", "accuracy": 20 / 24}
    lo, hi = gap_ci(sents, "x", best, 1)
    # by hand: 1000 multinomial resamples of the 7 sentences (seed 0), the 2.5% and 97.5%
    # quantiles of (sum hits - sum baseline hits) / sum words
    c = np.random.default_rng(0).multinomial(7, np.full(7, 1 / 7), size=1000).astype(float)
    gaps = (c @ np.array(hit, float) - c @ np.array(base, float)) / (c @ np.array(words, float))
    assert (lo, hi) == pytest.approx((np.quantile(gaps, 0.025), np.quantile(gaps, 0.975)))
    assert 0 < lo < 11 / 24 < hi
    assert gap_ci(sents[:1], "x", best, 1) is None  # one sentence: no interval


def test_accumulator_keeps_each_sentence_hits_and_offsets():
    word_ids = [0, 1, 2, 2, 3, 4]
    acc = HeadsAccumulator(EncodedTreebank([], [], [], [], [], [], []), 2, 3)
    for _ in range(2):
        acc.add(one_hot_maps(word_ids, HEADS), word_ids, HEADS, RELS)
    assert len(acc.sentences) == 2 and sorted(acc.sentences[0]) == ["all", "det", "nsubj"]
    d2h, h2d, n, offs = acc.sentences[0]["det"]
    assert n == 1 and d2h[1, 2] == 1 and h2d[1, 2] == 0 and offs == {1: 1}
    rel = acc.relations()
    # two identical sentences, every resample the same: the interval is the gap itself
    assert rel["det"].gap_ci == pytest.approx((0.0, 0.0))  # best 1.0, baseline +1 1.0
    assert rel["det"].to_json()["gap_ci"] == [0.0, 0.0]


def _rel(acc, base, ci, n=300):
    from types import SimpleNamespace

    return SimpleNamespace(n=n, best={"layer": 2, "head": 0, "direction": "dep_to_head",
                                      "accuracy": acc},
                           baseline={"offset": 1, "accuracy": base}, gap_ci=ci)


def test_reading_gives_the_lead_interval_and_says_within_noise():
    from types import SimpleNamespace

    res = SimpleNamespace(n_sentences=80, relations={
        "det": _rel(0.9, 0.5, (0.351, 0.448)), "amod": _rel(0.62, 0.5, (-0.013, 0.254))})
    lines = reading(res, min_count=100)
    assert lines[0].endswith("(80 sentences); for 1 of them the lead is within noise (its 95% "
                             "interval over sentences covers 0).")
    assert lines[1].endswith("is right in 50% (40 points less; 95% 35.1 to 44.8 points).")
    assert lines[2].endswith("is right in 50% (12 points less, within noise; 95% -1.3 to "
                             "25.4 points).")
    rows = relation_rows(res, min_count=100)
    assert rows[1]["above baseline 95%"] == (-0.013, 0.254)
    from ui.syntax.blocks import heads_table

    table = heads_table(res, 100)
    assert table["gain 95% (points)"].tolist() == ["35.1 to 44.8",
                                                   "-1.3 to 25.4 (within noise)"]
    assert table["gain (points)"].tolist() == [40.0, 12.0]
