"""How good a dictionary is, always shown with it (docs/METHODS.md section 19, "Quality"):

- on held-out tokens: the fraction of variance explained (FVE, ``1 - sum ||x - x_hat||^2 /
  sum ||x - mean||^2``, the held-out tokens' own mean), the normalised MSE (the squared error
  over that of always predicting the training tokens' mean, Gao et al.'s measure) and L0 (the
  features firing per token);
- dead features: the share that fires on no token of the corpus at all (training and
  held-out);
- splice fidelity on the held-out inputs: the layer replaced by its reconstruction
  (:func:`analysis.forward.forward_spliced`) and, against it, by zeros (zero-ablation). For a
  classifier: the share of inputs whose predicted class stays the same (``agreement``) and the
  loss recovered, ``(L_zero - L_splice) / (L_zero - L_clean)`` with the cross-entropy against
  the gold class (the clean prediction where there is none); for a model without a task head:
  the mean cosine of the last hidden states of real tokens with the clean run's
  (``agreement``) and the same recovered share of ``1 - cosine``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from analysis.core.batching import batches, collate
from analysis.features.sae import SAE
from analysis.features.train import topk_relu
from analysis.core.forward import forward, forward_spliced

Progress = Callable[[int, int], None]


@dataclass
class Quality:
    fve: float
    nmse: float
    l0: float
    dead: float
    agreement: float | None = None
    loss_recovered: float | None = None
    agreement_kind: str = "classifier"  # or "cosine"
    heldout_tokens: int = 0
    splice_inputs: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)


def reconstruction_scores(sae: SAE, x_held: np.ndarray, train_mean: np.ndarray) -> dict:
    """FVE, normalised MSE and L0 of ``sae`` on held-out activations ``x_held`` [n, d]."""
    x = np.asarray(x_held, np.float64)
    z = sae.encode(x_held)
    err = ((x - sae.decode(z).astype(np.float64) / sae.scale) ** 2).sum()
    var = ((x - x.mean(0)) ** 2).sum()
    base = ((x - np.asarray(train_mean, np.float64)) ** 2).sum()
    return {"fve": float(1 - err / var) if var > 0 else float("nan"),
            "nmse": float(err / base) if base > 0 else float("nan"),
            "l0": float((z > 0).sum(1).mean()) if len(z) else float("nan")}


def firing_counts(sae: SAE, x: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """How many of the rows of ``x`` each feature fires on [m]."""
    counts = np.zeros(sae.m, np.int64)
    for s in range(0, len(x), chunk):
        counts += (sae.encode(x[s:s + chunk]) > 0).sum(0)
    return counts


def is_classifier(model) -> bool:
    return type(model).__name__.endswith("ForSequenceClassification")


def splice_fn(sae: SAE, zero: bool = False):
    """``h -> reconstruction(h)`` (or zeros) on torch tensors of any leading shape."""
    # lazy: torch takes seconds to import; the CLI checks its input first
    import torch

    t = sae.tensors_torch()
    k = sae.k if sae.activation == "topk" else None

    def fn(h):
        if zero:
            return torch.zeros_like(h)
        x = h.float() * sae.scale
        if sae.pre_bias:
            x = x - t["b_dec"].to(h.device)
        z = topk_relu(x @ t["W_enc"].to(h.device) + t["b_enc"].to(h.device), k)
        out = (z @ t["W_dec"].to(h.device) + t["b_dec"].to(h.device)) / sae.scale
        return out.to(h.dtype)

    return fn


def splice_fidelity(loaded, sae: SAE, encodings: Sequence, classes=None, batch_size: int = 32,
                    progress: Progress | None = None) -> dict:
    """``agreement``, ``loss_recovered``, ``agreement_kind`` and the three losses of ``sae``
    spliced into ``loaded`` at its layer over ``encodings`` (the held-out inputs; ``classes``
    their gold classes or None)."""
    # lazy: torch takes seconds to import; the CLI checks its input first
    import torch

    model, tok = loaded.model, loaded.tokenizer
    clf = is_classifier(model)
    recon, zero = splice_fn(sae), splice_fn(sae, zero=True)
    agree, losses, n_done = [], {"clean": [], "splice": [], "zero": []}, 0
    idx_all = batches([e.n_tokens for e in encodings], batch_size)
    for idx in idx_all:
        group = [encodings[i] for i in idx]
        inputs = collate(tok, group)
        runs = {"clean": forward(model, inputs=inputs, attentions=False),
                "splice": forward_spliced(model, inputs, sae.layer, recon, attentions=False),
                "zero": forward_spliced(model, inputs, sae.layer, zero, attentions=False)}
        if clf:
            logits = {k: v.output.logits.double() for k, v in runs.items()}
            pred = logits["clean"].argmax(-1)
            gold = pred
            if classes is not None:  # the gold class where the input has one (-1: none)
                known = torch.as_tensor(np.asarray(classes)[idx])
                gold = torch.where(known >= 0, known, pred)
            agree += (logits["splice"].argmax(-1) == pred).double().tolist()
            for k, lg in logits.items():
                losses[k] += torch.nn.functional.cross_entropy(
                    lg, gold, reduction="none").tolist()
        else:
            mask = inputs["attention_mask"].bool()
            last = {k: v.output.last_hidden_state.double() for k, v in runs.items()}
            for k in ("splice", "zero"):
                cos = torch.nn.functional.cosine_similarity(last[k], last["clean"], dim=-1)
                per = [float(cos[b][mask[b]].mean()) for b in range(len(idx))]
                losses[k] += [1.0 - c for c in per]
                if k == "splice":
                    agree += per
            losses["clean"] += [0.0] * len(idx)
        n_done += len(idx)
        if progress is not None:
            progress(n_done, len(encodings))
    mean = {k: float(np.mean(v)) if v else float("nan") for k, v in losses.items()}
    gap = mean["zero"] - mean["clean"]
    return {"agreement": float(np.mean(agree)) if agree else float("nan"),
            "loss_recovered": float((mean["zero"] - mean["splice"]) / gap) if gap > 0
            else float("nan"),
            "agreement_kind": "classifier" if clf else "cosine",
            "losses": mean, "splice_inputs": len(encodings)}
