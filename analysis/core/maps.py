"""One text or sentence pair's attention maps, at token or word level: the core of the Attention
study that other studies use too (the Aspect heads page's word view of a pair). Core: it
imports no study.

``attentions[l, h, i, j]``: layer ``l``, head ``h``, from query token ``i`` to key token ``j``;
every row sums to 1 (docs/METHODS.md section 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.core.encoding import Encoding, drop_specials, encode, word_level
from analysis.core.errors import InputError
from analysis.core.forward import forward


@dataclass
class AttentionResult:
    encoding: Encoding
    attentions: np.ndarray  # [L, H, T, T] float32

    @property
    def tokens(self) -> list[str]:
        return self.encoding.tokens


def attention_for(loaded, text: str, pair: str | None = None) -> AttentionResult:
    """Encode one text (or pair) and return its attention maps."""
    enc = encode(loaded.tokenizer, text, pair, max_length=loaded.max_length)
    return AttentionResult(enc, forward(loaded.model, loaded.tokenizer, [enc]).maps(0))


def level_view(result: AttentionResult, level: str = "token", hide_special: bool = False):
    """(labels, maps [L,H,n,n], segments, special) at token or word level, optionally without
    special tokens (rows renormalised)."""
    enc = result.encoding
    att = result.attentions
    labels = list(enc.tokens)
    segments = enc.segments
    special = enc.special
    if level == "word":
        att = word_level(att, enc.word_ids)
        labels = list(enc.words)
        first = {}
        for i, w in enumerate(enc.word_ids):
            first.setdefault(w, i)
        pos = [first[w] for w in range(len(labels))]
        segments = enc.segments[pos]
        special = enc.special[pos]
    elif level != "token":
        raise InputError(f"Unknown level {level!r}: use 'token' or 'word'.")
    if hide_special:
        keep = ~special
        att = drop_specials(att, keep)
        labels = [l for l, k in zip(labels, keep) if k]
        segments = segments[keep]
        special = special[keep]
    return labels, att, segments, special
