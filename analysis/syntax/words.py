"""Treebank words -> :class:`analysis.core.encoding.Encoding` (docs/METHODS.md section 10, "Words").

The words are given to the tokenizer already split (``is_split_into_words=True``), so every
token belongs to exactly one treebank word. ``Encoding.words`` is ``[CLS] + words + [SEP]``
(the specials are words of their own, whatever the model calls them), and
``Encoding.word_ids`` maps every token to its index there, so
:func:`analysis.core.encoding.word_level` pools maps to ``n + 2`` words and word ``i`` of the
treebank (1-based) is row ``i`` of the pooled map.

Byte-level BPE tokenizers (RoBERTa, GPT-2 style) read a word without a leading space as the
middle of a word; when the tokenizer does not add that space itself (``add_prefix_space``) a
space is put before every word, which is what ``add_prefix_space=True`` does. A word the
tokenizer turns into no piece at all (e.g. only zero-width characters) is read as the unknown
token. Sentences longer than the model's maximum raise InputError (corpus functions skip them
and count them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analysis.core.encoding import Encoding, _display_token, structural_special_ids
from analysis.core.errors import DataError, InputError

CANNOT_SPLIT = ("This model's tokenizer cannot read pre-split words (is_split_into_words), so "
                "treebank words cannot be matched to its tokens.")


def needs_prefix_space(tokenizer) -> bool:
    """True when the tokenizer reads "a" and " a" differently and does not add the space
    itself (byte-level BPE without ``add_prefix_space``)."""
    try:
        return tokenizer.tokenize("a") != tokenizer.tokenize(" a")
    except Exception:
        return False


def _word_ids_of(tokenizer, enc, ids, specials, n_words, piece_counts, fast_only=False):
    """Word index (0-based over the treebank words, None for specials) per token: the fast
    tokenizer's ``word_ids()``, else consecutive non-special tokens by each word's count
    (None with ``fast_only``)."""
    try:
        wids = enc.word_ids()
    except Exception:
        wids = None
    if wids is not None:
        return list(wids)
    if fast_only:
        return None
    if piece_counts is None:
        raise InputError(CANNOT_SPLIT)
    out, w, left = [], 0, piece_counts[0] if piece_counts else 0
    for tid in ids:
        if tid in specials:
            out.append(None)
            continue
        while left == 0 and w < n_words - 1:
            w += 1
            left = piece_counts[w]
        if left == 0:
            raise InputError(CANNOT_SPLIT)
        out.append(w)
        left -= 1
    return out


class SentenceTooLong(InputError):
    """The sentence has more tokens than the model reads (corpus functions skip it)."""


def _call(tokenizer, given):
    try:
        return tokenizer(given, is_split_into_words=True, add_special_tokens=True,
                         truncation=False)
    except Exception as exc:
        raise InputError(f"{CANNOT_SPLIT} ({str(exc).splitlines()[0][:120]})") from None


def encode_words(tokenizer, words, max_length: int = 512, *, prefix_space: bool | None = None
                 ) -> Encoding:
    """Encode a treebank sentence (see the module docstring). Raises InputError when the
    sentence is longer than ``max_length`` tokens (:class:`SentenceTooLong`) or the tokenizer
    cannot split words."""
    words = [str(w) for w in words]
    if not words:
        raise InputError("The sentence has no words.")
    if prefix_space is None:
        prefix_space = needs_prefix_space(tokenizer)
    given = [" " + w if prefix_space else w for w in words]
    specials = structural_special_ids(tokenizer)
    enc = _call(tokenizer, given)
    ids = list(enc["input_ids"])
    wids = _word_ids_of(tokenizer, enc, ids, specials, len(words), None, fast_only=True)
    if wids is None or len({w for w in wids if w is not None}) != len(words):
        # a word without pieces, or no word ids: count pieces per word; empty words -> UNK
        counts = [len(x) for x in tokenizer(given, add_special_tokens=False)["input_ids"]]
        if any(c == 0 for c in counts):
            unk = getattr(tokenizer, "unk_token", None)
            if not unk:
                raise InputError(CANNOT_SPLIT)
            given = [g if c else (" " + unk if prefix_space else unk)
                     for g, c in zip(given, counts)]
            counts = [c or 1 for c in counts]
            enc = _call(tokenizer, given)
            ids = list(enc["input_ids"])
        wids = _word_ids_of(tokenizer, enc, ids, specials, len(words), counts)
        if len({w for w in wids if w is not None}) != len(words):
            raise InputError(CANNOT_SPLIT)
    n = len(ids)
    if n > max_length:
        raise SentenceTooLong(f"The sentence has {n} tokens; this model reads at most "
                              f"{max_length}.")
    # [CLS]-like specials before the first word -> word 0, the rest -> word n + 1
    first = next(i for i, w in enumerate(wids) if w is not None)
    word_ids = [w + 1 if w is not None else (0 if i < first else len(words) + 1)
                for i, w in enumerate(wids)]
    if 0 not in word_ids or len(words) + 1 not in word_ids:
        raise InputError("This model's tokenizer adds no [CLS]/[SEP] tokens around a sentence; "
                         "the syntax study needs both.")
    tokens = [_display_token(t) for t in tokenizer.convert_ids_to_tokens(ids)]
    special = np.array([i in specials for i in ids], dtype=bool)
    cls = tokens[0]
    sep = tokens[max(i for i, w in enumerate(word_ids) if w == len(words) + 1)]
    use_tt = "token_type_ids" in getattr(tokenizer, "model_input_names", [])
    return Encoding(
        tokens=tokens, input_ids=ids, token_type_ids=[0] * n if use_tt else None,
        segments=np.zeros(n, dtype=np.int8), special=special, word_ids=word_ids,
        words=[cls, *words, sep], text=" ".join(words), n_tokens_full=n,
    )


@dataclass
class EncodedTreebank:
    """The encodable sentences of a treebank: their encodings, their rows in the dataset and
    their gold columns; sentences longer than the model's maximum are counted in ``skipped``."""

    encodings: list[Encoding]
    rows: list[int]
    words: list[list[str]]
    heads: list[list[int]]
    deprels: list[list[str]]
    upos: list[list[str]]
    ids: list[str]
    skipped: int = 0
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.encodings)


