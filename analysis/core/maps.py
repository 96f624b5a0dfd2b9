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
from analysis.core.study import Field, Schema, StudyResult


@dataclass
class AttentionResult(StudyResult):
    """One input's attention maps with its encoding (the Attention study's result); its JSON
    keys are the arrays of the ``attention`` command's .npz (:meth:`arrays`)."""

    SCHEMA = Schema((
        Field("attentions", "layers x heads x tokens x tokens (0-indexed), float32: from query "
                            "token i (rows) to key token j; every row sums to 1"),
        Field("tokens", "the word pieces, [CLS]/[SEP] included"),
        Field("segments", "per token, 0 = text A, 1 = text B (int8)"),
        Field("special", "per token, True for [CLS]/[SEP] and the like"),
        Field("word_ids", "per token, its word's index into 'words' (int32)"),
        Field("words", "the words (each special token a word of its own)"),
        Field("model", "the model's spec"),
    ))

    encoding: Encoding
    attentions: np.ndarray  # [L, H, T, T] float32
    model: str = ""

    @property
    def tokens(self) -> list[str]:
        return self.encoding.tokens

    def arrays(self) -> dict[str, np.ndarray]:
        """The result as typed arrays (:data:`SCHEMA`'s keys): the command's .npz."""
        enc = self.encoding
        return {"attentions": self.attentions.astype(np.float32),
                "tokens": np.array(enc.tokens),
                "segments": enc.segments.astype(np.int8),
                "special": enc.special,
                "word_ids": np.array(enc.word_ids, dtype=np.int32),
                "words": np.array(enc.words),
                "model": np.array(self.model)}

    def json_fields(self) -> dict:
        return self.arrays()

    @classmethod
    def from_json(cls, data: dict) -> "AttentionResult":
        """The maps and tokens back from their JSON (or the .npz's arrays); the encoding keeps
        what they hold (no token ids, no text)."""
        cls.SCHEMA.check(data)
        enc = Encoding(tokens=[str(t) for t in np.asarray(data["tokens"]).tolist()],
                       input_ids=[], token_type_ids=None,
                       segments=np.asarray(data["segments"], dtype=np.int8),
                       special=np.asarray(data["special"], dtype=bool),
                       word_ids=[int(w) for w in np.asarray(data["word_ids"]).tolist()],
                       words=[str(w) for w in np.asarray(data["words"]).tolist()], text="")
        return cls(enc, np.asarray(data["attentions"], dtype=np.float32),
                   str(np.asarray(data["model"]).item()))


def attention_for(loaded, text: str, pair: str | None = None) -> AttentionResult:
    """Encode one text (or pair) and return its attention maps."""
    enc = encode(loaded.tokenizer, text, pair, max_length=loaded.max_length)
    return AttentionResult(enc, forward(loaded.model, loaded.tokenizer, [enc]).maps(0),
                           loaded.spec)


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
