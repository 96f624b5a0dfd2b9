"""The one CSV helper: dialect sniffing, the header, and text / pair columns, read row by row
from the file's bytes (no copy of the whole text)."""

from __future__ import annotations

import csv
import io

from analysis.core.corpus.files import MAX_BYTES, decode, read_bytes, text_head
from analysis.core.errors import DataError

# A cell may be as long as a file may be (the default limit, 128 KB, refuses valid files; long
# cells are cut by the readers after parsing).
csv.field_size_limit(max(csv.field_size_limit(), MAX_BYTES))


def csv_reader(data: bytes | str, label: str = ""):
    """A DictReader over ``data`` (bytes are decoded as UTF-8 while reading) with the dialect
    sniffed from the first 4 KB (comma, semicolon or tab)."""
    head = data[:4096] if isinstance(data, str) else text_head(data)
    try:
        dialect = csv.Sniffer().sniff(head, delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    if isinstance(data, str):
        stream = io.StringIO(data, newline="")
    else:
        stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    return csv.DictReader(stream, dialect=dialect)


def _columns(reader, label: str) -> list[str]:
    try:
        cols = [c for c in (reader.fieldnames or []) if c is not None]
    except csv.Error as exc:
        raise DataError(f"{label} is not a readable CSV file ({exc}).") from None
    if not cols:
        raise DataError(f"{label} has no header row.")
    return cols


def csv_columns(source, name: str | None = None, max_bytes: int | None = None) -> list[str]:
    """The header of a CSV file (for choosing the text / pair columns)."""
    data, label = read_bytes(source, name, max_bytes)
    if not data.strip():
        raise DataError(f"{label} is empty.")
    try:
        return _columns(csv_reader(data, label), label)
    except UnicodeDecodeError:
        decode(data, label)
        raise


def iter_csv(data: bytes, label: str, text_column: str, pair_column: str | None):
    """(text, pair) per row ("" for an empty text cell) after checking the chosen columns."""
    reader = csv_reader(data, label)
    try:
        cols = _columns(reader, label)
        for col in (text_column, pair_column):
            if col is not None and col not in cols:
                raise DataError(
                    f"{label} has no column {col!r} (columns: {', '.join(cols)})."
                )
        for row in reader:
            t = (row.get(text_column) or "").strip()
            p = (row.get(pair_column) or "").strip() if pair_column else ""
            yield t, p or None
    except csv.Error as exc:
        raise DataError(f"{label} is not a readable CSV file ({exc}).") from None
    except UnicodeDecodeError:
        decode(data, label)
        raise
