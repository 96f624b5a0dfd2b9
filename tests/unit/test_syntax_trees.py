"""analysis/syntax/trees.py on hand-made trees: distances, depths, punctuation left out, the
minimum spanning tree, UUAS, the linear chain, row Spearman and root accuracy (docs/METHODS.md
section 10)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from analysis.syntax import trees

# "The cat sat ." : The <- cat <- sat (root), "." <- sat
HEADS = [2, 3, 0, 3]
UPOS = ["DET", "NOUN", "VERB", "PUNCT"]


def test_distances_and_depths_by_hand():
    assert trees.tree_distances(HEADS).tolist() == [[0, 1, 2, 3], [1, 0, 1, 2],
                                                    [2, 1, 0, 1], [3, 2, 1, 0]]
    assert trees.tree_depths(HEADS).tolist() == [2, 1, 0, 1]


def test_gold_edges_leave_punctuation_out():
    keep = trees.non_punct(UPOS)
    assert keep.tolist() == [0, 1, 2]
    assert trees.gold_edges(HEADS) == {(0, 1), (1, 2), (2, 3)}
    assert trees.gold_edges(HEADS, keep) == {(0, 1), (1, 2)}


def test_mst_of_tree_distances_is_the_tree_and_uuas():
    d = trees.tree_distances(HEADS)
    assert trees.mst_edges(d) == [(0, 1), (1, 2), (2, 3)]
    exact = trees.mst_edges(np.array([[0, 1, 5], [1, 0, 1], [5, 1, 0]], dtype=float))
    assert exact == [(0, 1), (1, 2)]
    assert trees.mst_edges(np.zeros((1, 1))) == []
    assert trees.uuas([(0, 1)], {(0, 1), (1, 2)}) == 0.5
    assert math.isnan(trees.uuas([(0, 1)], set()))
    correct, total, _, gold = trees.sentence_uuas_counts(d, HEADS, UPOS)
    assert (correct, total, gold) == (2, 2, {(0, 1), (1, 2)})
    assert trees.corpus_uuas([d, d], [HEADS, HEADS], [UPOS, UPOS]) == 1.0


def test_linear_chain():
    assert trees.chain_edges(UPOS) == [(0, 1), (1, 2)]
    # "sat" heads both "The" and "cat": the chain finds cat-sat only
    assert trees.linear_chain_uuas([[3, 3, 0]], [["DET", "NOUN", "VERB"]]) == 0.5


def test_row_spearman_matches_scipy_and_constant_rows_are_nan():
    p = np.array([[1.0, 3.0, 2.0, 4.0], [5.0, 5.0, 5.0, 5.0]])
    g = np.array([[1.0, 2.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]])
    got = trees.row_spearman(p, g)
    assert got[0] == pytest.approx(spearmanr(p[0], g[0]).statistic, abs=1e-12)
    # by hand: ranks 1,3,2,4 vs 1,2.5,2.5,4
    assert got[0] == pytest.approx(3 / math.sqrt(10), abs=1e-12)
    assert math.isnan(got[1])


def test_spearman_only_over_lengths_5_to_50_and_root_accuracy():
    heads5 = [2, 0, 2, 3, 4]  # a chain below word 2
    gold = trees.tree_distances(heads5)
    assert trees.distance_spearman([gold], [gold]) == 1.0
    assert math.isnan(trees.distance_spearman([trees.tree_distances(HEADS)],
                                              [trees.tree_distances(HEADS)]))  # 4 words
    depths = trees.tree_depths(heads5).astype(float)
    assert trees.depth_spearman([depths], [heads5]) == 1.0
    assert trees.root_accuracy([depths, -depths], [heads5, heads5], [["X"] * 5] * 2) == 0.5
