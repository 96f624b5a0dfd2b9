"""bench/sizes/cuda.py's comparison of a study's CPU and CUDA JSON, on planted numbers: the
largest absolute difference and where it is, timings left out, NaN against NaN agreeing, and a
number only one side has failing the study."""

from __future__ import annotations

import math

import numpy as np
import pytest


@pytest.fixture(scope="module")
def bench():
    from bench.sizes import cuda

    return cuda


def test_numbers_flattens_by_path_and_skips_timings(bench):
    got = bench.numbers({"a": {"b": [1, 2.5]}, "flag": True, "name": "x", "none": None,
                         "seconds": 9.0, "m": np.array([[1.0, 2.0]])})
    assert got == {"a.b[0]": 1.0, "a.b[1]": 2.5, "flag": 1.0, "m[0][0]": 1.0, "m[0][1]": 2.0}


def test_compare_finds_the_largest_difference(bench):
    a = {"per_head": [[0.1, 0.2], [0.3, 0.4]], "n": 5, "seconds": 1.0}
    b = {"per_head": [[0.1, 0.20002], [0.3, 0.39]], "n": 5, "seconds": 7.0}
    cmp = bench.compare(a, b)
    assert cmp["where"] == "per_head[1][1]"
    assert cmp["max_abs_diff"] == pytest.approx(0.01)
    assert cmp["n_numbers"] == 5 and cmp["n_only_one_side"] == 0
    assert cmp["n_over_tol"] == 1  # 0.01 is over 1e-4, 2e-5 is not
    assert bench.verdict(cmp, 1e-4) == "FAIL"
    assert bench.verdict(bench.compare(a, {**b, "per_head": [[0.1, 0.20002], [0.3, 0.4]]}),
                         1e-4) == "PASS"  # 2e-5 is within 1e-4


def test_nan_and_missing_numbers(bench):
    assert bench.compare({"x": math.nan}, {"x": math.nan})["max_abs_diff"] == 0.0
    assert bench.compare({"x": math.inf}, {"x": math.inf})["max_abs_diff"] == 0.0
    assert bench.compare({"x": math.nan}, {"x": 1.0})["max_abs_diff"] == math.inf
    cmp = bench.compare({"x": 1.0, "y": [1, 2]}, {"x": 1.0, "y": [1]})
    assert cmp["max_abs_diff"] == 0.0 and cmp["only_one_side"] == ["y[1]"]
    assert bench.verdict(cmp, 1e-4) == "FAIL"
