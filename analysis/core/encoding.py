"""Encode a text or a sentence pair into tokens, segments, special-token marks and words;
pool token maps to words; hide special tokens (docs/METHODS.md section 1).

Conventions:

- Segment A = [CLS] and the first text up to and including the first [SEP]; B = the rest
  (RoBERTa's extra separators between the texts belong to B).
- Word level (Clark et al. 2019): attention *to* a word is the sum of its wordpieces'
  columns, attention *from* a word the mean of its wordpieces' rows; rows still sum to 1.
- [CLS]/[SEP]/<s>/</s>/padding are special; [UNK] and [MASK] stand for real words.
- Segment filters (All / A->A / B->B / A->B / B->A) run in the browser
  (``segmentAllows`` in ui/common/attention/frontend/heads.js).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from analysis.core.errors import DataError, InputError

# Zero-width and bidirectional control characters: invisible, and they make tokens nobody
# can read. They are removed before tokenisation and the user is told.
INVISIBLE = re.compile("[\u200b\u200c\u200d\u200e\u200f\u202a-\u202e\u2060-\u2069\ufeff\u00ad]")

def clean_text(text: str | None, label: str = "Text") -> tuple[str, list[str]]:
    """Strip invisible characters; refuse empty input. Returns (clean text, notices)."""
    if text is None:
        raise InputError(f"{label} is empty: type a sentence to analyse.")
    if not isinstance(text, str):
        raise InputError(f"{label} must be text.")
    notices = []
    cleaned = INVISIBLE.sub("", text)
    if cleaned != text:
        n = len(text) - len(cleaned)
        notices.append(f"{label}: removed {n} invisible (zero-width or direction) character(s).")
    cleaned = unicodedata.normalize("NFC", cleaned)
    if not cleaned.strip():
        raise InputError(f"{label} is empty: type a sentence to analyse.")
    return cleaned.strip(), notices


@dataclass
class Encoding:
    """One tokenised example."""

    tokens: list[str]
    input_ids: list[int]
    token_type_ids: list[int] | None
    segments: np.ndarray  # 0 = segment A, 1 = segment B (per token)
    special: np.ndarray  # True for [CLS]/[SEP]/<s>/</s>...
    word_ids: list[int]  # index into ``words`` for every token (specials have their own)
    words: list[str]
    text: str
    pair: str | None = None
    truncated: bool = False
    n_tokens_full: int = 0
    notices: list[str] = field(default_factory=list)

    @property
    def n_tokens(self) -> int:
        return len(self.input_ids)

    @property
    def is_pair(self) -> bool:
        return self.pair is not None


def _display_token(tok: str) -> str:
    # SentencePiece / byte-level BPE markers are shown as a leading space-free token.
    if tok.startswith("\u0120") or tok.startswith("\u2581"):
        return tok[1:] or tok
    return tok


def structural_special_ids(tokenizer) -> set[int]:
    """Ids of the tokens that frame the input ([CLS], [SEP], <s>, </s>, padding); [UNK] and
    [MASK] stand for real words and are not special here."""
    content = {getattr(tokenizer, "unk_token_id", None), getattr(tokenizer, "mask_token_id", None)}
    return {i for i in tokenizer.all_special_ids if i not in content}


# No token of a real text needs more characters than this (a WordPiece word over 100 characters
# is one [UNK]); a text longer than max_length * CHARS_PER_TOKEN is cut before tokenising.
CHARS_PER_TOKEN = 64


def _cut_at_space(text: str, n: int) -> str:
    """``text`` cut before the last whitespace within its first ``n`` characters (at ``n`` when
    there is none in the second half), so that every word kept is whole."""
    k = max(text.rfind(c, 0, n) for c in " \n\t\r")
    return text[:k if k > n // 2 else n]


def _n_tokens(tokenizer, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


@dataclass
class _Cut:
    """A text cut at a space before tokenising: ``short`` holds ``n_short`` > max_length
    tokens (about max_length + 8), ``long`` (a longer prefix) ``n_long``; ``total`` is the full
    text's token count estimated from the long prefix's tokens per character."""

    short: str
    n_short: int
    long: str
    n_long: int
    total: int
    few: bool = False  # cut at the ceiling although it holds no more than max_length tokens


def _precut(tokenizer, text: str | None, max_length: int) -> _Cut | None:
    """The cut of a text far longer than ``max_length`` tokens can need (the budget grows
    until the prefix holds more than ``max_length`` tokens, up to 16 times the first budget:
    a longer run of characters that makes so few tokens, such as one giant word, is cut
    there); None when it is short enough."""
    budget = first = max_length * CHARS_PER_TOKEN
    while text is not None and len(text) > budget:
        cut = _cut_at_space(text, budget)
        n = _n_tokens(tokenizer, cut)
        if n > max_length or budget >= 16 * first:
            total = max(n, round(n * len(text) / max(1, len(cut))))
            short = _cut_at_space(cut, len(cut) * (max_length + 8) // max(1, n) + 1)
            k = _n_tokens(tokenizer, short) if n > max_length else 0
            return _Cut(short, k, cut, n, total) if k > max_length else \
                _Cut(cut, n, cut, n, total, few=n <= max_length)
        budget *= 4
    return None


def _grow(tokenizer, text: str, cut: _Cut, need: int) -> tuple[str, int]:
    """A prefix of ``text`` (at least ``cut.long``) holding more than ``need`` tokens, or the
    whole text."""
    prefix, n = cut.long, cut.n_long
    while n <= need and len(prefix) < len(text):
        prefix = _cut_at_space(text, 2 * len(prefix) + 1) if 2 * len(prefix) < len(text) \
            else text
        n = _n_tokens(tokenizer, prefix)
    return prefix, n


def _cut_pair(tokenizer, text, pair, max_length):
    """(text, pair, tokens removed, whether anything was cut: False, True or "few") with each
    far-too-long part cut.
    When both are cut, the tokenizer's longest-first truncation gives the odd token to the
    part with more tokens (to the pair on a tie), so the cut keeps the order of the
    (estimated) full lengths."""
    a, b = _precut(tokenizer, text, max_length), _precut(tokenizer, pair, max_length)
    if a and b and (a.n_short > b.n_short) != (a.total > b.total):
        if a.total > b.total:
            a.short, a.n_short = _grow(tokenizer, text, a, b.n_short)
        else:
            b.short, b.n_short = _grow(tokenizer, pair, b, a.n_short - 1)
    cuts = [c for c in (a, b) if c]
    removed = sum(max(0, c.total - c.n_short) for c in cuts)
    return (a.short if a else text, b.short if b else pair, removed,
            "few" if any(c.few for c in cuts) else bool(cuts))


def encode(tokenizer, text: str, pair: str | None = None, max_length: int = 512) -> Encoding:
    """Tokenise ``text`` (and ``pair``) with specials, truncating to ``max_length`` tokens.

    A text far longer than ``max_length`` tokens can need is cut at a space first (only the
    tokens the model keeps are computed); the notice then gives the full length estimated."""
    text, notices = clean_text(text, "Text A" if pair is not None else "Text")
    if pair is not None:
        pair, more = clean_text(pair, "Text B")
        notices += more
    chars = len(text) + len(pair or "")
    text, pair, removed, was_cut = _cut_pair(tokenizer, text, pair, max_length)
    full = tokenizer(text, pair, truncation=False, add_special_tokens=True)
    n_full = len(full["input_ids"]) + removed
    enc = tokenizer(
        text, pair, truncation=True if n_full > max_length else False, max_length=max_length,
        add_special_tokens=True, return_offsets_mapping=bool(getattr(tokenizer, "is_fast", False)),
    )
    ids = list(enc["input_ids"])
    tokens = [_display_token(t) for t in tokenizer.convert_ids_to_tokens(ids)]
    special_ids = structural_special_ids(tokenizer)
    special = np.array([i in special_ids for i in ids], dtype=bool)
    unk = getattr(tokenizer, "unk_token_id", None)
    n_unk = sum(1 for i in ids if unk is not None and i == unk)
    if n_unk:
        notices.append(
            f"{n_unk} piece(s) of the text (emoji or rare symbols) are unknown to this model's "
            f"vocabulary and appear as {tokenizer.unk_token}."
        )
    truncated = n_full > len(ids)
    if was_cut == "few":
        kept = len(text) + len(pair or "")
        notices.append(
            f"The input has {chars} characters; only its first {kept} were tokenised (it has "
            "words or runs of spaces too long to be worth reading further)."
        )
    elif was_cut:
        notices.append(
            f"The input has about {n_full} tokens ({chars} characters); it was truncated to "
            f"the model's maximum of {max_length}."
        )
    elif truncated:
        notices.append(
            f"The input has {n_full} tokens; it was truncated to the model's maximum of "
            f"{max_length}."
        )
    if not (~special).any():
        raise InputError("The text has no tokens this model can read.")
    # Segments: A is everything up to and including the first separator after the first text.
    seq_ids = enc.sequence_ids() if hasattr(enc, "sequence_ids") else None
    segments = np.zeros(len(ids), dtype=np.int8)
    if pair is not None:
        if seq_ids is not None:
            seen_b = False
            for i, s in enumerate(seq_ids):
                if s == 1:
                    seen_b = True
                if seen_b:
                    segments[i] = 1
            # separators between A and B belong to A up to the first one (inclusive)
            first_b = int(np.argmax(segments)) if segments.any() else len(ids)
            sep_run = []
            i = first_b - 1
            while i > 0 and special[i]:
                sep_run.append(i)
                i -= 1
            for i in sep_run[:-1]:  # extra separators (RoBERTa's </s></s>) go to B
                segments[i] = 1
        elif enc.get("token_type_ids") is not None:
            segments = np.array(enc["token_type_ids"], dtype=np.int8)
    word_ids, words = _group_words(tokenizer, enc, tokens, special, text, pair, seq_ids)
    tt = enc.get("token_type_ids")
    return Encoding(
        tokens=tokens, input_ids=ids, token_type_ids=list(tt) if tt is not None else None,
        segments=segments, special=special, word_ids=word_ids, words=words, text=text,
        pair=pair, truncated=truncated, n_tokens_full=n_full, notices=notices,
    )


def _group_words(tokenizer, enc, tokens, special, text, pair, seq_ids):
    """Word index per token. Specials are words of their own; uses the fast tokenizer's
    word ids where available, else WordPiece '##' continuation."""
    word_of = []
    words: list[str] = []
    wids = None
    if getattr(tokenizer, "is_fast", False):
        try:
            wids = enc.word_ids()
        except Exception:
            wids = None
    offsets = enc.get("offset_mapping")
    prev_key = None
    for i, tok in enumerate(tokens):
        if special[i] or (wids is not None and wids[i] is None):
            words.append(tokens[i])
            word_of.append(len(words) - 1)
            prev_key = None
            continue
        if wids is not None:
            key = (seq_ids[i] if seq_ids is not None else 0, wids[i])
            new = key != prev_key
        else:
            key = None
            new = not tok.startswith("##")
        if new:
            words.append("")
        word_of.append(len(words) - 1)
        prev_key = key
    # Labels: original text span of each word where offsets exist, else joined pieces.
    spans: dict[int, list[int]] = {}
    for i, w in enumerate(word_of):
        if not special[i] and not (wids is not None and wids[i] is None):
            spans.setdefault(w, []).append(i)
    for w, idx in spans.items():
        label = None
        if offsets is not None and seq_ids is not None:
            src = text if seq_ids[idx[0]] in (0, None) else pair
            start, end = offsets[idx[0]][0], offsets[idx[-1]][1]
            if src is not None and end > start:
                label = src[start:end].strip()
        if not label:
            label = "".join(tokens[i][2:] if tokens[i].startswith("##") else tokens[i] for i in idx)
        words[w] = label
    return word_of, words


# ---------------------------------------------------------------------------------------------
# Pooling, filtering


def word_level(attn: np.ndarray, word_ids: Sequence[int]) -> np.ndarray:
    """Pool a token-level map [..., T, T] to words [..., W, W] (Clark et al. 2019).

    To-word = sum over the word's wordpiece columns; from-word = mean over its rows.
    """
    word_ids = np.asarray(word_ids)
    n_words = int(word_ids.max()) + 1
    onehot = np.zeros((len(word_ids), n_words), dtype=np.float64)
    onehot[np.arange(len(word_ids)), word_ids] = 1.0
    counts = onehot.sum(0)
    to_words = attn.astype(np.float64) @ onehot  # [..., T, W]
    from_words = np.swapaxes(onehot / counts, 0, 1) @ to_words  # [..., W, W]
    return from_words.astype(np.float32)


def drop_specials(attn: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Remove rows and columns of special tokens and renormalise each row to sum to 1."""
    keep = np.asarray(keep, dtype=bool)
    sub = attn[..., keep, :][..., :, keep].astype(np.float64)
    sums = sub.sum(-1, keepdims=True)
    sub = np.divide(sub, sums, out=np.zeros_like(sub), where=sums > 0)
    return sub.astype(np.float32)


