"""Per-layer linear probes (docs/METHODS.md section 13, "Probes").

A probe is a logistic regression on a layer's standardised word vectors (scikit-learn's
``LogisticRegression()``, fitted for every fold of a layer at once in torch:
:mod:`analysis.representations.logistic`; scikit-learn's own fits are the reference,
``bench/references/representations.py``), cross-validated with folds grouped by sentence (no
sentence has words on both sides of a split): the accuracy is over every word's out-of-fold
prediction. The majority baseline is the same cross-validation of "always the most frequent
class of the training folds". The layers are fitted side by side on the job's threads, each on
one torch thread, so the numbers do not depend on how many threads ran them.

Noise: each layer's right words are kept per sentence (and the baseline's), so an accuracy,
its lead over the baseline and the change between two models' curves on the same words get a
percentile bootstrap 95% interval over sentences (:mod:`analysis.core.intervals`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.core.errors import DataError
from analysis.core.execution.threads import side_by_side
from analysis.core.intervals import accuracy_ci, paired_ci
from analysis.representations.logistic import fit_folds

FOLDS = 5


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
    # per sentence (in the order of their ids): words, and right words at each layer and of
    # the majority baseline; empty for a curve built without them (no intervals then)
    sentence_words: list[int] = field(default_factory=list)
    sentence_right: list[list[int]] = field(default_factory=list)
    majority_right: list[int] = field(default_factory=list)

    def best_layer(self) -> int:
        return int(np.argmax(self.layers))

    def ci(self, layer: int) -> tuple[float, float] | None:
        """The bootstrap 95% interval of ``layers[layer]`` (None without per-sentence counts)."""
        if not self.sentence_words:
            return None
        return accuracy_ci(self.sentence_words, self.sentence_right[layer])

    def to_json(self) -> dict:
        out = {"layers": [float(a) for a in self.layers], "majority": float(self.majority)}
        if self.sentence_words:
            out["layers_ci"] = [list(self.ci(k)) for k in range(len(self.layers))]
        return out


def same_words(a: ProbeCurve, b: ProbeCurve) -> bool:
    """Whether two curves were measured on the same sentences' words (a paired comparison)."""
    return bool(a.sentence_words) and a.sentence_words == b.sentence_words \
        and a.n_words == b.n_words


def change_ci(a: ProbeCurve, b: ProbeCurve, layer: int) -> tuple[float, float] | None:
    """95% interval of b's accuracy minus a's at ``layer``: paired over sentences when both
    saw the same words, else the difference of the two intervals' far ends (wider); None
    without per-sentence counts."""
    if same_words(a, b):
        return paired_ci(a.sentence_words, a.sentence_right[layer], b.sentence_right[layer])
    ca, cb = a.ci(layer), b.ci(layer)
    if ca is None or cb is None:
        return None
    return cb[0] - ca[1], cb[1] - ca[0]


def lead_ci(curve: ProbeCurve, layer: int) -> tuple[float, float] | None:
    """95% interval of the layer's accuracy minus the majority baseline's (paired)."""
    if not curve.sentence_words:
        return None
    return paired_ci(curve.sentence_words, curve.majority_right, curve.sentence_right[layer])


def _folds(groups: np.ndarray, folds: int):
    # lazy: imported when used: scikit-learn (heavy)
    from sklearn.model_selection import GroupKFold

    k = min(int(folds), len(np.unique(groups)))
    if k < 2:
        raise DataError("A probe needs words from at least two sentences (cross-validation "
                        "keeps each sentence on one side of a split).")
    return list(GroupKFold(n_splits=k).split(np.zeros(len(groups)), groups=groups)), k


def majority_hits(labels: np.ndarray, splits) -> np.ndarray:
    """Per word: whether predicting its training folds' most frequent class is right."""
    hit = np.zeros(len(labels), dtype=bool)
    for train, test in splits:
        values, counts = np.unique(labels[train], return_counts=True)
        hit[test] = labels[test] == values[np.argmax(counts)]
    return hit


def majority_accuracy(labels: np.ndarray, splits) -> float:
    """Out-of-fold accuracy of predicting each training fold's most frequent class."""
    return int(majority_hits(labels, splits).sum()) / len(labels)


def layer_predictions(x: np.ndarray, y: np.ndarray, splits, n_classes: int) -> np.ndarray:
    """Every word's out-of-fold predicted class index at one layer (``y``: class indices):
    every fold fitted at once (:func:`analysis.representations.logistic.fit_folds`)."""
    pred = np.empty(len(y), dtype=np.int64)
    for (_, test), fit in zip(splits, fit_folds(x, y, splits, n_classes)):
        pred[test] = fit.predictions
    return pred


def fit_workers() -> int:
    """How many layers are fitted at once: the threads torch may use in the calling thread
    (the job's budget: analysis.core.execution.threads.job_threads), each layer on one."""
    # lazy: imported when used: torch (heavy; loaded by the forwards before any probe)
    import torch

    return max(1, int(torch.get_num_threads()))


def probe_layers(layers: Sequence[np.ndarray], labels: Sequence, groups: Sequence[int],
                 name: str = "probe", folds: int = FOLDS, seed: int = 0,
                 progress: Callable[[int, int], None] | None = None) -> ProbeCurve:
    """Cross-validated probe accuracy at every layer (``layers[l]`` is [N, D], ``labels`` and
    ``groups`` (the sentence of each word) have N entries)."""
    labels = np.asarray([str(v) for v in labels])
    groups = np.asarray(groups)
    if len(labels) == 0:
        raise DataError("The probe has no words to learn from.")
    classes, counts = np.unique(labels, return_counts=True)
    if len(classes) < 2:
        raise DataError(f"Every word has the same label ({classes[0]}); a probe needs two "
                        "classes at least.")
    splits, k = _folds(groups, folds)
    ids, sentence = np.unique(groups, return_inverse=True)

    def per(hit: np.ndarray) -> list[int]:
        """Right (or all) words per sentence."""
        return [int(v) for v in np.bincount(sentence, weights=hit.astype(float),
                                            minlength=len(ids)).round()]

    accs, recalls, rights = [], [], []
    xs = [np.asarray(x, np.float32) for x in layers]
    y = np.searchsorted(classes, labels)  # class indices, in the classes' sorted order
    # lazy: imported when used: torch (heavy; loaded by the forwards before any probe)
    import torch

    workers = fit_workers()

    def fit(l):
        torch.set_num_threads(1)  # this pool thread's own count: one layer, one thread
        return layer_predictions(xs[l], y, splits, len(classes))

    # every layer's fit is independent and deterministic on one thread: they run side by side
    # on fit_workers() threads (torch's work releases the interpreter lock) and come back in
    # order, so the numbers do not depend on the workers
    try:
        with side_by_side(fit, range(len(xs)), workers) as done:
            for l in range(len(xs)):
                pred = classes[next(done)]
                accs.append(float((pred == labels).mean()))
                rights.append(per(pred == labels))
                recalls.append({str(c): float((pred[labels == c] == c).mean())
                                for c in classes})
                if progress is not None:
                    progress(l + 1, len(layers))
    finally:
        torch.set_num_threads(workers)  # threads started later take this count again
    majority = majority_hits(labels, splits)
    return ProbeCurve(name=name, layers=accs, majority=float(majority.mean()),
                      classes=[str(c) for c in classes],
                      counts={str(c): int(n) for c, n in zip(classes, counts)},
                      recall=recalls, n_words=len(labels),
                      n_sentences=len(ids), folds=k,
                      sentence_words=per(np.ones(len(labels), dtype=bool)),
                      sentence_right=rights, majority_right=per(majority))
