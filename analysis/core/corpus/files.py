"""Bytes in: size caps, UTF-8 lines, the cut of long texts, and the one format sniffer of
every reader.

Every reader of the project (corpus files, ABSA files, uploads, pasted text) takes its bytes
through :func:`read_bytes`, which refuses anything over the cap (:data:`MAX_BYTES`, or a
smaller ``max_bytes`` such as a demo's upload cap) before reading it, and its format from
:func:`sniff_format`. Lines are decoded one at a time (:func:`iter_lines`), so a file is held
once as bytes and never again as one big string or one big list of lines. A text longer than
``max_chars`` characters (:data:`MAX_CHARS` by default) is cut to its first ``max_chars``
characters before anything tokenises it (:func:`cut_text`); the readers count the cuts in
their notes. Problems raise :class:`analysis.core.errors.DataError` with one plain line.
"""

from __future__ import annotations

import codecs
import io
import os
import re
from pathlib import Path

from analysis.core.corpus.xml import iter_xml
from analysis.core.errors import DataError

MAX_BYTES = 50 * 1024 * 1024  # 50 MB: larger files are refused (same as the upload limit)
MAX_MB = MAX_BYTES // (1024 * 1024)
# Characters kept of one text (one line, cell, sentence): far more than 512 tokens need, so the
# cut never changes what a 512-token model sees, and it bounds what one line can cost.
MAX_CHARS = 10_000
CORPUS_FORMATS = ("txt", "jsonl", "csv", "xml")


def check_limit(value, what: str, default: int) -> int:
    """A positive whole-number limit (``None`` gives ``default``)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(f"{what} must be a whole number of at least 1 (got {value!r}).")
    return value


def read_bytes(source, name: str | None, max_bytes: int | None = None) -> tuple[bytes, str]:
    """Return (content, display name), refusing anything over ``max_bytes`` (default
    :data:`MAX_BYTES`) before reading it: a path is measured with stat(), an upload by its
    ``size`` and by reading at most one byte past the cap."""
    cap = check_limit(max_bytes, "The size cap", MAX_BYTES)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            raise DataError(f"{path} is a folder, not a data file.")
        if not path.exists():
            raise DataError(f"File not found: {path}")
        size = path.stat().st_size
        if size > cap:
            raise DataError(too_big(path.name, size, cap))
        with open(path, "rb") as fh:  # a file that grew since stat() is still capped
            data = fh.read(cap + 1)
        if len(data) > cap:
            raise DataError(too_big(path.name, len(data), cap))
        return data, name or path.name
    if isinstance(source, (bytes, bytearray, memoryview)):
        size = len(source) if not isinstance(source, memoryview) else source.nbytes
        if size > cap:
            raise DataError(too_big(name or "The data", size, cap))
        return bytes(source), name or "data"
    if hasattr(source, "read"):
        label = name or getattr(source, "name", None) or "the upload"
        size = getattr(source, "size", None)
        if isinstance(size, int) and size > cap:
            raise DataError(too_big(label, size, cap))
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except Exception:
                pass
        data = source.read(cap + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if len(data) > cap:
            raise DataError(too_big(label, len(data), cap))
        return data, Path(str(label)).name
    raise DataError("Unsupported data source: give a file path, an uploaded file or bytes.")


def _size(n: int) -> str:
    if n < 1024 * 1024:
        return f"{max(1, round(n / 1024))} KB"
    mb = n / 1024 / 1024
    return f"{mb:.0f} MB" if mb >= 10 or mb == int(mb) else f"{mb:.1f} MB"


def too_big(label: str, size: int, cap: int = MAX_BYTES) -> str:
    return (f"{label} is {_size(size)}; files over {_size(cap)} are refused "
            "(split the corpus or cap it first).")


def decode(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{label} is not UTF-8 text (byte {exc.start} cannot be decoded); save it as UTF-8."
        ) from None


def iter_lines(data: bytes, label: str):
    """The lines of UTF-8 ``data`` (a BOM skipped; ``\\n``, ``\\r\\n`` or ``\\r`` end a line, which
    is not included), decoded one at a time. Bytes that are not UTF-8 raise DataError with
    their position."""
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=None)
    try:
        for line in stream:
            yield line[:-1] if line.endswith("\n") else line
    except UnicodeDecodeError:
        decode(data, label)  # raises with the byte position
        raise


def iter_text_lines(text: str):
    """The lines of a string (``\\n``, ``\\r\\n`` or ``\\r``), one at a time (no list of them)."""
    start, n = 0, len(text)
    for m in re.finditer(r"\r\n|\r|\n", text):
        yield text[start:m.start()]
        start = m.end()
    if start < n:
        yield text[start:]


def text_head(data: bytes, n: int = 4096) -> str:
    """The first ``n`` bytes as text (a character cut by the end is dropped)."""
    return codecs.getincrementaldecoder("utf-8-sig")(errors="replace").decode(data[:n])


def cut_text(text: str | None, max_chars: int) -> tuple[str | None, bool]:
    """(``text`` cut to its first ``max_chars`` characters, whether it was cut)."""
    if text is None or len(text) <= max_chars:
        return text, False
    return text[:max_chars].rstrip(), True


def cut_note(n_cut: int, max_chars: int, what: str = "example(s)") -> list[str]:
    if not n_cut:
        return []
    return [f"Cut {n_cut} {what} longer than {max_chars:,} characters to their first "
            f"{max_chars:,} characters."]


def _first_line_has(data: bytes, start: int, needle: bytes) -> bool:
    end = data.find(b"\n", start)
    return data.find(needle, start, len(data) if end < 0 else end) >= 0


def _xml_kind(data: bytes, label: str) -> str:
    """SemEval-2016 (root <Reviews>, or <Opinions> before any SemEval-2014 element) or
    SemEval-2014, read with the streaming parser past any prolog, comment or doctype."""
    root = None
    for event, elem in iter_xml(data, label):
        if event != "start":
            continue
        tag = elem.tag.rsplit("}", 1)[-1]
        if root is None:
            root = tag
            if tag == "Reviews":
                return "semeval16"
            if tag == "sentences":
                return "semeval14"
        if tag in ("Opinions", "Opinion"):
            return "semeval16"
        if tag in ("aspectTerms", "aspectCategories", "aspectTerm", "aspectCategory"):
            return "semeval14"
    return "semeval14"


def sniff_format(name: str | None, fmt: str | None = None, head: bytes | None = None) -> str:
    """The format of a file.

    Corpus files (no ``head``): ``fmt`` when given, else the extension: .txt/.tsv/.text ->
    txt, .jsonl/.json -> jsonl, .csv, .xml (one of :data:`CORPUS_FORMATS`).

    ABSA files (``head`` = the file's bytes): this project's JSON (a .json name or text
    starting with ``{``/``[``), XML (the root element, found by a streaming parse past any
    prolog or comment: ``<Reviews>`` or ``<Opinions>`` is SemEval-2016, ``<sentences>`` and
    other XML SemEval-2014), ASTE triplets (``####`` in the first line); one of json,
    semeval14, semeval16 or aste.
    """
    if head is not None:
        label = Path(name or "the data").name
        start = re.match(rb"(?:\xef\xbb\xbf)?\s*", head).end()
        first = head[start:start + 1]
        if Path(name or "").suffix.lower() == ".json" or first in (b"{", b"["):
            return "json"
        if first == b"<":
            return _xml_kind(head, label)
        if _first_line_has(head, start, b"####"):
            return "aste"
        raise DataError(f"{label}: unknown data format (expected SemEval-14/16 XML, ASTE "
                        "triplets or this project's JSON).")
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
