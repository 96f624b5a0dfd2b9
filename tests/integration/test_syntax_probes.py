"""Structural probes (Hewitt & Manning 2019): tree distances and depths, MST and UUAS,
Spearman, root accuracy, the linear chain, a probe that learns a planted tree, the run per
layer and its JSON (docs/METHODS.md section 10, "Structural probes")."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from scipy.stats import spearmanr

from analysis.core.errors import InputError
from analysis.syntax.probes import (ProbeResult, example_tree, probe_layers, split_treebank,
                                    torch_threads, train_depth_probe, train_distance_probe)
from analysis.syntax.states import extract_split_states, extract_word_states
from analysis.syntax.treebank import make_treebank, read_conllu
from analysis.syntax.trees import (chain_edges, corpus_uuas, depth_spearman, distance_spearman,
                                   gold_edges, linear_chain_uuas, mst_edges, non_punct,
                                   root_accuracy, row_spearman, sentence_uuas_counts,
                                   tree_depths, tree_distances, uuas)

# 1 The  2 cat  3 sat  4 on  5 mats  6 .      (The->cat->sat, on->mats->sat, .->sat)
HEADS = [2, 3, 0, 5, 3, 3]
UPOS = ["DET", "NOUN", "VERB", "ADP", "NOUN", "PUNCT"]


def test_tree_distances_and_depths():
    D = tree_distances(HEADS)
    assert D[0].tolist() == [0, 1, 2, 4, 3, 3]
    assert D[3, 4] == 1 and D[3, 5] == 3 and (D == D.T).all()
    assert tree_depths(HEADS).tolist() == [2, 1, 0, 2, 1, 1]
    assert tree_depths([0]).tolist() == [0] and tree_distances([0]).tolist() == [[0]]


def test_gold_edges_mst_and_uuas():
    assert gold_edges(HEADS) == {(0, 1), (1, 2), (3, 4), (2, 4), (2, 5)}
    keep = non_punct(UPOS)
    assert keep.tolist() == [0, 1, 2, 3, 4]
    assert gold_edges(HEADS, keep) == {(0, 1), (1, 2), (3, 4), (2, 4)}
    # the MST of the tree's own distances is the tree
    assert set(mst_edges(tree_distances(HEADS))) == gold_edges(HEADS)
    # a hand matrix: 0-1 and 1-2 short, 0-2 long
    M = np.array([[0, 1, 5], [1, 0, 2], [5, 2, 0]], dtype=float)
    assert mst_edges(M) == [(0, 1), (1, 2)]
    # zero distances between different words still count as edges (the shift keeps the tree)
    Z = np.array([[0, 0, 3], [0, 0, 0.5], [3, 0.5, 0]])
    assert mst_edges(Z) == [(0, 1), (1, 2)]
    assert mst_edges(np.zeros((3, 3))) and len(mst_edges(np.zeros((3, 3)))) == 2
    assert mst_edges(np.zeros((1, 1))) == []
    assert uuas([(0, 1), (1, 3)], {(0, 1), (1, 2)}) == 0.5
    assert np.isnan(uuas([], set()))


def test_sentence_uuas_leaves_out_punctuation():
    D = tree_distances(HEADS).astype(float)
    D[5, :] = D[:, 5] = 0.1  # the full stop is close to everything: it must not matter
    np.fill_diagonal(D, 0)
    c, t, pred, gold = sentence_uuas_counts(D, HEADS, UPOS)
    assert (c, t) == (4, 4) and all(5 not in e for e in pred)
    # a chain-shaped prediction: 0-1, 1-2, 2-3, 3-4 -> 3 of 4 gold edges (0-1, 1-2, 3-4)
    chain = np.abs(np.subtract.outer(np.arange(6), np.arange(6))).astype(float)
    assert sentence_uuas_counts(chain, HEADS, UPOS)[:2] == (3, 4)
    assert corpus_uuas([D, chain], [HEADS, HEADS], [UPOS, UPOS]) == 7 / 8


def test_linear_chain_uuas():
    assert chain_edges(UPOS) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert linear_chain_uuas([HEADS], [UPOS]) == 0.75
    # punctuation in the middle is skipped: "a , b" with b -> a is one chain edge a-b
    assert chain_edges(["X", "PUNCT", "X"]) == [(0, 2)]
    assert linear_chain_uuas([HEADS, [0, 1, 1]], [UPOS, ["X", "PUNCT", "X"]]) == 4 / 5


def test_row_spearman_matches_scipy():
    rng = np.random.default_rng(0)
    P = rng.random((4, 7))
    G = rng.integers(0, 4, (4, 7)).astype(float)  # ties, as tree distances have
    want = [spearmanr(p, g).statistic for p, g in zip(P, G)]
    assert np.allclose(row_spearman(P, G), want)
    assert np.isnan(row_spearman(np.ones((1, 5)), G[:1, :5])[0])


def test_distance_spearman_averages_per_length_then_over_lengths():
    def sent(n, flip):
        heads = [0] + list(range(1, n))  # a chain
        G = tree_distances(heads)
        return (-G if flip else G), G
    # length 5: two sentences (+1 and -1 -> mean 0); length 6: one (+1); length 3: left out
    s5a, s5b, s6, s3 = sent(5, False), sent(5, True), sent(6, False), sent(3, True)
    got = distance_spearman([s5a[0], s5b[0], s6[0], s3[0]], [s5a[1], s5b[1], s6[1], s3[1]])
    assert got == pytest.approx((0 + 1) / 2)
    assert np.isnan(distance_spearman([s3[0]], [s3[1]]))
    # depth: same rule, one value per sentence
    h5, h6 = [0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5]
    got = depth_spearman([np.arange(5.), -np.arange(5.), np.arange(6.)], [h5, h5, h6])
    assert got == pytest.approx(0.5)


def test_root_accuracy():
    shallow_root = np.array([2, 1, 0.1, 2, 1, 0.0])  # the full stop is shallower: ignored
    wrong = np.array([0.0, 1, 2, 2, 1, 1])
    assert root_accuracy([shallow_root, wrong], [HEADS, HEADS], [UPOS, UPOS]) == 0.5
    # a sentence whose root is punctuation is left out
    assert np.isnan(root_accuracy([np.zeros(2)], [[0, 1]], [["PUNCT", "X"]]))


def random_tree(rng, n):
    """A random tree over n words (heads 1-based)."""
    order = rng.permutation(n)
    heads = [0] * n
    for k in range(1, n):
        heads[order[k]] = int(order[rng.integers(0, k)]) + 1
    return heads


def planted(heads, A, m):
    """Word vectors h_i = A p_i with p_i = sum of one basis vector e_d per edge (d = the edge's
    dependent) on the path from the root: ||p_i - p_j||^2 = tree distance, ||p_i||^2 = depth."""
    n = len(heads)
    P = np.zeros((n, m))
    for i in range(n):
        j = i
        while heads[j] != 0:
            P[i, j] = 1.0
            j = heads[j] - 1
    return P @ A.T


def test_probes_learn_a_planted_tree():
    rng = np.random.default_rng(1)
    m, D = 8, 16
    A = rng.normal(size=(D, m))
    trees = [random_tree(rng, int(rng.integers(5, m + 1))) for _ in range(240)]
    vecs = [planted(h, A, m) for h in trees]
    P = planted(trees[0], np.eye(m), m)
    assert np.allclose(((P[:, None] - P[None]) ** 2).sum(-1), tree_distances(trees[0]))
    train, test = slice(0, 200), slice(200, 240)
    kw = dict(rank=m, seed=0, max_epochs=100, batch_size=5, patience=6, decay=0.5)
    dist = train_distance_probe(vecs[train], trees[train], **kw)
    depth = train_depth_probe(vecs[train], trees[train], **kw)
    upos = [["X"] * len(h) for h in trees[test]]
    pred = [dist.distances(v) for v in vecs[test]]
    gold = [tree_distances(h) for h in trees[test]]
    assert max(np.abs(p - g).max() for p, g in zip(pred, gold)) < 0.05
    assert corpus_uuas(pred, trees[test], upos) == 1.0
    # near 1, not 1: tree distances have ties that any tiny error breaks
    assert distance_spearman(pred, gold) > 0.9
    depths = [depth.depths(v) for v in vecs[test]]
    assert root_accuracy(depths, trees[test], upos) == 1.0
    assert depth_spearman(depths, trees[test]) > 0.9
    assert dist.B.shape == (m, D) and dist.kind == "distance" and dist.epochs >= 1


def test_training_is_seeded_and_threads_are_restored():
    import torch

    rng = np.random.default_rng(0)
    trees = [random_tree(rng, 6) for _ in range(12)]
    vecs = [rng.normal(size=(6, 8)) for _ in trees]
    before = torch.get_num_threads()
    a = train_distance_probe(vecs, trees, rank=4, seed=3, max_epochs=3)
    b = train_distance_probe(vecs, trees, rank=4, seed=3, max_epochs=3)
    c = train_distance_probe(vecs, trees, rank=4, seed=4, max_epochs=3)
    assert np.array_equal(a.B, b.B) and not np.array_equal(a.B, c.B)
    assert torch.get_num_threads() == before
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(TypeError, match="Unknown probe option"):
        train_depth_probe(vecs, trees, speed=2)
    with pytest.raises(InputError):
        train_depth_probe([], [])


TREEBANK = "\n\n".join("\n".join(
    f"{i}\t{w}\t_\t{u}\t_\t_\t{h}\t{r}\t_\t_" for i, (w, u, h, r) in enumerate(s, 1))
    for s in [
        [("The", "DET", 2, "det"), ("soup", "NOUN", 4, "nsubj"), ("was", "AUX", 4, "cop"),
         ("cold", "ADJ", 0, "root"), (".", "PUNCT", 4, "punct")],
        [("We", "PRON", 2, "nsubj"), ("loved", "VERB", 0, "root"), ("the", "DET", 4, "det"),
         ("bread", "NOUN", 2, "obj")],
        [("Service", "NOUN", 3, "nsubj"), ("was", "AUX", 3, "cop"), ("slow", "ADJ", 0, "root"),
         ("!", "PUNCT", 3, "punct")],
        [("A", "DET", 2, "det"), ("waiter", "NOUN", 3, "nsubj"), ("smiled", "VERB", 0, "root")],
    ]) + "\n\n"


def test_word_states_and_probe_layers_on_a_tiny_model(tiny_model_dir):
    from analysis.core.models import load_model

    tiny = load_model(str(tiny_model_dir("bert")))
    ds = read_conllu(TREEBANK.encode("utf-8"))
    st = extract_word_states(tiny, ds, batch_size=3)
    assert st.n_sentences == 4 and st.n_layers == 3 and st.layers[0].shape == (16, 32)
    assert st.sentence(1, 2).shape == (4, 32)
    # the word vector is the mean of the word's pieces, whatever the batch
    one = extract_word_states(tiny, ds, batch_size=1)
    assert all(np.allclose(x, y, atol=1e-5) for x, y in zip(st.layers, one.layers))
    sub = st.subset([2, 0])
    assert sub.heads == [st.heads[2], st.heads[0]]
    assert np.array_equal(sub.sentence(1, 1), st.sentence(0, 1))
    # the training and evaluation files in one pass: each file's own states, the evaluation's
    # offsets from 0 (its arrays views of the pass's)
    tr, ev = extract_split_states(tiny, ds.select(range(3)), ds.select(range(1, 4)),
                                  batch_size=2)
    for got, want in ((tr, extract_word_states(tiny, ds.select(range(3)))),
                      (ev, extract_word_states(tiny, ds.select(range(1, 4))))):
        assert got.offsets.tolist() == want.offsets.tolist() and got.heads == want.heads
        assert got.words == want.words and got.rows == want.rows == [0, 1, 2]
        assert all(np.allclose(x, y, atol=1e-5) for x, y in zip(got.layers, want.layers))
    assert np.allclose(ev.sentence(0, 2), tr.sentence(1, 2), atol=1e-5)  # the same sentence
    assert ev.layers[1].base is not None and tr.layers[1].base is ev.layers[1].base

    seen = []
    res = probe_layers(tiny, ds.select(range(3)), ds.select(range(3, 4)), rank=4, seed=0,
                       max_epochs=2, progress=lambda d, t: seen.append((d, t)))
    assert isinstance(res, ProbeResult) and [r["layer"] for r in res.layers] == [0, 1, 2]
    assert seen[-1][0] == seen[-1][1]
    js = res.to_json()
    assert set(js) == {"layers", "baselines"} and set(js["baselines"]) == {"linear_chain_uuas"}
    assert set(js["layers"][0]) == {"layer", "uuas", "dspr", "root_acc", "depth_spearman"}
    assert js["baselines"]["linear_chain_uuas"] == 1.0  # "A waiter smiled" is a chain
    assert js["layers"][0]["dspr"] is None  # a 3-word sentence: no length in 5..50
    pred, gold, words = example_tree(res, 0, 1)
    assert words == ["A", "waiter", "smiled"] and gold == [(0, 1), (1, 2)] and len(pred) == 2
    with pytest.raises(InputError):
        example_tree(res, 5, 1)
    # no evaluation set: the last quarter of the training file
    tr, ev = split_treebank(ds)
    assert (len(tr), len(ev)) == (3, 1)
    res2 = probe_layers(tiny, ds, rank=2, max_epochs=1, layers=[2])
    assert res2.n_train == 3 and res2.n_eval == 1 and [r["layer"] for r in res2.layers] == [2]
    with pytest.raises(InputError, match="at least two"):
        split_treebank(ds.select(range(1)))
    with pytest.raises(InputError, match="rank"):
        probe_layers(tiny, ds, rank=0)
    with pytest.raises(InputError, match="^The probe rank must be from 1 to 4,096, not "
                                         "1,000,000,000.$"):  # the page's path too
        probe_layers(tiny, ds, rank=10**9)


def test_probes_side_by_side_equal_one_at_a_time(tiny_model_dir, monkeypatch):
    """probe_layers trains its probes on probe_workers() threads: the probes (their maps, to
    the bit) and the scores are those of one probe at a time; a stop (progress raising)
    leaves the probes not started untrained."""
    import torch

    from analysis.core.models import load_model
    from analysis.syntax import probes as mod

    tiny = load_model(str(tiny_model_dir("bert")))
    ds = read_conllu(TREEBANK.encode("utf-8"))
    kw = dict(rank=4, seed=1, max_epochs=3)
    with monkeypatch.context() as m:  # the arithmetic, without changing the process's threads
        m.setattr(torch, "get_num_threads", lambda: 4)
        assert (mod.probe_workers(1), mod.probe_workers(2), mod.probe_workers(None)) == (4, 2, 1)
    monkeypatch.setattr(mod, "probe_workers", lambda threads=1: 2)
    together = probe_layers(tiny, ds.select(range(3)), ds.select(range(3, 4)), **kw)
    monkeypatch.setattr(mod, "probe_workers", lambda threads=1: 1)
    alone = probe_layers(tiny, ds.select(range(3)), ds.select(range(3, 4)), **kw)
    np.testing.assert_equal(together.layers, alone.layers)  # NaN (no length 5-50) == NaN
    for (d1, p1), (d2, p2) in zip(together.probes, alone.probes):
        assert np.array_equal(d1.B, d2.B) and np.array_equal(p1.B, p2.B)
    states = extract_word_states(tiny, ds.select(range(3)))
    for layer in (0, 2):  # each in its place: layer l's distance, then depth probe
        x = states.sentences(layer)
        assert np.array_equal(together.probes[layer][0].B,
                              train_distance_probe(x, states.heads, **kw).B)
        assert np.array_equal(together.probes[layer][1].B,
                              train_depth_probe(x, states.heads, **kw).B)

    def stop(done, total):
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        probe_layers(tiny, ds.select(range(3)), ds.select(range(3, 4)), progress=stop, **kw)

    # a distance run evaluates its layers once their depth run is done: a depth run that
    # fails gives its error and leaves no distance run waiting (run in a thread: a waiting run
    # would hang the call, which the join's timeout turns into a failure)
    real = mod.train_layers

    def failing(layers, offsets, targets, kind, **k):
        if kind == "depth":
            raise RuntimeError("depth failed")
        return real(layers, offsets, targets, kind, **k)

    monkeypatch.setattr(mod, "train_layers", failing)
    for workers in (1, 2):
        monkeypatch.setattr(mod, "probe_workers", lambda threads=1, w=workers: w)
        got = []

        def call():
            try:
                probe_layers(tiny, ds.select(range(3)), ds.select(range(3, 4)), **kw)
            except RuntimeError as e:
                got.append(str(e))

        t = threading.Thread(target=call, daemon=True)
        t.start()
        t.join(timeout=120)
        assert not t.is_alive() and got == ["depth failed"]


def test_ewt_probe_beats_the_linear_chain(shared_data, default_model):
    ds = read_conllu(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu")
    res = probe_layers(default_model, ds.select(range(400)), ds.select(range(1500, 1650)),
                       layers=[0, 3])
    emb, mid = res.layers
    chain = res.baselines["linear_chain_uuas"]
    assert 0.35 < chain < 0.55
    assert mid["uuas"] > chain + 0.05
    assert mid["uuas"] > emb["uuas"] and mid["dspr"] > emb["dspr"]
    assert mid["root_acc"] > 0.4


def test_make_treebank_rows_round_trip():
    ds = make_treebank({"id": ["x"], "words": [["a"]], "heads": [[0]], "deprels": [["root"]],
                        "upos": [["X"]]})
    assert ds[0] == {"id": "x", "words": ["a"], "heads": [0], "deprels": ["root"], "upos": ["X"]}
