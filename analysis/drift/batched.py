"""The per-example measures on one padded batch at once (torch), for one layer at a time:
per-head cosine, pattern features and RSA (docs/METHODS.md section 9). Padding cells never
count: maps are multiplied by the (query, key) mask of each example's real tokens, so a batch
gives the numbers of one example at a time on its cropped [n, n] maps."""

from __future__ import annotations

from typing import Sequence

import numpy as np


class BatchMasks:
    """Masks of one padded batch, built once and shared by every layer and both models:
    ``valid`` [B,T] real tokens, ``n`` [B] their count, ``pair`` [B,1,T,T] real (query, key)
    cells, ``special`` [B,1,T,1] special keys, ``uniform`` [B,1,T,T] each row's uniform
    distribution over the non-special keys of its own segment."""

    def __init__(self, valid, special, segments):
        # lazy: imported when used: torch (heavy)
        import torch

        f = torch.float32
        self.valid = valid
        self.n = valid.sum(-1).to(f)
        self.padded = not bool(valid.all())  # long inputs at the token cap: mostly not
        pair = valid[:, :, None] & valid[:, None, :]
        self.pair = pair[:, None].to(f)
        self.special = (special & valid).to(f)[:, None, :, None]
        same = (segments[:, :, None] == segments[:, None, :]) & ~special[:, None, :] & pair
        same = same.to(f)
        self.uniform = (same / same.sum(-1, keepdim=True).clamp_min(1.0))[:, None]

    @classmethod
    def of(cls, encodings: Sequence) -> "BatchMasks":
        """Masks of a group of :class:`analysis.core.encoding.Encoding` padded to the longest."""
        # lazy: imported when used: torch (heavy)
        import torch

        lengths = torch.tensor([e.n_tokens for e in encodings])
        t = int(lengths.max())
        valid = torch.arange(t)[None, :] < lengths[:, None]
        special = torch.zeros((len(encodings), t), dtype=torch.bool)
        segments = torch.full((len(encodings), t), -1, dtype=torch.int8)
        for b, e in enumerate(encodings):
            special[b, : e.n_tokens] = torch.from_numpy(np.asarray(e.special, dtype=bool))
            segments[b, : e.n_tokens] = torch.from_numpy(np.asarray(e.segments, dtype=np.int8))
        return cls(valid, special, segments)

    def crop(self, att):
        """One layer's maps [B,H,T,T] as float32 with every padding cell set to 0 (the maps
        themselves, not a copy, when the batch has no padding)."""
        return att.float() * self.pair if self.padded else att.float()


def batch_cosine(am, bm):
    """Per-example per-head cosine of cropped maps [B,H,T,T] x2 -> [B,H] (0 where a norm
    is 0); equals :func:`analysis.drift.similarity.head_cosine` on each example."""
    # lazy: imported when used: torch (heavy)
    import torch

    fa, fb = am.flatten(2), bm.flatten(2)
    dot = torch.linalg.vecdot(fa, fb)
    denom = torch.linalg.vector_norm(fa, dim=-1) * torch.linalg.vector_norm(fb, dim=-1)
    return torch.where(denom > 0, dot / denom.clamp_min(1e-30), torch.zeros_like(dot))


def batch_features(am, masks: BatchMasks):
    """Pattern features (vertical, diagonal, block) of cropped maps [B,H,T,T] -> [B,H,3]:

    - vertical = (1/n) sum_i sum_{j special} A[i,j]
    - diagonal = (1/n) sum_i (A[i,i-1] + A[i,i] + A[i,i+1])
    - block = 1 - (1/n) sum_i TV(A[i,:], U_i), TV(p, q) = 0.5 sum_j |p_j - q_j|, U_i uniform
      over the non-special keys of token i's segment.
    """
    # lazy: imported when used: torch (heavy)
    import torch

    n = masks.n[:, None]
    vertical = (am @ masks.special).sum((-1, -2)) / n
    diagonal = sum(torch.diagonal(am, k, -2, -1).sum(-1) for k in (-1, 0, 1)) / n
    tv = (am - masks.uniform).abs_().sum((-1, -2))  # padding rows: 0 - 0
    return torch.stack([vertical, diagonal, 1.0 - 0.5 * tv / n], dim=-1)


def batch_rsa(hid_before, hid_after, valid):
    """Per-example RSA (Merchant et al. 2020) for one layer: [B,T,d1], [B,T,d2], valid [B,T]
    -> [B] float64: the Pearson r of the upper triangles (i < j, real tokens) of the two
    token-by-token cosine-similarity matrices; nan where a triangle is constant."""
    # lazy: imported when used: torch (heavy)
    import torch


    def sims(h):
        h = torch.nn.functional.normalize(h.float(), dim=-1)
        return h @ h.transpose(1, 2)

    t = valid.shape[1]
    upper = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    mask = (upper[None] & valid[:, :, None] & valid[:, None, :]).float()
    count = mask.sum((1, 2)).clamp_min(1.0)
    x, y = sims(hid_before), sims(hid_after)
    xc = (x - ((x * mask).sum((1, 2)) / count)[:, None, None]) * mask
    yc = (y - ((y * mask).sum((1, 2)) / count)[:, None, None]) * mask
    denom = torch.sqrt((xc * xc).sum((1, 2)) * (yc * yc).sum((1, 2)))
    r = (xc * yc).sum((1, 2)) / denom.clamp_min(1e-30)
    return torch.where(denom > 1e-10, r, torch.full_like(r, float("nan"))).double()
