"""Trees and the structural-probe metrics (Hewitt & Manning 2019; docs/METHODS.md section 10,
"Structural probes").

Word indices here are 0-based positions in the sentence; ``heads`` are the treebank's 1-based
heads (0 = root). Edges are undirected pairs ``(i, j)`` with ``i < j``. Punctuation is UPOS
``PUNCT``.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

PUNCT = "PUNCT"
SPEARMAN_LENGTHS = (5, 50)  # sentence lengths (words) whose Spearman values are averaged


def tree_distances(heads) -> np.ndarray:
    """[n, n] number of edges between every two words of the tree (scipy shortest paths)."""
    # lazy: imported when used: scipy (heavy)
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    n = len(heads)
    deps = [i for i, h in enumerate(heads) if h != 0]
    graph = csr_matrix((np.ones(len(deps)), (deps, [heads[i] - 1 for i in deps])), shape=(n, n))
    return shortest_path(graph, directed=False, unweighted=True)


def tree_depths(heads) -> np.ndarray:
    """[n] number of edges from every word to the root (the root has depth 0)."""
    n = len(heads)
    depth = np.full(n, -1, dtype=np.int64)
    for start in range(n):
        path, i = [], start
        while depth[i] < 0 and heads[i] != 0:
            path.append(i)
            i = heads[i] - 1
        d = depth[i] if depth[i] >= 0 else 0
        depth[i] = d
        for j in reversed(path):
            d += 1
            depth[j] = d
    return depth


def non_punct(upos) -> np.ndarray:
    """Indices of the words whose UPOS is not PUNCT."""
    return np.array([i for i, u in enumerate(upos) if u != PUNCT], dtype=np.int64)


def gold_edges(heads, keep=None) -> set[tuple[int, int]]:
    """The tree's undirected edges; with ``keep`` (word indices) only edges between two kept
    words."""
    keep_set = set(range(len(heads))) if keep is None else set(int(k) for k in keep)
    out = set()
    for i, h in enumerate(heads):
        if h != 0 and i in keep_set and h - 1 in keep_set:
            out.add((min(i, h - 1), max(i, h - 1)))
    return out


def mst_edges(distance_matrix) -> list[tuple[int, int]]:
    """Edges of the minimum spanning tree of a symmetric distance matrix (its upper
    triangle). When every pair's distance differs, the tree is unique: Prim's algorithm on the
    dense matrix (:func:`_prim`, a few numpy steps a word; issue 48: scipy's sparse-graph call
    cost ~3 ms a sentence, most of a layer's evaluation). With ties, scipy's
    ``minimum_spanning_tree`` as before, on the upper triangle rescaled to [1, 2] so that zero
    distances stay edges (a shift and a positive scale leave the tree unchanged)."""
    D = np.asarray(distance_matrix, dtype=np.float64)
    n = D.shape[0]
    if n < 2:
        return []
    iu = np.triu_indices(n, 1)
    vals = D[iu]
    if len(np.unique(vals)) == len(vals):
        return _prim(np.triu(D, 1) + np.triu(D, 1).T)
    # lazy: imported when used: scipy (heavy)
    from scipy.sparse.csgraph import minimum_spanning_tree

    span = vals.max() - vals.min()
    # map to [1, 2]: every pair stays an edge (scipy drops entries within 1e-8 of 0) and the
    # same constant added to every pair, then one positive factor, leave the tree unchanged
    vals = (vals - vals.min()) / (span if span > 0 else 1.0) + 1.0
    M = np.zeros((n, n))
    M[iu] = vals
    tree = minimum_spanning_tree(M).tocoo()
    return sorted((int(min(i, j)), int(max(i, j))) for i, j in zip(tree.row, tree.col))


def _prim(W: np.ndarray) -> list[tuple[int, int]]:
    """The minimum spanning tree of the complete graph with symmetric weights ``W`` [n, n]
    (distinct off-diagonal weights: the tree is unique), grown from word 0."""
    n = W.shape[0]
    inside = np.zeros(n, dtype=bool)
    inside[0] = True
    best, parent = W[0].copy(), np.zeros(n, dtype=np.int64)
    edges = []
    for _ in range(n - 1):
        cand = np.where(inside, np.inf, best)
        j = int(np.argmin(cand))
        i = int(parent[j])
        edges.append((min(i, j), max(i, j)))
        inside[j] = True
        closer = W[j] < best
        best = np.where(closer, W[j], best)
        parent = np.where(closer, j, parent)
    return sorted(edges)


def uuas(pred_edges, gold) -> float:
    """Share of the gold edges found among the predicted edges (NaN when there is none)."""
    gold = set(gold)
    if not gold:
        return float("nan")
    return len(set(pred_edges) & gold) / len(gold)


def sentence_uuas_counts(pred_dist, heads, upos) -> tuple[int, int, list, set]:
    """(correct, gold count, predicted edges, gold edges) of one sentence: the MST of the
    predicted distances among the non-punctuation words against the gold edges among them."""
    keep = non_punct(upos)
    gold = gold_edges(heads, keep)
    if len(keep) < 2:
        return 0, len(gold), [], gold
    sub = np.asarray(pred_dist)[np.ix_(keep, keep)]
    pred = [(int(keep[i]), int(keep[j])) for i, j in mst_edges(sub)]
    return len(set(pred) & gold), len(gold), pred, gold


def corpus_uuas(pred_dists, heads_list, upos_list) -> float:
    """UUAS over a corpus: correct edges over gold edges, summed over sentences."""
    correct = total = 0
    for D, h, u in zip(pred_dists, heads_list, upos_list):
        c, t, _, _ = sentence_uuas_counts(D, h, u)
        correct, total = correct + c, total + t
    return correct / total if total else float("nan")


def chain_edges(upos) -> list[tuple[int, int]]:
    """The linear chain: each non-punctuation word linked to the next one."""
    keep = non_punct(upos)
    return [(int(a), int(b)) for a, b in zip(keep[:-1], keep[1:])]


def linear_chain_uuas(heads_list, upos_list) -> float:
    """UUAS of the linear chain over a corpus (one sentence: pass one-element lists)."""
    correct = total = 0
    for h, u in zip(heads_list, upos_list):
        gold = gold_edges(h, non_punct(u))
        correct += len(set(chain_edges(u)) & gold)
        total += len(gold)
    return correct / total if total else float("nan")


def average_ranks(a) -> np.ndarray:
    """Ranks along the last axis from 1, ties given their average rank: ``scipy.stats.
    rankdata(a, axis=-1)`` for finite numbers, in a few numpy steps (its per-call overhead was
    most of a layer's Spearman values)."""
    a = np.asarray(a, dtype=np.float64)
    flat = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)
    m, n = flat.shape
    order = np.argsort(flat, axis=1, kind="stable")
    s = np.take_along_axis(flat, order, 1)
    pos = np.broadcast_to(np.arange(n), (m, n))
    first = np.ones((m, n), dtype=bool)
    first[:, 1:] = s[:, 1:] != s[:, :-1]
    last = np.ones((m, n), dtype=bool)
    last[:, :-1] = s[:, :-1] != s[:, 1:]
    start = np.maximum.accumulate(np.where(first, pos, 0), axis=1)
    end = np.minimum.accumulate(np.where(last, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((m, n))
    np.put_along_axis(ranks, order, (start + end) / 2.0 + 1.0, 1)
    return ranks.reshape(a.shape)


def row_spearman(P, G) -> np.ndarray:
    """Spearman correlation of every row of P with the same row of G (average ranks for ties,
    as ``scipy.stats.spearmanr``); NaN for a constant row."""
    rp = average_ranks(P)
    rg = average_ranks(G)
    rp = rp - rp.mean(-1, keepdims=True)
    rg = rg - rg.mean(-1, keepdims=True)
    den = np.sqrt((rp ** 2).sum(-1) * (rg ** 2).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rp * rg).sum(-1) / np.where(den > 0, den, 1.0), np.nan)


def _mean_over_lengths(by_length: dict) -> float:
    means = [np.nanmean(v) for _, v in sorted(by_length.items())
             if len(v) and not np.all(np.isnan(v))]
    return float(np.mean(means)) if means else float("nan")


def distance_spearman(pred_dists, gold_dists) -> float:
    """DSpr: the Spearman correlation of each word's row of predicted distances with its row
    of tree distances (the whole row, the word itself included), averaged over all rows of the
    sentences of each length n with 5 <= n <= 50, then over those lengths."""
    lo, hi = SPEARMAN_LENGTHS
    by_length = defaultdict(list)
    for P, G in zip(pred_dists, gold_dists):
        n = len(G)
        if lo <= n <= hi:
            by_length[n].extend(row_spearman(P, G).tolist())
    return _mean_over_lengths(by_length)


def depth_spearman(pred_depths, heads_list) -> float:
    """The Spearman correlation of predicted depths with tree depths per sentence, averaged
    over the sentences of each length 5..50, then over those lengths."""
    lo, hi = SPEARMAN_LENGTHS
    by_length = defaultdict(list)
    for p, h in zip(pred_depths, heads_list):
        n = len(h)
        if lo <= n <= hi:
            by_length[n].append(float(row_spearman(p, tree_depths(h))))
    return _mean_over_lengths(by_length)


def root_accuracy(pred_depths, heads_list, upos_list) -> float:
    """Share of sentences whose shallowest non-punctuation word (by predicted depth; ties to
    the first) is the gold root; sentences whose root is punctuation are left out."""
    hits = total = 0
    for p, h, u in zip(pred_depths, heads_list, upos_list):
        keep = non_punct(u)
        root = list(h).index(0)
        if not len(keep) or root not in set(keep.tolist()):
            continue
        total += 1
        hits += int(keep[int(np.argmin(np.asarray(p)[keep]))] == root)
    return hits / total if total else float("nan")
