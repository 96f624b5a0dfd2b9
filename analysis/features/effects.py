"""A feature's effect on each class: the feature switched off in the residual stream of a
classifier, averaged over the held-out inputs it fires on, with bootstrap intervals
(docs/METHODS.md section 19, "Class effects").

Switching feature ``f`` off subtracts its contribution ``z_f(t) W_dec[f] / scale`` from the
clean activation ``h(t)`` at every token ``t`` of the input (the dictionary's error term
stays, so only the feature changes), from the layer on
(:func:`analysis.forward.forward_patched`, site "residual": the layers below run once, the
input is copied once per feature switched off). The effect on class ``c`` is the change of its
probability, ``p_c(off) - p_c(clean)``; its 95% interval resamples the inputs' source
sentences (a review's pairs together). Inputs where the feature never fires change nothing and
are left out (``n`` says how many remain).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from analysis.core.batching import collate
from analysis.core.errors import InputError
from analysis.features.browser import Codes
from analysis.features.quality import is_classifier
from analysis.features.sae import SAE
from analysis.core.forward import forward, forward_patched
from analysis.core.intervals import quantiles, resamples

Progress = Callable[[int, int], None]
MAX_COPIES = 64  # features switched off per forward of one input


def unavailable(loaded, sae: SAE) -> str | None:
    """Why class effects cannot be measured for this model and layer (None: they can)."""
    if not is_classifier(loaded.model):
        return ("The model has no task head, so switching a feature off has no class to "
                "move: load a fine-tuned classifier (e.g. the example checkpoint).")
    if sae.layer == 0:
        return "Class effects are measured from layer 1 on (the embeddings cannot be patched)."
    return None


def class_effects(loaded, sae: SAE, x: np.ndarray, c: Codes, features: Sequence[int],
                  units: Sequence[int] | None = None, progress: Progress | None = None,
                  stop: Callable[[], bool] | None = None, only=None) -> dict[int, dict]:
    """``{feature: {"n", "mean": [C], "low": [C], "high": [C]}}`` over the held-out inputs of
    ``c``'s tokens (``x`` their activations at ``sae.layer``; ``units[input]`` groups inputs
    for the bootstrap, default each on its own; ``only[input]``: the inputs to use)."""
    why = unavailable(loaded, sae)
    if why:
        raise InputError(why)
    # lazy: torch takes seconds to import; the CLI checks its input first
    import torch

    tok = c.tokens
    wanted = np.asarray(list(features), np.int64)
    enc_of = dict(zip(tok.inputs, tok.encodings))
    held_rows = np.flatnonzero(tok.heldout)
    rows_of: dict[int, np.ndarray] = {}
    for i in np.unique(tok.example[held_rows]):
        if only is None or only[int(i)]:
            rows_of[int(i)] = held_rows[tok.example[held_rows] == i]
    deltas: dict[int, list] = {int(f): [] for f in wanted}
    unit_of: dict[int, list] = {int(f): [] for f in wanted}
    done = 0
    for i, rows in rows_of.items():
        z = c.z[rows][:, wanted]
        on = np.flatnonzero((z > 0).any(0))
        if len(on):
            inputs = collate(loaded.tokenizer, [enc_of[i]])
            clean = forward(loaded.model, inputs=inputs, attentions=False).output.logits
            p0 = torch.softmax(clean.double(), -1)[0].numpy()
            h = torch.from_numpy(x[rows]).float()  # [T, d]
            for s in range(0, len(on), MAX_COPIES):
                part = on[s:s + MAX_COPIES]
                contrib = z[:, part].T[:, :, None] * sae.W_dec[wanted[part]][:, None, :]
                source = h[None] - torch.from_numpy(contrib / sae.scale).float()
                mask = np.ones((len(part), len(rows), 1), bool)
                logits = forward_patched(loaded.model, inputs, "residual", sae.layer - 1,
                                         source, mask)
                p = torch.softmax(torch.from_numpy(logits), -1).numpy()
                for r, j in enumerate(part):
                    f = int(wanted[j])
                    deltas[f].append(p[r] - p0)
                    unit_of[f].append(int(units[i]) if units is not None else i)
        done += 1
        if progress is not None:
            progress(done, len(rows_of))
        if stop is not None and stop():
            break
    return {f: effect_interval(np.asarray(d), np.asarray(unit_of[f])) for f, d in deltas.items()}


def effect_interval(deltas: np.ndarray, units: np.ndarray, seed: int = 0) -> dict:
    """The mean change per class over inputs and its percentile bootstrap 95% interval, the
    inputs' units (sentences) resampled with replacement."""
    if not len(deltas):
        return {"n": 0, "mean": None, "low": None, "high": None}
    deltas = np.asarray(deltas, np.float64)
    mean = deltas.mean(0)
    uniq, inv = np.unique(units, return_inverse=True)
    if len(uniq) < 2:
        return {"n": int(len(deltas)), "mean": mean.tolist(), "low": None, "high": None}
    sums = np.zeros((len(uniq), deltas.shape[1]))
    np.add.at(sums, inv, deltas)
    counts = np.bincount(inv, minlength=len(uniq)).astype(np.float64)
    w = resamples(len(uniq), seed=seed)  # [B, U]
    boot = (w @ sums) / np.maximum(w @ counts, 1.0)[:, None]  # [B, C]
    lo_hi = [quantiles(boot[:, k]) for k in range(deltas.shape[1])]
    return {"n": int(len(deltas)), "mean": mean.tolist(), "low": [a for a, _ in lo_hi],
            "high": [b for _, b in lo_hi]}
