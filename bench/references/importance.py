"""The plain reference for head importance (docs/METHODS.md section 12): one evaluation per
ablation, as the Aspect heads evaluation runs (tokenise the pairs, batches of 64, one forward
per batch with that one ablation). The benchmark times the batched runner against it; the tests
check that both give the same outputs."""

from __future__ import annotations

import numpy as np

from analysis.absa.finetune import _tokenize
from analysis.core.batching import batches, pad_features
from analysis.core.forward import forward_ablations


def ablations_loop(loaded, examples, disabled: np.ndarray, method: str,
                   max_length: int = 128, batch_size: int = 64) -> np.ndarray:
    """Logits [A, n, C]: every ablation in its own pass over the examples."""
    out = None
    for a in range(len(disabled)):
        enc = _tokenize(loaded.tokenizer, examples, max_length)
        lengths = [len(x) for x in enc["input_ids"]]
        for idx in batches(lengths, batch_size, ascending=True):
            logits = forward_ablations(loaded.model, pad_features(loaded.tokenizer, enc, idx),
                                       disabled[a:a + 1], method)[0]
            if out is None:
                out = np.zeros((len(disabled), len(examples), logits.shape[-1]), np.float32)
            out[a, idx] = logits
    return out
