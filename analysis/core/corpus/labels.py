"""Gold labels for a corpus read from a .jsonl or .csv file (the split by label on the drift
page and in its CLI)."""

from __future__ import annotations

import os

from analysis.core.corpus.csv import csv_reader
from analysis.core.corpus.files import iter_lines, read_bytes, sniff_format
from analysis.core.corpus.jsonsafe import loads
from analysis.core.errors import DataError

NO_COLUMN = "The data has no {!r} column, so no split by label."
NO_MATCH = "The labels could not be matched to the examples, so no split by label."


def _same(row_text, text: str) -> bool:
    """Whether a file's text is the dataset's example (which the reader may have cut to its
    first characters)."""
    row_text = (row_text or "").strip()
    text = (text or "").strip()
    return row_text == text or (len(row_text) > len(text) > 0 and row_text.startswith(text))


class _Unreadable(Exception):
    """A row that is not JSON: no labels, and nothing to say (the reader said it)."""


def _jsonl_rows(data: bytes, label: str, text_column: str, label_column: str):
    for line in iter_lines(data, label):
        if line.strip():
            try:
                obj = loads(line)
            except DataError:
                raise _Unreadable from None
            if isinstance(obj, dict):
                yield obj.get(text_column), obj.get(label_column, None)


def read_labels(source, dataset, *, fmt: str | None = None, text_column: str = "text",
                label_column: str = "label", name: str | None = None,
                max_bytes: int | None = None) -> tuple[list | None, str]:
    """Gold labels for the rows of ``dataset`` (read by :func:`analysis.core.corpus.read_corpus`
    from the
    same .jsonl/.csv ``source``) from its ``label_column``, or (None, why not).

    Rows are matched by text in file order (blank texts are skipped as the reader skips them;
    a text the reader cut matches by its first characters); if the texts do not line up the
    labels are not used. The file goes through the same size cap (``max_bytes``) and is read
    row by row; only the labels of the dataset's rows are kept."""
    label_name = name or (str(source) if isinstance(source, (str, os.PathLike)) else
                          getattr(source, "name", None))
    kind = sniff_format(label_name, fmt)
    if kind not in ("jsonl", "csv"):
        return None, ""
    data, label = read_bytes(source, name, max_bytes)
    if kind == "jsonl":
        rows = _jsonl_rows(data, label, text_column, label_column)
    else:
        reader = csv_reader(data, label)
        if label_column not in (reader.fieldnames or []):
            return None, NO_COLUMN.format(label_column)
        rows = ((r.get(text_column), r.get(label_column)) for r in reader)
    texts = dataset["text"]
    labels, any_label, lined_up = [], False, True
    try:
        for t, lab in rows:
            if not (isinstance(t, str) and t.strip()):
                continue
            any_label = any_label or (lab is not None and bool(str(lab).strip()))
            if len(labels) < len(texts):
                lined_up = lined_up and _same(t, texts[len(labels)])
                labels.append(None if lab is None else str(lab).strip())
            elif any_label:
                break
    except _Unreadable:
        return None, ""
    if not any_label:
        return None, NO_COLUMN.format(label_column)
    if len(labels) < len(texts) or not lined_up:
        return None, NO_MATCH
    return labels, ""
