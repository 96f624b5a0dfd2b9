"""One batched pass over an encoded treebank (docs/METHODS.md section 10).

:func:`treebank_pass` runs the encoded sentences through
:func:`analysis.core.forward.forward_batches` once (length-sorted, longest first; at most
``batch_size`` sentences per batch, and with attention maps at most ``max_batch_mb`` of padded
maps) and hands every batch to each consumer: ``consumer(indices, forward)``. The heads study
(:class:`analysis.syntax.heads.HeadsAccumulator`) reads the attention maps, the probes
(:class:`analysis.syntax.states.StatesCollector`) the hidden states; given both, one forward
serves both.
"""

from __future__ import annotations

from typing import Callable, Sequence

from analysis.core.forward import forward_batches


def treebank_pass(loaded, encoded, consumers: Sequence, *, attentions: bool,
                  hidden_states: bool, batch_size: int = 32, max_batch_mb: float = 256.0,
                  progress: Callable[[int, int], None] | None = None) -> None:
    """Forward every sentence of ``encoded`` (an :class:`analysis.syntax.words.
    EncodedTreebank`) once; ``progress(done, total)`` after every batch."""
    encs = encoded.encodings
    total = len(encs)
    per_pair = 4 * loaded.n_layers * loaded.n_heads * 2 if attentions else 0
    done = 0
    for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encs, max(1, int(batch_size)),
                                   bytes_per_token_pair=per_pair, max_batch_mb=max_batch_mb,
                                   attentions=attentions, hidden_states=hidden_states):
        for consume in consumers:
            consume(idx, fw)
        done += len(idx)
        del fw
        if progress is not None:
            progress(done, total)
