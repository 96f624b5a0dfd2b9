"""analysis.core.bytecache: entries kept under a byte budget, server-wide and per owner, oldest
(least recently used) first out, hand-made sizes; nbytes of the values the pages cache."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from analysis.core.bytecache import MISSING, ByteCache, nbytes


def test_the_oldest_entries_go_first_when_the_budget_is_passed():
    c = ByteCache(max_bytes=100)
    assert c.put("a", "A", size=40) == []
    assert c.put("b", "B", size=40) == []
    assert c.get("a") == "A"                      # a is now the most recently used
    assert c.put("c", "C", size=40) == ["b"]      # 120 > 100: b, the oldest, goes
    assert (c.get("b"), c.get("a"), c.get("c")) == (MISSING, "A", "C")
    assert c.total == 80 and len(c) == 2
    assert c.put("d", "D", size=100) == ["a", "c"]  # exactly the budget: all others go
    assert c.total == 100 and list(c._entries) == ["d"]


def test_an_entry_larger_than_the_budget_is_not_kept():
    c = ByteCache(max_bytes=100, owner_bytes=30)
    c.put("a", "A", size=50)
    assert c.put("huge", "H", size=101) == ["huge"] and "huge" not in c
    assert c.put("mine", "M", owner="v1", size=31) == ["mine"]  # over the owner's budget
    assert c.get("a") == "A" and c.total == 50


def test_one_owner_makes_way_for_their_own_entries_first():
    c = ByteCache(max_bytes=100, owner_bytes=50)
    c.put("x1", 1, owner="stranger", size=30)
    c.put("v1", 1, owner="visitor", size=20)
    c.put("v2", 2, owner="visitor", size=20)
    # the visitor's third entry passes their 50: their oldest goes, not the stranger's
    assert c.put("v3", 3, owner="visitor", size=20) == ["v1"]
    assert "x1" in c and c.owner_total("visitor") == 40 and c.owner_total("stranger") == 30
    # the server's budget: the oldest of anyone's then
    c.put("y1", 1, owner="other", size=30)
    assert c.total == 100
    assert c.put("y2", 2, owner="other", size=10) == ["x1"]


def test_replacing_a_key_counts_its_new_size_only():
    c = ByteCache(max_bytes=100)
    c.put("a", 1, size=60)
    c.put("a", 2, size=30)
    assert c.total == 30 and c.get("a") == 2
    assert c.pop("a") == 2 and c.total == 0 and c.pop("a", "gone") == "gone"


def test_get_or_make_builds_once_for_threads_asking_together():
    c = ByteCache(max_bytes=1000)
    calls = []

    def make():
        calls.append(1)
        time.sleep(0.2)
        return "value"

    out = []
    threads = [threading.Thread(target=lambda: out.append(c.get_or_make("k", make, size=len)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == ["value"] * 4 and len(calls) == 1 and c.total == 5


def test_get_or_make_hands_back_what_does_not_fit_and_makes_it_again_next_time():
    c = ByteCache(max_bytes=10)
    calls = []
    assert c.get_or_make("k", lambda: calls.append(1) or "x" * 50, size=len) == "x" * 50
    assert "k" not in c
    c.get_or_make("k", lambda: calls.append(1) or "x" * 50, size=len)
    assert len(calls) == 2


def test_get_or_make_lets_an_error_through_and_keeps_nothing():
    c = ByteCache(max_bytes=10)
    with pytest.raises(ValueError):
        c.get_or_make("k", lambda: (_ for _ in ()).throw(ValueError("no")))
    assert "k" not in c and c.get_or_make("k", lambda: 1, size=lambda v: 1) == 1


@dataclass
class _Result:
    maps: np.ndarray
    table: pd.DataFrame
    words: list


def test_nbytes_counts_arrays_tables_and_what_objects_hold(tmp_path):
    a = np.zeros((100, 1000), np.float32)             # 400,000 bytes
    df = pd.DataFrame({"x": np.zeros(1000)})          # 8,000 bytes of data
    r = _Result(a, df, ["word"] * 10)
    n = nbytes(r)
    assert 408_000 <= n <= 410_000
    assert nbytes([a, a]) < 400_000 + 1_000           # the same array counted once
    np.save(tmp_path / "m.npy", a)
    mapped = np.load(tmp_path / "m.npy", mmap_mode="r")
    assert nbytes(mapped) == 0 and nbytes(mapped[3]) == 0  # the page cache's, not the process's
    torch = pytest.importorskip("torch")
    assert nbytes(torch.zeros(10, 10)) == 400


def test_sweep_drops_the_entries_unused_for_a_while():
    now = [0.0]
    c = ByteCache(max_bytes=100, clock=lambda: now[0])
    c.put("a", 1, size=10)
    now[0] = 50.0
    c.put("b", 2, size=10)
    now[0] = 90.0
    assert c.get("a") == 1                 # a used again at 90
    now[0] = 160.0
    assert c.sweep(100.0) == ["b"]         # b unused since 50: 110 s
    assert c.sweep(100.0) == [] and c.total == 10
    now[0] = 190.0
    assert c.sweep(100.0) == ["a"] and len(c) == 0
