"""Bytes in: size caps, UTF-8 decoding, and the one format sniffer of every reader.

Every reader of the project (corpus files, ABSA files, uploads) takes its bytes through
:func:`read_bytes`, which refuses anything over :data:`MAX_BYTES` before reading it, and its
format from :func:`sniff_format`. Problems raise :class:`analysis.errors.DataError` with one
plain line.
"""

from __future__ import annotations

import os
from pathlib import Path

from analysis.errors import DataError

MAX_BYTES = 50 * 1024 * 1024  # 50 MB: larger files are refused (same as the upload limit)
MAX_MB = MAX_BYTES // (1024 * 1024)
CORPUS_FORMATS = ("txt", "jsonl", "csv", "xml")


def read_bytes(source, name: str | None) -> tuple[bytes, str]:
    """Return (content, display name), refusing anything over MAX_BYTES before reading it."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            raise DataError(f"{path} is a folder, not a data file.")
        if not path.exists():
            raise DataError(f"File not found: {path}")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise DataError(too_big(path.name, size))
        return path.read_bytes(), name or path.name
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > MAX_BYTES:
            raise DataError(too_big(name or "The data", len(data)))
        return data, name or "data"
    if hasattr(source, "read"):
        label = name or getattr(source, "name", None) or "the upload"
        size = getattr(source, "size", None)
        if isinstance(size, int) and size > MAX_BYTES:
            raise DataError(too_big(label, size))
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except Exception:
                pass
        data = source.read(MAX_BYTES + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if len(data) > MAX_BYTES:
            raise DataError(too_big(label, len(data)))
        return data, Path(str(label)).name
    raise DataError("Unsupported data source: give a file path, an uploaded file or bytes.")


def too_big(label: str, size: int) -> str:
    return (f"{label} is {size / 1024 / 1024:.0f} MB; files over {MAX_MB} MB are refused "
            "(split the corpus or cap it first).")


def decode(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{label} is not UTF-8 text (byte {exc.start} cannot be decoded); save it as UTF-8."
        ) from None


def sniff_format(name: str | None, fmt: str | None = None, head: bytes | None = None) -> str:
    """The format of a file.

    Corpus files (no ``head``): ``fmt`` when given, else the extension: .txt/.tsv/.text ->
    txt, .jsonl/.json -> jsonl, .csv, .xml (one of :data:`CORPUS_FORMATS`).

    ABSA files (``head`` = the first bytes): this project's JSON (a .json name or text
    starting with ``{``/``[``), SemEval-2016 XML (``<Reviews``/``<Opinions``/``<Opinion ``
    within the head), SemEval-2014 XML (other XML), ASTE triplets (``####``); one of
    json, semeval14, semeval16 or aste.
    """
    if head is not None:
        text = head[:4000].decode("utf-8", errors="replace")
        if Path(name or "").suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
            return "json"
        if text.lstrip().startswith("<"):
            if "<Reviews" in text or "<Opinions" in text or "<Opinion " in text:
                return "semeval16"
            return "semeval14"
        if "####" in text:
            return "aste"
        raise DataError(f"{Path(name or 'the data').name}: unknown data format (expected "
                        "SemEval-14/16 XML, ASTE triplets or this project's JSON).")
    if fmt:
        fmt = fmt.lower().lstrip(".")
        if fmt == "tsv":
            fmt = "txt"
        if fmt not in CORPUS_FORMATS:
            raise DataError(f"Unknown format {fmt!r}: use one of {', '.join(CORPUS_FORMATS)}.")
        return fmt
    ext = Path(name or "").suffix.lower().lstrip(".")
    if ext in ("tsv", "text"):
        return "txt"
    if ext == "json":
        return "jsonl"
    if ext not in CORPUS_FORMATS:
        raise DataError(
            f"Cannot tell the format of {name or 'the data'!r}: use a .txt, .jsonl, .csv or "
            ".xml file."
        )
    return ext