def encode_treebank(loaded, dataset, max_sentences: int | None = None) -> EncodedTreebank:
    """Encode the first ``max_sentences`` sentences of a treebank Dataset (all when None)
    that fit the model; raises DataError when none does."""
    if dataset is None or len(dataset) == 0:
        raise DataError("The treebank is empty.")
    n = len(dataset) if max_sentences is None else min(len(dataset), int(max_sentences))
    part = dataset.select(range(n)) if n < len(dataset) else dataset
    cols = part.to_dict()
    tok = loaded.tokenizer
    prefix = needs_prefix_space(tok)
    out = EncodedTreebank([], [], [], [], [], [], [])
    for r in range(n):
        try:
            enc = encode_words(tok, cols["words"][r], loaded.max_length, prefix_space=prefix)
        except SentenceTooLong:
            out.skipped += 1
            continue
        out.encodings.append(enc)
        out.rows.append(r)
        for name in ("words", "heads", "deprels", "upos"):
            getattr(out, name).append(list(cols[name][r]))
        out.ids.append(str(cols["id"][r]))
    out.notes += skipped_notes(out.skipped, loaded.max_length)
    if not out.encodings:
        raise DataError(none_fits(loaded.max_length))
    return out


def skipped_notes(skipped: int, max_length: int) -> list[str]:
    """The note on sentences skipped for being longer than the model's maximum."""
    return [f"Skipped {skipped} sentence(s) longer than the model's maximum of {max_length} "
            "tokens."] if skipped else []


def none_fits(max_length: int) -> str:
    return f"No sentence of the treebank fits the model's maximum of {max_length} tokens."
