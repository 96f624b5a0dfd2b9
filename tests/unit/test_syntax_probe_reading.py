"""The structural-probe tab's plain reading (analysis/syntax/reading.py probe_reading and
probe_compare_reading) on planted probe results: the best layer, the share of the tree found
there, the neighbour and layer-0 baselines, the main-word finding, the two-model comparison,
in everyday words with the numbers after them and no internal names."""

from __future__ import annotations

import math

from analysis.syntax.probes import ProbeResult
from analysis.syntax.reading import probe_compare_reading, probe_reading

INTERNAL = ("UUAS", "uuas", "DSpr", "dspr", "root_acc", "linear_chain", "linear chain",
            "Spearman", "probe", "embedding")


def planted(uuas, roots, chain=0.40, n_eval=25) -> ProbeResult:
    return ProbeResult(layers=[{"layer": i, "uuas": u, "dspr": 0.5, "root_acc": r,
                                "depth_spearman": 0.5}
                               for i, (u, r) in enumerate(zip(uuas, roots))],
                       baselines={"linear_chain_uuas": chain}, n_eval=n_eval)


def _clean(lines):
    text = " ".join(lines)
    assert not [w for w in INTERNAL if w in text], text
    return text


def test_the_best_layer_and_both_baselines_in_words():
    res = planted([0.45, 0.60, 0.72, 0.72, 0.66], [0.30, 0.50, 0.60, 0.80, 0.70])
    lines = probe_reading(res)
    _clean(lines)
    assert lines == [
        "A small map trained to read the grammar tree out of the word vectors does best on "
        "layer 2: there it finds 72% of the tree's links (which word belongs to which), on 25 "
        "sentences it was not trained on.",
        "Linking each word to the next one finds 40%, 32 points less.",
        "The same map on the word vectors before any layer finds 45%, so the model's layers "
        "add 27 points.",
        "A second map, trained to tell how deep each word sits in the tree, finds the "
        "sentence's main word (usually its verb) in 80% of sentences on layer 3.",
    ]


def test_a_best_layer_close_to_word_order_says_so():
    lines = probe_reading(planted([0.38, 0.41, 0.43], [0.1, 0.2, 0.3], chain=0.40))
    _clean(lines)
    assert lines[1] == ("That is hardly more than linking each word to the next one, which "
                        "finds 40%: the layers hold little of the tree beyond word order in a "
                        "form this map can read.")
    assert "layer 2" in lines[0] and "43%" in lines[0]
    assert lines[2].endswith("finds 38%, so the model's layers add 5 points.")


def test_nothing_scored_says_what_to_do():
    nan = math.nan
    (line,) = probe_reading(planted([nan, nan], [nan, nan], chain=nan))
    _clean([line])
    assert "No held-out sentence could be scored" in line and "larger treebank" in line


def test_two_models_compared_with_the_difference_in_points():
    before = planted([0.45, 0.60, 0.72, 0.66], [0.3, 0.5, 0.6, 0.8])
    worse = planted([0.45, 0.60, 0.62, 0.66], [0.3, 0.5, 0.6, 0.8])
    same = planted([0.45, 0.71, 0.60, 0.60], [0.3, 0.5, 0.6, 0.8])
    (line,) = probe_compare_reading(before, worse)
    _clean([line])
    assert line == ("The second model's word vectors hold less of the grammar tree than the "
                    "first (6 points): at best the map finds 66% of the tree's links (layer 3), "
                    "against 72% for the first model (layer 2).")
    (line,) = probe_compare_reading(before, same)
    assert line.startswith("The second model's word vectors hold about as much of the grammar "
                           "tree as the first: at best the map finds 71%")
    (line,) = probe_compare_reading(worse, before)
    assert "hold more of the grammar tree than the first (6 points)" in line
