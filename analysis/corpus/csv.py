"""The one CSV helper: dialect sniffing, the header, and text / pair columns."""

from __future__ import annotations

import csv
import io

from analysis.corpus.files import decode, read_bytes
from analysis.errors import DataError


def csv_reader(text: str, label: str = ""):
    """A DictReader with the dialect sniffed from the first 4 KB (comma, semicolon or tab)."""
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    return csv.DictReader(io.StringIO(text, newline=""), dialect=dialect)


def csv_columns(source, name: str | None = None) -> list[str]:
    """The header of a CSV file (for choosing the text / pair columns)."""
    data, label = read_bytes(source, name)
    text = decode(data, label)
    if not text.strip():
        raise DataError(f"{label} is empty.")
    reader = csv_reader(text, label)
    try:
        cols = [c for c in (reader.fieldnames or []) if c is not None]
    except csv.Error as exc:
        raise DataError(f"{label} is not a readable CSV file ({exc}).") from None
    if not cols:
        raise DataError(f"{label} has no header row.")
    return cols


def parse_csv(text, label, text_column, pair_column):
    reader = csv_reader(text, label)
    try:
        cols = [c for c in (reader.fieldnames or []) if c is not None]
        if not cols:
            raise DataError(f"{label} has no header row.")
        for col in (text_column, pair_column):
            if col is not None and col not in cols:
                raise DataError(
                    f"{label} has no column {col!r} (columns: {', '.join(cols)})."
                )
        texts, pairs, blank = [], [], 0
        for row in reader:
            t = (row.get(text_column) or "").strip()
            p = (row.get(pair_column) or "").strip() if pair_column else ""
            if not t:
                blank += 1
                continue
            texts.append(t)
            pairs.append(p or None)
    except csv.Error as exc:
        raise DataError(f"{label} is not a readable CSV file ({exc}).") from None
    return texts, pairs, blank
