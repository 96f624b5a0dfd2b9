"""The load benchmark's pure helpers (bench/server/load_monitor.py, load_report.py): the
server's process tree, the visitors' first views apart from their interactions, the cross-talk
check and the share of the load phase a fine-tune ran."""

import pytest

from bench.server.load_monitor import _tree
from bench.server.load_report import CrossTalk, check_words, coverage, split


def test_process_tree_and_first_views_apart():
    parent = {10: 1, 11: 10, 12: 11, 13: 1, 14: 13}
    assert _tree(parent, 10) == {10, 11, 12}
    assert _tree(parent, 1) == {1, 10, 11, 12, 13, 14}
    first, inter = split({"first view": [1.0, 2.0], "layer": [0.1], "open No-op": [0.3, 0.2],
                          "server: layer": [9.0]})
    assert first == [1.0, 2.0] and sorted(inter) == [0.1, 0.2, 0.3]



def test_cross_talk_and_the_fine_tunes_coverage():
    check_words("v1", "apple", ["river"], ["[CLS]", "apple", "pie", "[SEP]"])  # its own word only
    check_words("idle", None, ["river"], ["river"])  # a visitor without a word checks nothing
    with pytest.raises(CrossTalk, match="visitor v1: its word 'apple' is not in its head view"):
        check_words("v1", "apple", [], ["[CLS]", "pear"])
    with pytest.raises(CrossTalk, match=r"visitor v1 sees another visitor's word \['river'\]"):
        check_words("v1", "apple", ["river", "castle"], ["apple", "river"])
    # runs (start, end; None = still running) over the window [10, 20]
    assert coverage([(5.0, 12.0), (14.0, 15.0), (18.0, None)], 10.0, 20.0) == pytest.approx(0.5)
    assert coverage([], 10.0, 20.0) == 0.0
