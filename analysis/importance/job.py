"""Ablations over the evaluation set as map/merge (:mod:`analysis.core.execution.corpus`;
docs/METHODS.md
section 14): the study's forward work, on one process or on a Ray cluster.

The evaluation set (:class:`analysis.importance.evalset.EvalSet`) travels as a Dataset of its
encoded features and gold labels (:func:`eval_dataset`). A shard's partial is the classifier's
logits under every ablation for each of its examples [A, n_shard, C] (F1 and accuracy need the
predictions of every example, and the paired bootstrap resamples them) and the sum over its
examples of Michel's gate gradients [L, H]; the merge puts the logits back in row order and
adds the gradient sums. The metrics, intervals and pruning orders are then computed once,
on the merged outputs (:mod:`analysis.importance.run`), exactly as on one process.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.importance.ablate import BATCH_SIZE, MAX_TOKENS, padded_batches, run_ablations
from analysis.importance.gradients import gate_gradient_sum
from analysis.core.errors import DataError
from analysis.importance.evalset import EvalSet, load_classifier

LABEL = "label"


def eval_dataset(ev):
    """The encoded examples of ``ev`` as a ``datasets.Dataset``: one column per tokenizer
    output (``input_ids``, ``attention_mask``, ...) and ``label`` (the gold class index)."""
    # lazy: imported when used: datasets (heavy)
    import datasets

    cols = {k: list(v) for k, v in ev.features.items()}
    cols[LABEL] = [int(y) for y in ev.labels]
    return datasets.Dataset.from_dict(cols)


def shard_eval_set(shard):
    """An EvalSet of a shard of :func:`eval_dataset` (features and labels; every example its
    own unit, no scorer: the shard is only run through the model)."""
    n = len(shard) if shard is not None else 0
    names = [c for c in (shard.column_names if shard is not None else []) if c != LABEL]
    features = {k: list(shard[k]) for k in names} if n else {}
    labels = np.asarray(shard[LABEL] if n else [], dtype=np.int64)
    return EvalSet("", features, labels, np.arange(n, dtype=np.int64), None)


@dataclass
class Ablated:
    """The merged outputs: logits [A, n, C] in row order, gradient sums [L, H] (None when
    not asked) and the example count."""

    logits: np.ndarray | None
    gradient_sum: np.ndarray | None
    n_examples: int

    @property
    def gradient_raw(self) -> np.ndarray | None:
        """Michel's ``I`` [L, H]: the mean over examples of ``|dL/dxi|``."""
        return None if self.gradient_sum is None else self.gradient_sum / self.n_examples


@dataclass
class AblationPartial:
    rows: list[int]
    logits: np.ndarray | None  # [A, n_shard, C]
    gradient_sum: np.ndarray | None  # [L, H]


@dataclass
class AblationJob:
    """The classifier ``spec`` on every example under each ablation ``disabled`` [A, L, H]
    (``method`` "uniform" or "mask"), and, with ``gradients``, the gate gradients."""

    spec: str
    disabled: np.ndarray
    method: str = "uniform"
    gradients: bool = True
    max_tokens: int = MAX_TOKENS
    batch_size: int = BATCH_SIZE

    def load(self):
        return load_classifier(self.spec)[0]

    def map(self, loaded, shard, rows, progress=None) -> AblationPartial:
        rows = list(rows)
        ev = shard_eval_set(shard)
        if not ev.n_examples:
            return AblationPartial(rows, None, None)
        prepared = padded_batches(loaded.tokenizer, ev, self.batch_size)
        steps = len(prepared) if self.gradients else 0
        plan = [0]

        def ablating(done, total):
            plan[0] = total
            if progress is not None:
                progress(done, total + steps)

        logits = run_ablations(loaded, ev, self.disabled, self.method, prepared=prepared,
                               max_tokens=self.max_tokens, batch_size=self.batch_size,
                               progress=ablating)
        grad = None
        if self.gradients:
            grad = gate_gradient_sum(loaded, ev.labels, prepared, progress=None if progress
                                     is None else lambda d, t: progress(plan[0] + d,
                                                                        plan[0] + t))
        return AblationPartial(rows, logits, grad)

    def merge(self, partials) -> Ablated:
        parts = sorted((p for p in partials if p.logits is not None),
                       key=lambda p: min(p.rows))
        rows = np.concatenate([np.asarray(p.rows, dtype=np.int64) for p in parts]) \
            if parts else np.zeros(0, dtype=np.int64)
        if not len(rows):
            raise DataError("The data has no examples to score.")
        order = np.argsort(rows, kind="stable")
        logits = np.concatenate([p.logits for p in parts], axis=1)[:, order]
        grad = None
        if self.gradients:
            grad = parts[0].gradient_sum
            for p in parts[1:]:
                grad = grad + p.gradient_sum
        return Ablated(logits, grad, len(rows))
