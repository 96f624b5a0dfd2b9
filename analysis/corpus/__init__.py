"""Corpus readers: every source becomes a ``datasets.Dataset`` with columns ``text`` (str) and
``text_pair`` (str or None).

Sources: a file path or an uploaded file / bytes (``name`` then gives the filename, whose
extension picks the format), pasted text, a Hugging Face dataset, the bundled sample corpus.

Formats (by extension, or ``fmt``):

- ``.txt``: one example per line; a tab separates a sentence pair. Blank lines are skipped and
  counted.
- ``.jsonl``: one JSON object per line with ``text`` and optional ``text_pair`` (other names via
  ``text_column`` / ``pair_column``).
- ``.csv``: the chosen ``text_column`` (and optional ``pair_column``); see :func:`csv_columns`.
- ``.xml``: SemEval-2014 / SemEval-2016 review sentences (``<sentence><text>``), parsed with
  defusedxml, so entity expansion ("billion laughs") and external entities are refused.

Modules: :mod:`.files` (bytes in, size caps, the one format sniffer), :mod:`.xml` (the one XML
helper), :mod:`.csv` (the one CSV helper), :mod:`.table` (the Dataset, notes, fingerprint),
:mod:`.hf` (Hugging Face datasets). Files larger than :data:`MAX_BYTES` (50 MB) are refused. Every problem with the input raises
:class:`analysis.errors.DataError` with one plain line. What the reader skipped (blank lines,
empty cells) is kept as notes: :func:`corpus_notes`.
"""

from __future__ import annotations

import json
from pathlib import Path

from analysis.corpus.csv import csv_columns, parse_csv
from analysis.corpus.files import MAX_BYTES, MAX_MB, decode, read_bytes, sniff_format, too_big
from analysis.corpus.hf import read_hf_dataset
from analysis.corpus.labels import read_labels
from analysis.corpus.table import (cap_note, check_cap, corpus_fingerprint, corpus_notes,
                                   make_dataset)
from analysis.corpus.xml import review_texts
from analysis.errors import DataError

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "data" / "sample_corpus"
SAMPLE_FILE = SAMPLE_DIR / "corpus.txt"

__all__ = ["MAX_BYTES", "MAX_MB", "SAMPLE_FILE", "corpus_fingerprint", "corpus_notes",
           "csv_columns", "make_dataset", "parse_lines", "read_corpus", "read_hf_dataset",
           "read_labels", "read_pasted", "sample_corpus"]


def parse_lines(text: str, label: str = "The text"):
    """Lines -> (texts, pairs, n_blank). A tab splits a line into a sentence pair."""
    texts, pairs, blank = [], [], 0
    for line in text.splitlines():
        if not line.strip():
            blank += 1
            continue
        a, sep, b = line.partition("\t")
        a, b = a.strip(), b.strip()
        if not a:
            a, b = b, ""
        texts.append(a)
        pairs.append(b if sep and b else None)
    return texts, pairs, blank


def _parse_jsonl(text, label, text_column, pair_column):
    texts, pairs, blank = [], [], 0
    pair_column = pair_column or "text_pair"
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            blank += 1
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            raise DataError(f"Line {k} of {label} is not valid JSON.") from None
        if not isinstance(obj, dict):
            raise DataError(f"Line {k} of {label} is not a JSON object with a {text_column!r} field.")
        if text_column not in obj:
            raise DataError(f"Line {k} of {label} has no {text_column!r} field.")
        t, p = obj[text_column], obj.get(pair_column)
        if not isinstance(t, str) or (p is not None and not isinstance(p, str)):
            raise DataError(f"Line {k} of {label}: {text_column!r} and {pair_column!r} must be strings.")
        if not t.strip():
            blank += 1
            continue
        texts.append(t.strip())
        pairs.append(p.strip() if p and p.strip() else None)
    return texts, pairs, blank


def read_corpus(source, *, fmt: str | None = None, text_column: str = "text",
                pair_column: str | None = None, max_examples: int | None = None,
                name: str | None = None):
    """Read a corpus file (path, uploaded file or bytes) into a Dataset (text, text_pair)."""
    max_examples = check_cap(max_examples)
    data, label = read_bytes(source, name)
    kind = sniff_format(label, fmt)
    if not data.strip():
        raise DataError(f"{label} is empty.")
    if kind == "xml":
        texts, pairs, blank = review_texts(data, label)
        what = "empty sentence(s)"
    else:
        text = decode(data, label)
        if kind == "txt":
            texts, pairs, blank = parse_lines(text, label)
            what = "blank line(s)"
        elif kind == "jsonl":
            texts, pairs, blank = _parse_jsonl(text, label, text_column, pair_column)
            what = "blank line(s) or empty text(s)"
        else:
            texts, pairs, blank = parse_csv(text, label, text_column, pair_column)
            what = "row(s) with an empty text cell"
    if not texts:
        raise DataError(f"{label} holds no examples (only blank lines or empty texts).")
    notes = [f"Skipped {blank} {what}."] if blank else []
    notes += cap_note(len(texts), max_examples)
    if max_examples is not None:
        texts, pairs = texts[:max_examples], pairs[:max_examples]
    return make_dataset(texts, pairs, notes)


def read_pasted(text: str, max_examples: int | None = None):
    """Pasted lines (one example per line, a tab separates a pair) -> Dataset."""
    max_examples = check_cap(max_examples)
    if text is None or not str(text).strip():
        raise DataError("The pasted list is empty: paste one sentence per line.")
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise DataError(too_big("The pasted text", len(text.encode("utf-8"))))
    texts, pairs, blank = parse_lines(text, "The pasted text")
    notes = [f"Skipped {blank} blank line(s)."] if blank else []
    notes += cap_note(len(texts), max_examples)
    if max_examples is not None:
        texts, pairs = texts[:max_examples], pairs[:max_examples]
    return make_dataset(texts, pairs, notes)


def sample_corpus(max_examples: int | None = None):
    """The bundled sample corpus (data/sample_corpus/corpus.txt: sentences and tab pairs)."""
    return read_corpus(SAMPLE_FILE, max_examples=max_examples)