# ---------------------------------------------------------------------------------------------
# A corpus


@dataclass
class Corpus:
    """Encoded examples with their source rows and optional gold labels; blank examples were
    skipped and counted, long ones truncated to the model's maximum and counted."""

    encodings: list[Encoding]
    rows: list[int]
    labels: list | None = None
    skipped: int = 0
    truncated: int = 0

    @property
    def texts(self) -> list[str]:
        return [e.text for e in self.encodings]

    @property
    def pairs(self) -> list[str | None]:
        return [e.pair for e in self.encodings]


EMPTY_CORPUS = ("The corpus is empty. None of the examples has any token this model can read.")


def encode_corpus(tokenizer, texts: Sequence[str], pairs: Sequence[str | None] | None = None,
                  labels: Sequence | None = None, max_length: int = 512,
                  max_examples: int | None = None) -> Corpus:
    """Encode examples in order until ``max_examples`` are encoded, skipping (and counting)
    those with no token the model can read; a blank pair makes a single text. Raises
    DataError when nothing is left."""
    pairs = list(pairs) if pairs is not None else [None] * len(texts)
    encs, rows, labs, skipped, truncated = [], [], [], 0, 0
    for i, (text, pair) in enumerate(zip(texts, pairs)):
        if max_examples is not None and len(encs) >= max_examples:
            break
        if pair is not None and not str(pair).strip():
            pair = None
        try:
            enc = encode(tokenizer, text, pair, max_length=max_length)
        except InputError:
            skipped += 1
            continue
        truncated += int(enc.truncated)
        encs.append(enc)
        rows.append(i)
        if labels is not None:
            labs.append(labels[i])
    if not encs:
        raise DataError(EMPTY_CORPUS)
    return Corpus(encs, rows, labs if labels is not None else None, skipped, truncated)


def encode_dataset(tokenizer, dataset, max_length: int = 512,
                   max_examples: int | None = None) -> Corpus:
    """:func:`encode_corpus` over a ``datasets.Dataset`` with columns ``text``, optional
    ``text_pair`` and ``label`` (labels that are all blank count as none)."""
    if dataset is None or len(dataset) == 0:
        raise DataError(EMPTY_CORPUS)
    cols = dataset.column_names
    n = len(dataset) if max_examples is None else min(len(dataset), int(max_examples) * 2 + 16)
    part = dataset.select(range(n)) if n < len(dataset) else dataset
    texts = part["text"]
    pairs = part["text_pair"] if "text_pair" in cols else None
    labels = part["label"] if "label" in cols else None
    if labels is not None and all(lab is None or str(lab).strip() == "" for lab in labels):
        labels = None
    return encode_corpus(tokenizer, texts, pairs, labels, max_length, max_examples)
