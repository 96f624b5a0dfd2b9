"""The corpus table: a ``datasets.Dataset`` with ``text`` and ``text_pair``, its notes (what
a reader skipped, cut or capped), its fingerprint (for cache keys), and the collector every
reader fills row by row (:class:`Examples`)."""

from __future__ import annotations

import hashlib

from analysis.core.corpus.files import MAX_CHARS, check_limit, cut_note, cut_text
from analysis.core.errors import DataError


def _features():
    from datasets import Features, Value  # lazy: datasets takes a second to import

    return Features({"text": Value("string"), "text_pair": Value("string")})


def make_dataset(texts, pairs=None, notes=None):
    """A Dataset with columns text / text_pair from two lists; ``notes`` are kept in
    ``info.description`` (one per line) for :func:`corpus_notes`."""
    from datasets import Dataset, DatasetInfo  # lazy: datasets takes a second to import

    texts = list(texts)
    pairs = list(pairs) if pairs is not None else [None] * len(texts)
    if len(pairs) != len(texts):
        raise DataError("Texts and pairs differ in number.")
    features = _features()
    info = DatasetInfo(description="\n".join(notes or []), features=features)
    return Dataset.from_dict({"text": texts, "text_pair": pairs}, features=features, info=info)


def corpus_notes(dataset) -> list[str]:
    """What the reader skipped or changed (blank lines, empty cells, the cap), one line each."""
    desc = getattr(getattr(dataset, "info", None), "description", "") or ""
    return [line for line in desc.splitlines() if line.strip()]


def corpus_fingerprint(dataset) -> str:
    """A short content hash of the examples (for cache keys)."""
    h = hashlib.sha1()
    for row in dataset:
        h.update((row["text"] or "").encode("utf-8"))
        h.update(b"\x1f")
        h.update((row["text_pair"] if row["text_pair"] is not None else "\x00").encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()[:16]


def cap_note(n_total: int, max_examples: int | None) -> list[str]:
    if max_examples is not None and n_total > max_examples:
        return [f"Capped to the first {max_examples} of {n_total} examples."]
    return []


def check_cap(max_examples):
    if max_examples is None:
        return None
    try:
        max_examples = int(max_examples)
    except (TypeError, ValueError):
        raise DataError("The number of examples must be a whole number.") from None
    if max_examples < 1:
        raise DataError("The number of examples must be at least 1.")
    return max_examples


class Examples:
    """The examples of one reader, collected in file order: blank ones counted, the first
    ``max_examples`` kept (the rest only counted), texts and pairs longer than ``max_chars``
    characters cut (and counted) as they arrive, so nothing past the caps is held."""

    def __init__(self, max_examples=None, max_chars=None, blank_what: str = "blank line(s)"):
        self.max_examples = check_cap(max_examples)
        self.max_chars = check_limit(max_chars, "The character cap", MAX_CHARS)
        self.blank_what = blank_what
        self.texts: list[str] = []
        self.pairs: list[str | None] = []
        self.total = self.blank = self.cut = 0

    def add(self, text: str | None, pair: str | None = None) -> None:
        """One row (a blank ``text`` is counted, not kept)."""
        if not text:
            self.blank += 1
            return
        self.total += 1
        if self.max_examples is not None and self.total > self.max_examples:
            return
        text, a = cut_text(text, self.max_chars)
        pair, b = cut_text(pair, self.max_chars)
        self.cut += int(a or b)
        self.texts.append(text)
        self.pairs.append(pair)

    def notes(self) -> list[str]:
        notes = [f"Skipped {self.blank} {self.blank_what}."] if self.blank else []
        notes += cap_note(self.total, self.max_examples)
        return notes + cut_note(self.cut, self.max_chars)

    def dataset(self, empty: str):
        """The Dataset with its notes; ``empty`` is the DataError message when nothing was
        kept."""
        if not self.texts:
            raise DataError(empty)
        return make_dataset(self.texts, self.pairs, self.notes())
