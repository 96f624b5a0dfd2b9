"""scikit-learn work on one BLAS/OpenMP thread.

With torch loaded, a process holds two OpenMP runtimes and OpenBLAS pools; on a busy 2-core
machine their spinning workers made a logistic regression or a t-SNE 20 to 40 times slower
than on one thread (measured: 35 probe fits 89 s against 2 s). The projections (and the
probes' scikit-learn reference, bench/references/representations.py) therefore run inside
:func:`one_thread` (threadpoolctl, a scikit-learn dependency); the probes themselves are fitted
in torch, each layer on one torch thread (:mod:`analysis.representations.probes`).
"""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def one_thread():
    # lazy: imported when used: threadpoolctl (comes with scikit-learn, used only with it)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield
