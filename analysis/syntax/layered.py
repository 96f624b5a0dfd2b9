"""Every layer's structural probe of one kind trained at once (issue 48; docs/METHODS.md section
10, "Structural probes", and section 20).

A probe of layer l is trained as :mod:`analysis.syntax.probes` describes (its own B, initialised
from ``torch.Generator().manual_seed(seed)``; Adam; batches of sentences in the order
``random.Random(seed)`` draws; its own learning-rate decay and early stop on the stopping
sentences). Those choices do not depend on the layer: every layer's probe sees the same batches
in the same order and starts from the same B. So the layers train side by side in one loop, each
step in three parts:

- the batch's words of every layer still training, gathered without padding ([layers, words,
  D], one reused buffer) and projected by one batched product ``Y = X B^T``;
- each layer's loss and its gradient with respect to ``Y``, written out rather than taken by
  autograd (depth: ``2 sign(||Y_i||^2 - depth_i) Y_i / (n b)`` per word; distance, on ``Y``
  padded per sentence, which is D / k times smaller than padding ``X``: ``4 (rowsum(S)_i Y_i -
  sum_j S_ij Y_j)`` with ``S_ij = sign(pred_ij - dist_ij) / (n^2 b)``), then ``G^T X``: the
  two products of the step, every other operation on [words, k];
- Adam's fused kernel, one parameter group per layer (its own learning rate).

A layer whose early stop fires leaves the loop; the others go on. Each layer's B is the one the
reference training (autograd on padded batches, one probe at a time:
bench/references/syntax.py) gives, to float32's rounding: the gradient equals autograd's to
1e-10 in float64 (tests/unit/test_syntax_layered.py), and the trained maps stop at the same
epochs with metrics within 3e-3 at BERT-base (bench/README.md, issue 48).
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


class _Sentences:
    """The sentences' word rows and targets, for gathering a batch without padding its words:
    per sentence its rows ``offsets[s]:offsets[s + 1]`` and its target ([n, n] distances or
    [n] depths)."""

    def __init__(self, offsets: np.ndarray, targets, kind: str):
        import torch  # lazy: imported when used: torch (heavy)

        self.kind = kind
        self.rows = [np.arange(int(offsets[s]), int(offsets[s + 1]))
                     for s in range(len(offsets) - 1)]
        self.lengths = [len(r) for r in self.rows]
        self.targets = [torch.as_tensor(np.asarray(t), dtype=torch.float32) for t in targets]

    def batch(self, idx) -> "_Batch":
        import torch  # lazy: imported when used: torch (heavy)

        n = [self.lengths[i] for i in idx]
        rows = torch.from_numpy(np.concatenate([self.rows[i] for i in idx]))
        ln = torch.tensor(n, dtype=torch.float32)
        if self.kind == "depth":
            tb = torch.cat([self.targets[i] for i in idx])
            # each row's sentence in the batch (its loss is weighed by 1 / n of that sentence)
            sent = torch.repeat_interleave(torch.arange(len(idx)), torch.tensor(n))
            return _Batch(rows, tb, ln, sent=sent)
        n_max = max(n)
        tb = torch.zeros((len(idx), n_max, n_max))
        mask = torch.zeros((len(idx), n_max))
        for b, i in enumerate(idx):
            tb[b, :n[b], :n[b]] = self.targets[i]
            mask[b, :n[b]] = 1.0
        # each flat row's place in the padded [b * n_max] layout
        place = torch.from_numpy(np.concatenate([b * n_max + np.arange(k)
                                                 for b, k in enumerate(n)]))
        return _Batch(rows, tb, ln, mask=mask, place=place, n_max=n_max)


@dataclass
class _Batch:
    """One batch: its words' rows [R], targets (depths [R] or distances [b, n, n]), lengths
    [b]; depth: each row's sentence [R]; distance: the word mask [b, n] and each row's place
    in the padded layout [R]."""

    rows: object
    tb: object
    lengths: object
    sent: object = None
    mask: object = None
    place: object = None
    n_max: int = 0


class _Gather:
    """The rows' word vectors of the ``active`` layers [a, R, D] (no padding), gathered into
    one buffer that every batch reuses (a fresh one each step costs its pages' first touch)."""

    def __init__(self, X):
        import torch  # lazy: imported when used: torch (heavy)

        self.X, self.buf = X, torch.empty((len(X), 0, X[0].shape[1]), dtype=X[0].dtype)

    def __call__(self, rows, active):
        import torch  # lazy: imported when used: torch (heavy)

        if len(rows) > self.buf.shape[1]:
            self.buf = torch.empty((len(self.X), len(rows), self.X[0].shape[1]),
                                   dtype=self.X[0].dtype)
        xb = self.buf[:len(active), :len(rows)]
        for a, l in enumerate(active):
            torch.index_select(self.X[l], 0, rows, out=xb[a])
        return xb


def _padded(Y, bt: _Batch):
    """Flat rows [a, R, k] -> padded [a, b, n, k] (zeros in the padding)."""

    a, _, k = Y.shape
    Yp = Y.new_zeros((a, len(bt.lengths) * bt.n_max, k))
    Yp.index_copy_(1, bt.place, Y)
    return Yp.view(a, len(bt.lengths), bt.n_max, k)


def stopping_split(n_sent: int) -> tuple[list[int], list[int]]:
    """(training, stopping) sentence positions of ``n_sent``: every 10th sentence (0-based 9,
    19, ...) stops the training, the rest train; with fewer than 10, all of them do both."""
    if n_sent < 10:
        return list(range(n_sent)), list(range(n_sent))
    return ([i for i in range(n_sent) if i % 10 != 9], [i for i in range(n_sent) if i % 10 == 9])


def losses(P, xb, bt: _Batch, kind: str, grad: bool = False):
    """Per layer and sentence losses [a, b] of maps ``P`` [a, k, D] on the batch's vectors
    ``xb`` [a, R, D] (the module docstring of :mod:`analysis.syntax.probes`); with ``grad``,
    also the gradient of the sum over layers of each layer's batch mean with respect to ``P``
    [a, k, D], written out (see the module docstring)."""
    import torch  # lazy: imported when used: torch (heavy)

    a, b = xb.shape[0], len(bt.lengths)
    Y = torch.bmm(xb, P.transpose(1, 2))  # [a, R, k]
    if kind == "depth":
        r = (Y * Y).sum(-1) - bt.tb  # [a, R]
        per = r.new_zeros((a, b)).index_add_(1, bt.sent, r.abs()) / bt.lengths
        if not grad:
            return per
        w = (1.0 / b) / bt.lengths  # d(batch mean) / d(a word's |residual|), per sentence
        gY = Y * (2.0 * torch.sign(r) * w[bt.sent])[..., None]
    else:
        Yp = _padded(Y, bt)  # [a, b, n, k]
        sq = (Yp * Yp).sum(-1)
        diff = sq[..., :, None] + sq[..., None, :] - 2.0 * Yp @ Yp.transpose(-1, -2) - bt.tb
        pair = bt.mask[:, :, None] * bt.mask[:, None, :]
        per = (diff.abs() * pair).sum((-1, -2)) / bt.lengths ** 2
        if not grad:
            return per
        # d(loss) / d(pred) = S, symmetric as pred and the targets are: d / dY_i = 4 (sum_j
        # S_ij Y_i - sum_j S_ij Y_j)
        S = torch.sign(diff) * pair * ((1.0 / b) / bt.lengths ** 2)[:, None, None]
        gYp = 4.0 * (S.sum(-1)[..., None] * Yp - S @ Yp)  # [a, b, n, k]
        gY = gYp.view(a, -1, Yp.shape[-1]).index_select(1, bt.place)
    return per, torch.bmm(gY.transpose(1, 2), xb)


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
    sents = _Sentences(offsets, targets, kind)
    train_idx, stop_idx = stopping_split(n_sent)
    L, D = len(X), X[0].shape[1]
    init = (torch.rand((rank, D), generator=torch.Generator().manual_seed(int(seed))) * 2 - 1) \
        * INIT
    params = [init.clone().requires_grad_() for _ in range(L)]
    # Adam's fused kernel (one pass over a map's state; torch's default on CPU makes six), one
    # parameter group per layer: its own learning rate
    opt = torch.optim.Adam([{"params": [p], "lr": lr} for p in params], fused=True)
    rng = random.Random(seed)
    gather = _Gather(X)
    stops = [sents.batch([stop_idx[j] for j in part])
             for part in batches([sents.lengths[i] for i in stop_idx], 64)]
    best = [float("inf")] * L
    best_B = [init.clone() for _ in range(L)]
    bad, epochs, active = [0] * L, [0] * L, list(range(L))
    with torch.no_grad():
        for epoch in range(1, max_epochs + 1):
            for l in active:
                epochs[l] = epoch
            for part in batches([sents.lengths[i] for i in train_idx], batch_size, rng=rng):
                bt = sents.batch([train_idx[j] for j in part])
                P = torch.stack([params[l] for l in active])
                grads = losses(P, gather(bt.rows, active), bt, kind, grad=True)[1]
                for a, l in enumerate(active):
                    params[l].grad = grads[a]
                opt.step()
            P = torch.stack([params[l] for l in active])
            total = torch.zeros(len(active), dtype=torch.float64)
            for bt in stops:
                total += losses(P, gather(bt.rows, active), bt, kind).sum(1).double()
            still = []
            for a, l in enumerate(active):
                stop_loss = float(total[a]) / len(stop_idx)
                if stop_loss < best[l] - 1e-4:
                    best[l], best_B[l], bad[l] = stop_loss, params[l].detach().clone(), 0
                    still.append(l)
                    continue
                bad[l] += 1
                if bad[l] >= patience:
                    params[l].grad = None  # this layer stops here (Adam passes it over); its
                    continue               # best B is kept
                opt.param_groups[l]["lr"] *= decay
                still.append(l)
            active = still
            if not active:
                break
    seconds = time.perf_counter() - t0
    return [Trained(best_B[l].numpy().astype(np.float32), epochs[l], best[l], seconds)
            for l in range(L)]
