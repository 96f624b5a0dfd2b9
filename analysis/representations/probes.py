"""Per-layer linear probes (docs/METHODS.md section 13, "Probes").

A probe is scikit-learn's logistic regression on a layer's standardised word vectors,
cross-validated with folds grouped by sentence (no sentence has words on both sides of a
split): the accuracy is over every word's out-of-fold prediction. The majority baseline is the
same cross-validation of "always the most frequent class of the training folds".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.errors import DataError
from analysis.representations.threads import one_thread

FOLDS = 5
MAX_ITER = 300


@dataclass
class ProbeCurve:
    """One probe over every layer: ``layers[l]`` is the cross-validated accuracy at layer l,
    ``majority`` the baseline's, ``recall[l][class]`` each class's share predicted right."""

    name: str
    layers: list[float]
    majority: float
    classes: list[str]
    counts: dict[str, int]
    recall: list[dict[str, float]] = field(default_factory=list)
    n_words: int = 0
    n_sentences: int = 0
    folds: int = FOLDS

    def best_layer(self) -> int:
        return int(np.argmax(self.layers))

    def to_json(self) -> dict:
        return {"layers": [float(a) for a in self.layers], "majority": float(self.majority)}


def _folds(groups: np.ndarray, folds: int):
    from sklearn.model_selection import GroupKFold

    k = min(int(folds), len(np.unique(groups)))
    if k < 2:
        raise DataError("A probe needs words from at least two sentences (cross-validation "
                        "keeps each sentence on one side of a split).")
    return list(GroupKFold(n_splits=k).split(np.zeros(len(groups)), groups=groups)), k


def majority_accuracy(labels: np.ndarray, splits) -> float:
    """Out-of-fold accuracy of predicting each training fold's most frequent class."""
    right = 0
    for train, test in splits:
        values, counts = np.unique(labels[train], return_counts=True)
        right += int((labels[test] == values[np.argmax(counts)]).sum())
    return right / len(labels)


def probe_accuracy(x: np.ndarray, labels: np.ndarray, splits, seed: int = 0
                   ) -> tuple[float, np.ndarray]:
    """(out-of-fold accuracy, the out-of-fold predictions) of a logistic regression on the
    standardised ``x``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    pred = np.empty(len(labels), dtype=labels.dtype)
    for train, test in splits:
        if len(np.unique(labels[train])) < 2:  # one class only: the probe can say only that
            pred[test] = labels[train][0]
            continue
        scaler = StandardScaler().fit(x[train])
        clf = LogisticRegression(max_iter=MAX_ITER, random_state=seed)
        clf.fit(scaler.transform(x[train]), labels[train])
        pred[test] = clf.predict(scaler.transform(x[test]))
    return float((pred == labels).mean()), pred


def probe_layers(layers: Sequence[np.ndarray], labels: Sequence, groups: Sequence[int],
                 name: str = "probe", folds: int = FOLDS, seed: int = 0,
                 progress: Callable[[int, int], None] | None = None) -> ProbeCurve:
    """Cross-validated probe accuracy at every layer (``layers[l]`` is [N, D], ``labels`` and
    ``groups`` (the sentence of each word) have N entries)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    labels = np.asarray([str(v) for v in labels])
    groups = np.asarray(groups)
    if len(labels) == 0:
        raise DataError("The probe has no words to learn from.")
    classes, counts = np.unique(labels, return_counts=True)
    if len(classes) < 2:
        raise DataError(f"Every word has the same label ({classes[0]}); a probe needs two "
                        "classes at least.")
    splits, k = _folds(groups, folds)
    accs, recalls = [], []
    for l, x in enumerate(layers):
        with warnings.catch_warnings(), one_thread():
            warnings.simplefilter("ignore", ConvergenceWarning)
            acc, pred = probe_accuracy(np.asarray(x, np.float32), labels, splits, seed)
        accs.append(acc)
        recalls.append({str(c): float((pred[labels == c] == c).mean()) for c in classes})
        if progress is not None:
            progress(l + 1, len(layers))
    return ProbeCurve(name=name, layers=accs, majority=majority_accuracy(labels, splits),
                      classes=[str(c) for c in classes],
                      counts={str(c): int(n) for c, n in zip(classes, counts)},
                      recall=recalls, n_words=len(labels),
                      n_sentences=len(np.unique(groups)), folds=k)
