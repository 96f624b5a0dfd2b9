"""A crosscoder on two models at one layer (Lindsey et al. 2024), trained with a BatchTopK
sparsity as Minder et al. 2025 recommend, the decoder-norm shares that sort its latents into
base-only, shared and fine-tuned-only, and Minder et al.'s Latent Scaling checks against
spurious model-specific latents (docs/METHODS.md section 19, "Before and after").

- Encoding: ``f = relu(sum_M (x_M s_M) @ W_enc[M] + b_enc)``; training keeps, over a batch of
  B tokens, the ``k B`` largest values of ``f_j * sum_M ||W_dec[M, j]||`` (BatchTopK,
  Bussmann et al. 2024); at inference a latent counts where that product passes the threshold
  ``theta`` (the mean over the last epoch's batches of the smallest value kept).
- Decoding: ``x_hat_M = f @ W_dec[M] + b_dec[M]`` per model (``s_M``: each model's own
  ``sqrt(d) / mean ||x||``).
- Norm share (Minder et al.'s ``Delta_norm``, oriented towards the fine-tuned model):
  ``r_j = ((||d_ft|| - ||d_base||) / max(||d_base||, ||d_ft||) + 1) / 2``; 1 = only the
  fine-tuned model's decoder has it, 0 = only the base's, 0.5 = both alike. Fine-tuned-only:
  r >= 0.9; base-only: r <= 0.1; shared: 0.4 <= r <= 0.6; between: "leaning".
- Latent Scaling, for each model-specific latent with direction ``d`` (its decoder row in the
  model that has it): ``beta_M(y) = sum_x f(x) <d, y_M(x)> / (||d||^2 sum_x f(x)^2)`` for the
  error plus the latent's own term ``y = x_M - x_hat_M + f d_M`` (what is left for the latent
  to explain) and for the reconstruction, the own model's whole ``x_hat_own`` against the
  other model's without the latent, ``x_hat_other - f d_other`` (what its other latents
  rebuild along ``d``); ``nu_eps`` and ``nu_r`` are the other model's beta over the own
  model's. A latent the other model also explains (``nu > 0.5``, our threshold) is
  flagged: Complete Shrinkage (``nu_eps``) or Latent Decoupling (``nu_r``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from analysis.core.errors import InputError
from analysis.features.train import (AUX_COEF, activation_scale, gao_lr, lr_at,
                                     normalised_mse, topk_relu)

Progress = Callable[[int, int], None]
FT_ONLY, BASE_ONLY, SHARED = 0.9, 0.1, (0.4, 0.6)
SPURIOUS = 0.5
CLASSES = ("base-only", "leaning base", "shared", "leaning fine-tuned", "fine-tuned-only")


@dataclass
class Crosscoder:
    """Two models' shared dictionary (float32 numpy)."""

    W_enc: np.ndarray  # [2, d, m]
    b_enc: np.ndarray  # [m]
    W_dec: np.ndarray  # [2, m, d]
    b_dec: np.ndarray  # [2, d]
    scales: tuple[float, float]
    k: int
    theta: float
    layer: int
    card: dict = field(default_factory=dict)

    @property
    def m(self) -> int:
        return int(self.b_enc.shape[0])

    def norms(self) -> np.ndarray:
        """[2, m] decoder row norms (base, fine-tuned)."""
        return np.linalg.norm(self.W_dec, axis=-1)

    def encode(self, xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
        """Latent activations [n, m] of the tokens' two activations (inference threshold)."""
        pre = (np.asarray(xa, np.float32) * self.scales[0]) @ self.W_enc[0] \
            + (np.asarray(xb, np.float32) * self.scales[1]) @ self.W_enc[1] + self.b_enc
        f = np.maximum(pre, 0.0)
        return np.where(f * self.norms().sum(0) > self.theta, f, 0.0).astype(np.float32)

    def decode(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x_hat_base, x_hat_ft) in the scaled units."""
        return f @ self.W_dec[0] + self.b_dec[0], f @ self.W_dec[1] + self.b_dec[1]


def norm_share(norms: np.ndarray) -> np.ndarray:
    """Minder et al.'s Delta_norm towards the fine-tuned model per latent (module docstring)."""
    a, b = norms
    top = np.maximum(np.maximum(a, b), 1e-12)
    return 0.5 * ((b - a) / top + 1.0)


def share_class(r: float) -> str:
    if r >= FT_ONLY:
        return CLASSES[4]
    if r <= BASE_ONLY:
        return CLASSES[0]
    if SHARED[0] <= r <= SHARED[1]:
        return CLASSES[2]
    return CLASSES[3] if r > 0.5 else CLASSES[1]


def train_crosscoder(xa: np.ndarray, xb: np.ndarray, layer: int, m: int, k: int = 32,
                     epochs: int = 30, batch_size: int = 512, seed: int = 0,
                     progress: Progress | None = None,
                     stop: Callable[[], bool] | None = None) -> Crosscoder:
    """A BatchTopK crosscoder of the paired activations ``xa``, ``xb`` [n, d] (the same tokens
    through the base and the fine-tuned model), seeded; the loss is the sum of the two models'
    normalised MSEs plus 1/32 of the AuxK loss of the dead latents on both residuals."""
    # lazy: torch takes seconds to import; the CLI checks its input first
    import torch

    xa, xb = np.asarray(xa, np.float32), np.asarray(xb, np.float32)
    if xa.shape != xb.shape or len(xa) < 2:
        raise InputError("A crosscoder needs the same tokens (at least 2) from both models.")
    n, d = xa.shape
    if not 1 <= k <= m:
        raise InputError(f"k must be from 1 to the dictionary's size {m}, not {k}.")
    scales = (activation_scale(xa), activation_scale(xb))
    data = torch.stack([torch.from_numpy(xa) * scales[0], torch.from_numpy(xb) * scales[1]])
    gen = torch.Generator().manual_seed(int(seed))
    w = torch.randn(2, m, d, generator=gen)
    w = w / w.norm(dim=-1, keepdim=True) / np.sqrt(2.0)
    W_dec = torch.nn.Parameter(w)
    W_enc = torch.nn.Parameter(w.transpose(1, 2).clone())
    b_enc = torch.nn.Parameter(torch.zeros(m))
    b_dec = torch.nn.Parameter(data.mean(1).clone())
    params = [W_enc, b_enc, W_dec, b_dec]
    lr = gao_lr(m)
    opt = torch.optim.Adam(params, lr=lr, eps=6.25e-10)
    batch = min(batch_size, n)
    per_epoch = max(1, n // batch)
    total = per_epoch * epochs
    since = torch.zeros(m, dtype=torch.long)
    step, thetas, curve = 0, [], []
    for epoch in range(epochs):
        order = torch.randperm(n, generator=gen)
        err = 0.0
        thetas = []
        for b in range(per_epoch):
            xb_ = data[:, order[b * batch:(b + 1) * batch]]  # [2, B, d]
            for g in opt.param_groups:
                g["lr"] = lr_at(step, total, lr)
            pre = torch.einsum("mbd,mdj->bj", xb_, W_enc) + b_enc
            f = torch.relu(pre)
            dn = W_dec.norm(dim=-1).sum(0)  # [m]
            score = (f * dn).flatten()
            keep = min(k * len(order[b * batch:(b + 1) * batch]), score.numel())
            top = torch.topk(score, keep, sorted=False)
            mask = torch.zeros_like(score).scatter_(0, top.indices, 1.0).view_as(f)
            thetas.append(float(top.values.min().detach()))
            z = f * mask
            recon = torch.einsum("bj,mjd->mbd", z, W_dec) + b_dec[:, None]
            loss = normalised_mse(recon[0], xb_[0]) + normalised_mse(recon[1], xb_[1])
            fired = (z > 0).any(0)
            since += xb_.shape[1]
            since[fired] = 0
            dead = since >= n
            if dead.any():
                resid = (xb_ - recon).detach()
                aux = topk_relu(pre.masked_fill(~dead, float("-inf")),
                                min(d // 2, int(dead.sum())))
                aux = torch.nan_to_num(aux, nan=0.0, neginf=0.0)
                ar = torch.einsum("bj,mjd->mbd", aux, W_dec)
                loss = loss + AUX_COEF * (normalised_mse(ar[0], resid[0])
                                          + normalised_mse(ar[1], resid[1]))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            step += 1
            err += float(loss.detach())
            if progress is not None:
                progress(step, total)
            if stop is not None and stop():
                break
        curve.append(err / per_epoch)
        if stop is not None and stop():
            break
    return Crosscoder(W_enc.detach().numpy().copy(), b_enc.detach().numpy().copy(),
                      W_dec.detach().numpy().copy(), b_dec.detach().numpy().copy(),
                      scales, int(k), float(np.mean(thetas)) if thetas else 0.0, int(layer),
                      {"training": {"m": m, "k": k, "epochs": epochs, "batch_size": batch,
                                    "seed": seed, "lr": lr, "tokens": n, "steps": step,
                                    "loss_by_epoch": curve}})


def latent_scaling(cc: Crosscoder, xa: np.ndarray, xb: np.ndarray, latents) -> dict:
    """``{latent: {"nu_eps", "nu_r", "own"}}`` for the model-specific ``latents`` (module
    docstring; ``own`` is 1 for a fine-tuned-only latent, 0 for a base-only one)."""
    f = cc.encode(xa, xb)
    xs = (np.asarray(xa, np.float64) * cc.scales[0], np.asarray(xb, np.float64) * cc.scales[1])
    recon = cc.decode(f)
    r = norm_share(cc.norms())
    out = {}
    for j in latents:
        j = int(j)
        rows = np.flatnonzero(f[:, j] > 0)
        if not len(rows):
            out[j] = {"nu_eps": None, "nu_r": None, "own": int(r[j] >= 0.5), "tokens": 0}
            continue
        own = int(r[j] >= 0.5)
        d = cc.W_dec[own, j].astype(np.float64)
        fj = f[rows, j].astype(np.float64)
        denom = float(d @ d) * float(fj @ fj)
        beta = {}
        for M in (0, 1):
            term = fj[:, None] * cc.W_dec[M, j][None].astype(np.float64)
            eps = xs[M][rows] - recon[M][rows] + term
            rec = recon[M][rows] - (term if M != own else 0.0)
            beta[("eps", M)] = float(fj @ (eps @ d)) / denom if denom > 0 else float("nan")
            beta[("r", M)] = float(fj @ (rec @ d)) / denom if denom > 0 else float("nan")
        other = 1 - own

        def ratio(kind):
            top = beta[(kind, own)]
            return beta[(kind, other)] / top if top and np.isfinite(top) else None

        out[j] = {"nu_eps": ratio("eps"), "nu_r": ratio("r"), "own": own,
                  "tokens": int(len(rows))}
    return out


def spurious(check: dict) -> str | None:
    """Which artefact Latent Scaling suspects (None: neither)."""
    eps, rec = check.get("nu_eps"), check.get("nu_r")
    if eps is not None and eps > SPURIOUS:
        return "complete shrinkage"
    if rec is not None and rec > SPURIOUS:
        return "latent decoupling"
    return None
