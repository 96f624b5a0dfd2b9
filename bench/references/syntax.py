"""The reference for the structural probes' training (docs/METHODS.md section 10): one probe at
a time, as the study trained them before issue 48 (each layer's distance and depth probe in a
loop of its own). The study now trains every layer's probe of one kind in one loop
(``analysis.syntax.layered``); the benchmark times the two side by side and the tests check
that they give the same probes."""

from __future__ import annotations

import random
import time

import numpy as np

from analysis.core.batching import batches
from analysis.syntax.probes import DECAY, INIT, LR, MAX_EPOCHS, PATIENCE, BATCH, Probe
from analysis.syntax.trees import tree_depths, tree_distances


def _batch(X, T, idx, kind):
    """Padded vectors [B, n, D], targets ([B, n, n] or [B, n]), mask [B, n] and lengths."""
    # lazy: imported when used: torch (heavy)
    import torch

    n_max = max(X[i].shape[0] for i in idx)
    D = X[idx[0]].shape[1]
    xb = torch.zeros((len(idx), n_max, D))
    tb = torch.zeros((len(idx), n_max, n_max) if kind == "distance" else (len(idx), n_max))
    mask = torch.zeros((len(idx), n_max))
    for b, i in enumerate(idx):
        n = X[i].shape[0]
        xb[b, :n] = X[i]
        if kind == "distance":
            tb[b, :n, :n] = T[i]
        else:
            tb[b, :n] = T[i]
        mask[b, :n] = 1.0
    return xb, tb, mask, mask.sum(-1)


def _losses(B, xb, tb, mask, lengths, kind):
    """Per-sentence losses [batch] (see the module docstring)."""
    Y = xb @ B.T  # [b, n, k]
    sq = (Y ** 2).sum(-1)  # [b, n]
    if kind == "depth":
        return ((sq - tb).abs() * mask).sum(-1) / lengths
    pred = sq[:, :, None] + sq[:, None, :] - 2.0 * Y @ Y.transpose(1, 2)
    pair = mask[:, :, None] * mask[:, None, :]
    return ((pred - tb).abs() * pair).sum((-1, -2)) / lengths ** 2


def _train(vectors, targets, kind: str, *, rank: int, seed: int, max_epochs: int = MAX_EPOCHS,
           patience: int = PATIENCE, lr: float = LR, batch_size: int = BATCH,
           decay: float = DECAY) -> Probe:
    # lazy: imported when used: torch (heavy)
    import torch

    t0 = time.perf_counter()
    X = [torch.as_tensor(np.asarray(v), dtype=torch.float32) for v in vectors]
    T = [torch.as_tensor(np.asarray(t), dtype=torch.float32) for t in targets]
    n_sent = len(X)
    stop_idx = [i for i in range(n_sent) if i % 10 == 9] if n_sent >= 10 else list(range(n_sent))
    train_idx = [i for i in range(n_sent) if i % 10 != 9] if n_sent >= 10 else stop_idx
    gen = torch.Generator().manual_seed(int(seed))
    B = ((torch.rand((rank, X[0].shape[1]), generator=gen) * 2 - 1) * INIT).requires_grad_()
    opt = torch.optim.Adam([B], lr=lr)
    rng = random.Random(seed)
    stop_batches = [_batch(X, T, [stop_idx[j] for j in part], kind)
                    for part in batches([X[i].shape[0] for i in stop_idx], 64)]
    if True:  # on the calling thread's torch threads
        epoch, best, best_B = _epochs(X, T, kind, B, opt, rng, train_idx, stop_idx, stop_batches,
                                      max_epochs, patience, decay, batch_size)
    return Probe(best_B.numpy().astype(np.float32), kind, epoch, best,
                 time.perf_counter() - t0)


def _epochs(X, T, kind, B, opt, rng, train_idx, stop_idx, stop_batches, max_epochs, patience,
            decay, batch_size):
    """The training loop; returns (epochs run, best stopping loss, best B)."""
    # lazy: imported when used: torch (heavy)
    import torch

    lengths = [X[i].shape[0] for i in train_idx]
    best, best_B, bad, epoch = float("inf"), B.detach().clone(), 0, 0
    for epoch in range(1, max_epochs + 1):
        for part in batches(lengths, batch_size, rng=rng):
            xb, tb, mask, ln = _batch(X, T, [train_idx[j] for j in part], kind)
            loss = _losses(B, xb, tb, mask, ln, kind).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            total = sum(float(_losses(B, *sb, kind).sum()) for sb in stop_batches)
        stop_loss = total / len(stop_idx)
        if stop_loss < best - 1e-4:
            best, best_B, bad = stop_loss, B.detach().clone(), 0
        else:
            bad += 1
            if bad >= patience:
                break
            for g in opt.param_groups:
                g["lr"] *= decay
    return epoch, best, best_B


def train_probe(vectors, heads_list, kind: str, *, rank: int = 64, seed: int = 0,
                **options) -> Probe:
    """One probe of ``kind`` ("distance" or "depth") trained alone, the old way."""
    targets = [tree_distances(h) if kind == "distance" else tree_depths(h) for h in heads_list]
    return _train(vectors, targets, kind, rank=rank, seed=seed, **options)


def train_layers(layers, offsets, targets, kind: str, *, rank: int, seed: int, max_epochs: int,
                 patience: int, lr: float, batch_size: int, decay: float):
    """``analysis.syntax.layered.train_layers`` the old way: each layer's probe in a loop of its
    own (the benchmark puts it in the study's place)."""
    from analysis.syntax.layered import Trained

    out = []
    for x in layers:
        vectors = [x[offsets[s]:offsets[s + 1]] for s in range(len(offsets) - 1)]
        p = _train(vectors, targets, kind, rank=rank, seed=seed, max_epochs=max_epochs,
                   patience=patience, lr=lr, batch_size=batch_size, decay=decay)
        out.append(Trained(p.B, p.epochs, p.stop_loss, p.seconds))
    return out
