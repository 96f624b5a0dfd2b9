"""analysis.representations.threads: scikit-learn's BLAS/OpenMP pools on one thread inside
``one_thread`` and back to their own number after it."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info

from analysis.representations.threads import one_thread


def test_one_thread_limits_every_pool_and_restores_it():
    np.ones((4, 4)) @ np.ones((4, 4))  # load numpy's BLAS
    before = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    with one_thread():
        inside = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    assert inside and set(inside.values()) == {1}
    after = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    assert {k: after[k] for k in before} == before
