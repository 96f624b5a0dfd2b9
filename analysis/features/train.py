"""Training a top-k sparse autoencoder (Gao et al. 2024) on a matrix of activations, seeded, on
the CPU or the model's device (docs/METHODS.md section 19, "Training").

What the recipe follows from the paper (and openai/sparse_autoencoder, read, not copied):

- the activations are multiplied by one constant first, ``scale = sqrt(d) / mean ||x||`` over
  the training tokens, so that a token's squared norm is d on average (the dataset-wide
  constant of Anthropic's April 2024 update and SAELens; Gao et al. standardise each token,
  which no fixed affine map can undo: the card's one ``scale`` keeps the encoding exact);
- ``b_dec`` starts at the scaled activations' mean and is subtracted before encoding
  (``pre_bias``); the decoder's rows start as random unit vectors, the encoder as their
  transpose, ``b_enc`` at 0;
- the loss is the normalised MSE (the squared error over the batch's variance around its
  mean), plus 1/32 of the AuxK loss: the features dead for a whole pass over the training
  tokens reconstruct the residual error with their own top ``k_aux = d / 2``;
- after every Adam step the decoder's rows are put back to unit norm, and before it the part
  of their gradient along themselves is removed; the learning rate is Gao et al.'s
  ``2e-4 / sqrt(m / 2^14)``, held, then brought linearly to 0 over the last fifth; by default
  about 400,000 tokens are seen in all (5 to 30 passes: :func:`default_epochs`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from analysis.core.errors import InputError
from analysis.features.sae import SAE

Progress = Callable[[int, int], None]
AUX_COEF = 1.0 / 32.0


@dataclass(frozen=True)
class TrainSettings:
    """How a dictionary is trained (None: the default of :func:`default_m` / Gao et al.)."""

    m: int | None = None
    k: int = 32
    epochs: int | None = 30  # None: :func:`default_epochs` of the corpus
    batch_size: int = 512
    lr: float | None = None
    seed: int = 0
    aux_k: int | None = None
    activation: str = "topk"

    def to_json(self) -> dict:
        return asdict(self)


def default_m(d: int, n_tokens: int) -> int:
    """The dictionary's size when none is asked: d times the largest power of two up to
    ``n_tokens / (25 d)``, from 1 to 8 (8 x d, the issue's default, from ~77k tokens of a
    384-wide model on): a small corpus cannot keep a large dictionary alive."""
    ratio = n_tokens / (25.0 * d)
    mult = 1 if ratio < 2 else min(8, 2 ** int(math.floor(math.log2(ratio))))
    return int(d * mult)


TOKEN_PASSES = 400_000


def default_epochs(n_tokens: int) -> int:
    """Passes over the training tokens when none is asked: about ``TOKEN_PASSES`` tokens seen
    in all, from 5 to 30 passes (30 for the bundled samples; 9 for 50,000 tokens, so that the
    embedded model's 50,000 tokens train in about a minute on two cores)."""
    return int(min(30, max(5, round(TOKEN_PASSES / max(1, n_tokens)))))


def gao_lr(m: int) -> float:
    return 2e-4 / math.sqrt(m / 2 ** 14)


def activation_scale(x: np.ndarray) -> float:
    """``sqrt(d) / mean ||x||`` over the rows of ``x`` (1 when they are all zero)."""
    norms = np.linalg.norm(np.asarray(x, np.float64), axis=1)
    mean = float(norms.mean()) if len(norms) else 0.0
    return math.sqrt(x.shape[1]) / mean if mean > 0 else 1.0


def topk_relu(pre, k: int | None):
    """torch twin of :func:`analysis.features.sae.sparsify`."""
    # lazy: torch takes seconds to import; the CLI checks its input first
    import torch

    z = torch.relu(pre)
    if k is None or k >= z.shape[-1]:
        return z
    vals, idx = torch.topk(z, k, dim=-1, sorted=False)
    return torch.zeros_like(z).scatter_(-1, idx, vals)


def normalised_mse(recon, target):
    """``sum ||target - recon||^2 / sum ||target - mean(target)||^2`` over the batch."""
    err = (target - recon).pow(2).sum()
    var = (target - target.mean(0, keepdim=True)).pow(2).sum().clamp_min(1e-12)
    return err / var


def unit_rows_(w) -> None:
    """Scale every row of ``w`` (a torch matrix, in place) to norm 1."""
    w.data /= w.data.norm(dim=-1, keepdim=True).clamp_min(1e-8)


def drop_parallel_grad_(w) -> None:
    """Remove from ``w.grad`` each row's component along the row itself (the row's norm is
    fixed at 1, so only its direction learns)."""
    if w.grad is None:
        return
    rows = w.data / w.data.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    w.grad -= (w.grad * rows).sum(-1, keepdim=True) * rows


def lr_at(step: int, total: int, lr: float) -> float:
    """Held at ``lr``, then linearly to 0 over the last fifth of the steps."""
    start = int(0.8 * total)
    return lr if step < start else lr * max(0.0, (total - step) / max(1, total - start))


def check_settings(s: TrainSettings, d: int, m: int) -> None:
    if s.activation not in ("topk", "relu"):
        raise InputError(f"The activation must be topk or relu, not {s.activation!r}.")
    if s.activation == "topk" and not 1 <= s.k <= m:
        raise InputError(f"k must be from 1 to the dictionary's size {m}, not {s.k}.")
    if m < 1 or (s.epochs is not None and s.epochs < 1) or s.batch_size < 1:
        raise InputError("The dictionary's size, epochs and batch size must be at least 1.")


def train_sae(x: np.ndarray, layer: int, settings: TrainSettings = TrainSettings(),
              progress: Progress | None = None, stop: Callable[[], bool] | None = None) -> SAE:
    """A top-k SAE of the activations ``x`` [n, d] (float32) of hidden-states layer ``layer``
    (module docstring). Deterministic for a seed and a thread count; ``progress(step, steps)``
    after each step; ``stop()`` true ends training early (the dictionary so far)."""
    # lazy: torch takes seconds to import; the CLI checks its input first
    import torch

    x = np.ascontiguousarray(x, np.float32)
    n, d = x.shape
    if n < 2:
        raise InputError("Training a dictionary needs at least 2 tokens.")
    m = int(settings.m or default_m(d, n))
    check_settings(settings, d, m)
    k = settings.k if settings.activation == "topk" else None
    aux_k = min(m, int(settings.aux_k or max(1, d // 2)))
    lr = float(settings.lr or gao_lr(m))
    scale = activation_scale(x)
    gen = torch.Generator().manual_seed(int(settings.seed))
    data = torch.from_numpy(x) * scale
    w_dec = torch.randn(m, d, generator=gen)
    w_dec /= w_dec.norm(dim=-1, keepdim=True)
    W_dec = torch.nn.Parameter(w_dec)
    W_enc = torch.nn.Parameter(w_dec.t().clone())
    b_enc = torch.nn.Parameter(torch.zeros(m))
    b_dec = torch.nn.Parameter(data.mean(0).clone())
    opt = torch.optim.Adam([W_enc, b_enc, W_dec, b_dec], lr=lr, eps=6.25e-10)
    batch = min(settings.batch_size, n)
    per_epoch = max(1, n // batch)
    epochs = int(settings.epochs or default_epochs(n))
    total = per_epoch * epochs
    since_fired = torch.zeros(m, dtype=torch.long)  # tokens since each feature last fired
    step = 0
    curve = []
    for epoch in range(epochs):
        order = torch.randperm(n, generator=gen)
        seen, err_sum = 0, 0.0
        for b in range(per_epoch):
            xb = data[order[b * batch:(b + 1) * batch]]
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total, lr)
            pre = (xb - b_dec) @ W_enc + b_enc
            z = topk_relu(pre, k)
            recon = z @ W_dec + b_dec
            loss = normalised_mse(recon, xb)
            fired = (z > 0).any(0)
            since_fired += len(xb)
            since_fired[fired] = 0
            dead = since_fired >= n
            if dead.any():
                residual = (xb - recon).detach()
                aux_pre = pre.masked_fill(~dead, float("-inf"))
                z_aux = topk_relu(aux_pre, min(aux_k, int(dead.sum())))
                z_aux = torch.nan_to_num(z_aux, nan=0.0, neginf=0.0)
                loss = loss + AUX_COEF * normalised_mse(z_aux @ W_dec, residual)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            drop_parallel_grad_(W_dec)
            torch.nn.utils.clip_grad_norm_([W_enc, b_enc, W_dec, b_dec], 1.0)
            opt.step()
            unit_rows_(W_dec)
            step += 1
            seen += 1
            err_sum += float(normalised_mse(recon.detach(), xb))
            if progress is not None:
                progress(step, total)
            if stop is not None and stop():
                break
        curve.append(err_sum / max(1, seen))
        if stop is not None and stop():
            break
    card = {"training": {**settings.to_json(), "m": m, "epochs": epochs, "aux_k": aux_k, "lr": lr,
                         "tokens": n, "steps": step, "nmse_by_epoch": curve}}
    return SAE(W_enc.detach().numpy().copy(), b_enc.detach().numpy().copy(),
               W_dec.detach().numpy().copy(), b_dec.detach().numpy().copy(),
               k=int(settings.k), layer=int(layer), activation=settings.activation,
               pre_bias=True, scale=float(scale), card=card).check()
