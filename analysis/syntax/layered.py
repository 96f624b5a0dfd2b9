"""Every layer's structural probe of one kind trained at once (issue 48; docs/METHODS.md section
10, "Structural probes", and section 20).

A probe of layer l is trained exactly as :mod:`analysis.syntax.probes` describes (its own B,
initialised from ``torch.Generator().manual_seed(seed)``; Adam; batches of sentences in the
order ``random.Random(seed)`` draws; its own learning-rate decay and early stop on the stopping
sentences). Those choices do not depend on the layer: every layer's probe sees the same batches
in the same order and starts from the same B. So the layers train side by side in one loop:
each step gathers the batch's vectors of every layer still training ([layers, batch, words,
D]) and computes every layer's loss with batched products; the gradient of their sum is each
layer's own gradient, and Adam (one parameter group per layer, its own learning rate) updates
each layer's B as its own optimiser would. A layer whose early stop fires leaves the loop; the
others go on. The products are the same per layer (one matrix product of the same shape per
layer), so a layer's B is the one it would get alone: to the bit at the default model's shapes
(all 7 layers' maps of both kinds on 375 EWT sentences), to float32's rounding where the
batched product takes another kernel (tiny shapes in the tests).

What it saves: the per-step work that does not depend on the layer (the batch's padding and
targets, the optimiser's and autograd's calls) is done once for all layers instead of once per
layer, and the products are batched (BERT-base, 13 layers: measured in docs/METHODS.md
section 20).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from analysis.core.batching import batches
from analysis.core.errors import InputError

INIT = 0.05


@dataclass
class Trained:
    """One layer's trained probe: its map ``B`` [k, D], epochs run, best stopping loss."""

    B: np.ndarray
    epochs: int
    stop_loss: float
    seconds: float


def _targets(targets, idx, n_max: int, kind: str):
    """Padded targets of the sentences ``idx`` ([b, n, n] distances or [b, n] depths), their
    word mask [b, n] and lengths [b]."""
    import torch  # lazy: imported when used: torch (heavy)

    tb = torch.zeros((len(idx), n_max, n_max) if kind == "distance" else (len(idx), n_max))
    mask = torch.zeros((len(idx), n_max))
    for b, i in enumerate(idx):
        n = targets[i].shape[0]
        if kind == "distance":
            tb[b, :n, :n] = targets[i]
        else:
            tb[b, :n] = targets[i]
        mask[b, :n] = 1.0
    return tb, mask, mask.sum(-1)


def _rows(offsets: np.ndarray, idx, n_max: int):
    """Flat row indices [b * n] of the sentences ``idx``' words, padded with row 0."""
    import torch  # lazy: imported when used: torch (heavy)

    rows = torch.zeros((len(idx), n_max), dtype=torch.long)
    for b, i in enumerate(idx):
        a, e = int(offsets[i]), int(offsets[i + 1])
        rows[b, :e - a] = torch.arange(a, e)
    return rows.flatten()


def _vectors(layers, offsets, idx, active, n_max: int):
    """The batch's word vectors of the ``active`` layers [a, b, n, D]. A padding place holds
    the corpus's row 0, not zeros: the losses weigh it by 0, so it adds exactly 0 to every
    loss and gradient (as a zero row did; the tests compare the maps to the bit)."""
    import torch  # lazy: imported when used: torch (heavy)

    rows = _rows(offsets, idx, n_max)
    xb = torch.empty((len(active), len(rows), layers[0].shape[1]))
    for a, l in enumerate(active):
        torch.index_select(layers[l], 0, rows, out=xb[a])
    return xb.view(len(active), len(idx), n_max, -1)


def stopping_split(n_sent: int) -> tuple[list[int], list[int]]:
    """(training, stopping) sentence positions of ``n_sent``: every 10th sentence (0-based 9,
    19, ...) stops the training, the rest train; with fewer than 10, all of them do both."""
    if n_sent < 10:
        return list(range(n_sent)), list(range(n_sent))
    return ([i for i in range(n_sent) if i % 10 != 9], [i for i in range(n_sent) if i % 10 == 9])


