"""Pattern features, types, shares and transitions on hand-made maps; the one-example numpy
definition of the features that the batched version is checked against."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.drift import PATTERN_TYPES, PatternThresholds, classify_patterns
from analysis.drift import pattern_shares, pattern_transitions


def pattern_features(attn: np.ndarray, special: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Features of maps [..., n, n] of one example -> [..., 3] (vertical, diagonal, block).

    - vertical: (1/n) sum_i sum_{j special} A[i,j]  (mass on the [CLS]/[SEP] columns)
    - diagonal: (1/n) sum_i (A[i,i-1] + A[i,i] + A[i,i+1])
    - block: 1 - (1/n) sum_i TV(A[i,:], U_i), U_i uniform over the non-special tokens of
      token i's segment, TV(p, q) = 0.5 * sum_j |p_j - q_j|.
    """
    a = np.asarray(attn, dtype=np.float64)
    n = a.shape[-1]
    special = np.asarray(special, dtype=bool)
    seg = np.asarray(segments)
    vertical = (a[..., :, special]).sum(-1).mean(-1)
    band = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) <= 1
    diagonal = (a * band).sum(-1).mean(-1)
    uniform = ((seg[:, None] == seg[None, :]) & ~special[None, :]).astype(np.float64)
    counts = uniform.sum(-1, keepdims=True)
    uniform = np.divide(uniform, counts, out=np.zeros_like(uniform), where=counts > 0)
    tv = 0.5 * np.abs(a - uniform).sum(-1)
    block = 1.0 - tv.mean(-1)
    return np.stack([vertical, diagonal, block], axis=-1)


# Hand-made maps: [CLS] a1..a7 [SEP] b1..b6 [SEP]

N = 16
SPECIAL = np.zeros(N, bool)
SPECIAL[[0, 8, 15]] = True
SEGMENTS = np.array([0] * 9 + [1] * 7, np.int8)


def _vertical():
    m = np.zeros((N, N))
    m[:, 8] = 1.0  # everything to the first [SEP]
    return m


def _diagonal():
    m = np.zeros((N, N))
    m[0, 0] = 1.0
    for i in range(1, N):
        m[i, i - 1] = 1.0  # previous token
    return m


def _vertical_diagonal():
    m = np.zeros((N, N))
    m[:, 0] = 0.5  # half to [CLS]
    for i in range(N):
        m[i, min(i + 1, N - 1)] += 0.5  # half to the next token
    return m


def _block():
    m = np.zeros((N, N))
    seg_a, seg_b = list(range(1, 8)), list(range(9, 15))
    for i in range(N):
        cols = seg_a if SEGMENTS[i] == 0 else seg_b
        m[i, cols] = 1.0 / len(cols)
    return m


def _heterogeneous():
    m = np.zeros((N, N))
    for i in range(N):
        m[i, (i + 4) % N] = 0.6  # far tokens
        m[i, (i + 7) % N] += 0.4
    return m


def test_pattern_features_hand_made_maps():
    maps = np.stack([_vertical(), _diagonal(), _vertical_diagonal(), _block(), _heterogeneous()])
    f = pattern_features(maps, SPECIAL, SEGMENTS)
    # vertical: all mass on a special column; rows 7, 8, 9 are within one step of column 8
    assert f[0, 0] == pytest.approx(1.0)
    assert f[0, 1] == pytest.approx(3 / 16)
    assert f[0, 2] == pytest.approx(0.0)  # [SEP] is outside every uniform block
    # diagonal: every row on i-1 (row 0 on itself); rows 0, 1, 9 land on a special token
    assert f[1, 1] == pytest.approx(1.0)
    assert f[1, 0] == pytest.approx(3 / 16)
    # vertical+diagonal: 0.5 on [CLS]; 0.5 on i+1, special for rows 7, 14 and 15 (itself)
    assert f[2, 0] == pytest.approx(0.5 + 0.5 * 3 / 16)
    # rows 0 and 1 have [CLS] within one step too (1.0 each), the other 14 rows 0.5
    assert f[2, 1] == pytest.approx((2 * 1.0 + 14 * 0.5) / 16)
    # block: rows exactly uniform over their own segment's words -> 1
    assert f[3, 2] == pytest.approx(1.0)
    assert f[3, 0] == pytest.approx(0.0)
    # heterogeneous: 0.6 on i+4 and 0.4 on i+7 (mod 16); specials hit by rows 4, 11, 12
    # (i+4) and rows 1, 8, 9 (i+7)
    assert f[4, 0] == pytest.approx((3 * 0.6 + 3 * 0.4) / 16)
    assert f[4, 1] == pytest.approx(0.0)
    types = classify_patterns(f)
    assert [PATTERN_TYPES[t] for t in types] == [
        "vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous"]
    shares = pattern_shares(types)
    assert shares == {name: pytest.approx(0.2) for name in PATTERN_TYPES}
    moved = pattern_transitions(types, np.roll(types, 1))  # each map moves to the previous type
    assert moved.sum() == 5 and moved[0, 4] == 1 and moved[1, 0] == 1 and np.trace(moved) == 0


def test_pattern_thresholds_are_the_rules():
    f = np.array([[0.45, 0.1, 0.2]])  # 45% on [CLS]/[SEP]
    assert PATTERN_TYPES[classify_patterns(f)[0]] == "heterogeneous"
    loose = PatternThresholds(vertical=0.4)
    assert PATTERN_TYPES[classify_patterns(f, loose)[0]] == "vertical"
    assert any("0.40" in line for line in loose.describe())
