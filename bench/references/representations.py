"""The reference for the Representations probes (docs/METHODS.md section 13, "Probes"): per
fold, scikit-learn's ``LogisticRegression()`` (lbfgs, C = 1, max_iter 300, its own stopping
rule: gradient <= 1e-4) on the fold's ``StandardScaler``'d training words, on one BLAS thread,
as the study computed them before issue 48. The study now fits every fold of a layer at once in
torch (``analysis.representations.logistic``); the benchmarks time the two side by side and the
tests check that they give the same accuracies within 0.5 points on the same folds."""

from __future__ import annotations

import warnings

import numpy as np

from analysis.representations.threads import one_thread

MAX_ITER = 300


def fold_predictions(x: np.ndarray, labels: np.ndarray, train, test, seed: int = 0
                     ) -> np.ndarray:
    """One fold: a logistic regression on the standardised training words, its predictions
    for the test words."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    if len(np.unique(labels[train])) < 2:  # one class only: the probe can say only that
        return np.full(len(test), labels[train][0], dtype=labels.dtype)
    scaler = StandardScaler().fit(x[train])
    clf = LogisticRegression(max_iter=MAX_ITER, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(scaler.transform(x[train]), labels[train])
    return clf.predict(scaler.transform(x[test]))


def probe_accuracy(x: np.ndarray, labels: np.ndarray, splits, seed: int = 0,
                   one: bool = True) -> tuple[float, np.ndarray]:
    """(out-of-fold accuracy, the out-of-fold predictions) of scikit-learn's probe on one
    layer (``one``: on one BLAS/OpenMP thread; else the libraries' default threads)."""
    import contextlib

    labels = np.asarray(labels)
    pred = np.empty(len(labels), dtype=labels.dtype)
    with one_thread() if one else contextlib.nullcontext():
        for train, test in splits:
            pred[test] = fold_predictions(x, labels, train, test, seed)
    return float((pred == labels).mean()), pred


def layer_predictions(x: np.ndarray, y: np.ndarray, splits, n_classes: int) -> np.ndarray:
    """``analysis.representations.probes.layer_predictions`` by scikit-learn, one fold after
    another on one thread (the benchmark puts it in the study's place to time today's path
    against the batched solver in one run)."""
    y = np.asarray(y)
    pred = np.empty(len(y), dtype=np.int64)
    with one_thread():
        for train, test in splits:
            pred[test] = fold_predictions(x, y, train, test)
    return pred