def losses(B, xb, tb, mask, lengths, kind: str):
    """Per layer and sentence losses [a, b] of maps ``B`` [a, k, D] on vectors ``xb``
    [a, b, n, D] (the module docstring of :mod:`analysis.syntax.probes`)."""
    a, b, n, D = xb.shape
    Y = (xb.reshape(a, b * n, D) @ B.transpose(1, 2)).view(a, b, n, -1)  # [a, b, n, k]
    sq = (Y ** 2).sum(-1)  # [a, b, n]
    if kind == "depth":
        return ((sq - tb).abs() * mask).sum(-1) / lengths
    pred = sq[..., :, None] + sq[..., None, :] - 2.0 * Y @ Y.transpose(-1, -2)
    pair = mask[:, :, None] * mask[:, None, :]
    return ((pred - tb).abs() * pair).sum((-1, -2)) / lengths ** 2


def train_layers(layers: Sequence[np.ndarray], offsets: np.ndarray, targets, kind: str, *,
                 rank: int, seed: int, max_epochs: int, patience: int, lr: float,
                 batch_size: int, decay: float) -> list[Trained]:
    """The probes of ``kind`` ("distance" or "depth") of every layer in ``layers`` (each [N
    words, D]; sentence s is rows ``offsets[s]:offsets[s + 1]``) towards ``targets`` (per
    sentence: [n, n] tree distances or [n] depths), trained at once on the calling thread's
    torch threads (see the module docstring)."""
    import torch  # lazy: imported when used: torch (heavy)

    t0 = time.perf_counter()
    n_sent = len(offsets) - 1
    if n_sent < 1 or not len(layers):
        raise InputError("No training sentence for the probe.")
    X = [torch.as_tensor(np.ascontiguousarray(x), dtype=torch.float32) for x in layers]
    T = [torch.as_tensor(np.asarray(t), dtype=torch.float32) for t in targets]
    lengths = [int(offsets[s + 1] - offsets[s]) for s in range(n_sent)]
    train_idx, stop_idx = stopping_split(n_sent)
    L, D = len(X), X[0].shape[1]
    init = (torch.rand((rank, D), generator=torch.Generator().manual_seed(int(seed))) * 2 - 1) \
        * INIT
    params = [init.clone().requires_grad_() for _ in range(L)]
    opt = torch.optim.Adam([{"params": [p], "lr": lr} for p in params])
    rng = random.Random(seed)
    stops = []
    for part in batches([lengths[i] for i in stop_idx], 64):
        idx = [stop_idx[j] for j in part]
        n_max = max(lengths[i] for i in idx)
        stops.append((idx, n_max, *_targets(T, idx, n_max, kind)))
    best = [float("inf")] * L
    best_B = [p.detach().clone() for p in params]
    bad, epochs, active = [0] * L, [0] * L, list(range(L))
    for epoch in range(1, max_epochs + 1):
        for l in active:
            epochs[l] = epoch
        for part in batches([lengths[i] for i in train_idx], batch_size, rng=rng):
            idx = [train_idx[j] for j in part]
            n_max = max(lengths[i] for i in idx)
            tb, mask, ln = _targets(T, idx, n_max, kind)
            xb = _vectors(X, offsets, idx, active, n_max)
            B = torch.stack([params[l] for l in active])
            loss = losses(B, xb, tb, mask, ln, kind).mean(1).sum()  # each layer's own mean
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            B = torch.stack([params[l] for l in active])
            total = torch.zeros(len(active), dtype=torch.float64)
            for idx, n_max, tb, mask, ln in stops:
                xb = _vectors(X, offsets, idx, active, n_max)
                total += losses(B, xb, tb, mask, ln, kind).sum(1).double()
        still = []
        for a, l in enumerate(active):
            stop_loss = float(total[a]) / len(stop_idx)
            if stop_loss < best[l] - 1e-4:
                best[l], best_B[l], bad[l] = stop_loss, params[l].detach().clone(), 0
                still.append(l)
                continue
            bad[l] += 1
            if bad[l] >= patience:
                continue  # this layer stops here; its best B is kept
            opt.param_groups[l]["lr"] *= decay
            still.append(l)
        active = still
        if not active:
            break
    seconds = time.perf_counter() - t0
    return [Trained(best_B[l].numpy().astype(np.float32), epochs[l], best[l], seconds)
            for l in range(L)]
