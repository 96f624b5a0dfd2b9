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
:mod:`.hf` (Hugging Face datasets), :mod:`.labels` (gold labels).

Bounded memory: files larger than ``max_bytes`` (:data:`MAX_BYTES`, 50 MB, by default) are
refused before they are read; lines, rows and sentences are decoded and parsed one at a time
(XML with a streaming parser); only the first ``max_examples`` are kept; a text longer than
``max_chars`` characters (:data:`MAX_CHARS` by default) is cut to its first ``max_chars``
characters before anything tokenises it. Every problem with the input raises
:class:`analysis.core.errors.DataError` with one plain line. What the reader skipped (blank lines,
empty cells), cut or capped is kept as notes: :func:`corpus_notes`.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from analysis.core.corpus.csv import csv_columns, iter_csv
from analysis.core.corpus.files import (MAX_BYTES, MAX_CHARS, MAX_MB, iter_lines, iter_text_lines,
                                   read_bytes, sniff_format, too_big)
from analysis.core.corpus.hf import read_hf_dataset
from analysis.core.corpus.jsonsafe import loads
from analysis.core.corpus.labels import read_labels
from analysis.core.corpus.table import (Examples, corpus_fingerprint, corpus_notes, make_dataset)
from analysis.core.corpus.xml import review_texts
from analysis.core.errors import DataError

SAMPLE_DIR = Path(__file__).resolve().parents[3] / "data" / "sample_corpus"
SAMPLE_FILE = SAMPLE_DIR / "corpus.txt"

__all__ = ["MAX_BYTES", "MAX_CHARS", "MAX_MB", "SAMPLE_FILE", "corpus_fingerprint",
           "corpus_notes", "csv_columns", "make_dataset", "parse_lines", "read_corpus",
           "read_hf_dataset", "read_labels", "read_pasted", "sample_corpus"]

BLANK = {"txt": "blank line(s)", "jsonl": "blank line(s) or empty text(s)",
         "csv": "row(s) with an empty text cell", "xml": "empty sentence(s)"}


def split_line(line: str) -> tuple[str, str | None]:
    """One line -> (text, pair): a tab splits a sentence pair; ("", None) for a blank line."""
    if not line.strip():
        return "", None
    a, sep, b = line.partition("\t")
    a, b = a.strip(), b.strip()
    if not a:
        a, b = b, ""
    return a, (b if sep and b else None)


def parse_lines(text: str, label: str = "The text"):
    """Lines -> (texts, pairs, n_blank). A tab splits a line into a sentence pair."""
    texts, pairs, blank = [], [], 0
    for line in iter_text_lines(text):
        a, b = split_line(line)
        if not a:
            blank += 1
            continue
        texts.append(a)
        pairs.append(b)
    return texts, pairs, blank


def _iter_jsonl(data, label, text_column, pair_column):
    pair_column = pair_column or "text_pair"
    for k, line in enumerate(iter_lines(data, label), 1):
        if not line.strip():
            yield "", None
            continue
        obj = loads(line, f"Line {k} of {label}")
        if not isinstance(obj, dict):
            raise DataError(f"Line {k} of {label} is not a JSON object with a "
                            f"{text_column!r} field.")
        if text_column not in obj:
            raise DataError(f"Line {k} of {label} has no {text_column!r} field.")
        t, p = obj[text_column], obj.get(pair_column)
        del obj, line
        if not isinstance(t, str) or (p is not None and not isinstance(p, str)):
            raise DataError(f"Line {k} of {label}: {text_column!r} and {pair_column!r} "
                            "must be strings.")
        yield t.strip(), (p.strip() if p and p.strip() else None)


def _rows(kind, data, label, text_column, pair_column):
    """(text, pair) per example of a file, streamed; "" marks a blank one."""
    if kind == "xml":
        return ((t, None) for t in review_texts(data, label))
    if kind == "txt":
        return (split_line(line) for line in iter_lines(data, label))
    if kind == "jsonl":
        return _iter_jsonl(data, label, text_column, pair_column)
    return iter_csv(data, label, text_column, pair_column)


def read_corpus(source, *, fmt: str | None = None, text_column: str = "text",
                pair_column: str | None = None, max_examples: int | None = None,
                name: str | None = None, max_bytes: int | None = None,
                max_chars: int | None = None):
    """Read a corpus file (path, uploaded file or bytes) into a Dataset (text, text_pair).

    ``max_bytes`` caps the file (default :data:`MAX_BYTES`), ``max_chars`` each text (default
    :data:`MAX_CHARS`; longer ones are cut and counted in the notes), ``max_examples`` the
    examples kept."""
    examples = Examples(max_examples, max_chars)
    data, label = read_bytes(source, name, max_bytes)
    kind = sniff_format(label, fmt)
    if not re.compile(rb"\S").search(data, 3 if data.startswith(codecs.BOM_UTF8) else 0):
        raise DataError(f"{label} is empty.")
    examples.blank_what = BLANK[kind]
    for text, pair in _rows(kind, data, label, text_column, pair_column):
        examples.add(text, pair)
    return examples.dataset(f"{label} holds no examples (only blank lines or empty texts).")


def read_pasted(text: str, max_examples: int | None = None, max_bytes: int | None = None,
                max_chars: int | None = None):
    """Pasted lines (one example per line, a tab separates a pair) -> Dataset, with the caps
    of :func:`read_corpus`."""
    examples = Examples(max_examples, max_chars)
    if text is None or not str(text).strip():
        raise DataError("The pasted list is empty: paste one sentence per line.")
    text = str(text)
    cap = MAX_BYTES if max_bytes is None else max_bytes
    if len(text) > cap or len(text) * 4 > cap and len(text.encode("utf-8")) > cap:
        size = len(text) if len(text) > cap else len(text.encode("utf-8"))
        raise DataError(too_big("The pasted text", size, cap))
    for line in iter_text_lines(text):
        examples.add(*split_line(line))
    return examples.dataset("The pasted list is empty: paste one sentence per line.")


def sample_corpus(max_examples: int | None = None):
    """The bundled sample corpus (data/sample_corpus/corpus.txt: sentences and tab pairs)."""
    return read_corpus(SAMPLE_FILE, max_examples=max_examples)
