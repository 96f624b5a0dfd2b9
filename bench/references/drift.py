"""Reference for the drift study's benchmark and tests (docs/METHODS.md section 9).

:func:`batched_head_cosine`: only the per-example, per-head cosine of
:func:`analysis.drift.compare_models`, on the same length-sorted batches and masks, without the
other measures: the like-for-like batched counterpart of a per-example loop.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from analysis.drift import BatchMasks, batch_cosine
from analysis.core.forward import forward_batches
from analysis.core.models import LoadedModel


def batched_head_cosine(before: LoadedModel, after: LoadedModel, encodings: Sequence,
                        batch_size: int = 32) -> np.ndarray:
    """[N, L, H] per-example, per-head cosine of the two models' maps, in the examples' order."""
    import torch

    out = np.zeros((len(encodings), before.n_layers, before.n_heads), dtype=np.float32)
    runs = [forward_batches(m.model, before.tokenizer, encodings, max(1, int(batch_size)))
            for m in (before, after)]
    with torch.inference_mode():
        for (idx, out_b), (_, out_a) in zip(*runs):
            masks = BatchMasks.of([encodings[i] for i in idx])
            rows = torch.as_tensor(idx)
            for l, (att_b, att_a) in enumerate(zip(out_b.attentions, out_a.attentions)):
                out[rows, l] = batch_cosine(masks.crop(att_b), masks.crop(att_a)).numpy()
    return out
