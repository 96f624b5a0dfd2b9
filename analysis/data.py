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

Files larger than :data:`MAX_BYTES` (50 MB) are refused. Every problem with the input raises
:class:`analysis.errors.DataError` with one plain line. What the reader skipped (blank lines,
empty cells) is kept as notes: :func:`corpus_notes`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from pathlib import Path

from analysis.errors import DataError

MAX_BYTES = 50 * 1024 * 1024  # 50 MB: larger files are refused (same as the upload limit)
MAX_MB = MAX_BYTES // (1024 * 1024)
FORMATS = ("txt", "jsonl", "csv", "xml")
SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data" / "sample_corpus"
SAMPLE_FILE = SAMPLE_DIR / "corpus.txt"


# ---------------------------------------------------------------------------------------------
# Dataset construction


def _features():
    from datasets import Features, Value

    return Features({"text": Value("string"), "text_pair": Value("string")})


def make_dataset(texts, pairs=None, notes=None):
    """A Dataset with columns text / text_pair from two lists; ``notes`` are kept in
    ``info.description`` (one per line) for :func:`corpus_notes`."""
    from datasets import Dataset, DatasetInfo

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


# ---------------------------------------------------------------------------------------------
# Bytes in


def _read_bytes(source, name: str | None) -> tuple[bytes, str]:
    """Return (content, display name), refusing anything over MAX_BYTES before reading it."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            raise DataError(f"{path} is a folder, not a data file.")
        if not path.exists():
            raise DataError(f"File not found: {path}")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise DataError(_too_big(path.name, size))
        return path.read_bytes(), name or path.name
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > MAX_BYTES:
            raise DataError(_too_big(name or "The data", len(data)))
        return data, name or "data"
    if hasattr(source, "read"):
        label = name or getattr(source, "name", None) or "the upload"
        size = getattr(source, "size", None)
        if isinstance(size, int) and size > MAX_BYTES:
            raise DataError(_too_big(label, size))
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except Exception:
                pass
        data = source.read(MAX_BYTES + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if len(data) > MAX_BYTES:
            raise DataError(_too_big(label, len(data)))
        return data, Path(str(label)).name
    raise DataError("Unsupported data source: give a file path, an uploaded file or bytes.")


def _too_big(label: str, size: int) -> str:
    return (f"{label} is {size / 1024 / 1024:.0f} MB; files over {MAX_MB} MB are refused "
            "(split the corpus or cap it first).")


def _decode(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{label} is not UTF-8 text (byte {exc.start} cannot be decoded); save it as UTF-8."
        ) from None


def detect_format(name: str | None, fmt: str | None = None) -> str:
    if fmt:
        fmt = fmt.lower().lstrip(".")
        if fmt == "tsv":
            fmt = "txt"
        if fmt not in FORMATS:
            raise DataError(f"Unknown format {fmt!r}: use one of {', '.join(FORMATS)}.")
        return fmt
    ext = Path(name or "").suffix.lower().lstrip(".")
    if ext in ("tsv", "text"):
        return "txt"
    if ext == "json":
        return "jsonl"
    if ext not in FORMATS:
        raise DataError(
            f"Cannot tell the format of {name or 'the data'!r}: use a .txt, .jsonl, .csv or "
            ".xml file."
        )
    return ext


# ---------------------------------------------------------------------------------------------
# Parsers (text -> lists)


def _cap_note(n_total: int, max_examples: int | None) -> list[str]:
    if max_examples is not None and n_total > max_examples:
        return [f"Capped to the first {max_examples} of {n_total} examples."]
    return []


def _check_cap(max_examples):
    if max_examples is None:
        return None
    try:
        max_examples = int(max_examples)
    except (TypeError, ValueError):
        raise DataError("The number of examples must be a whole number.") from None
    if max_examples < 1:
        raise DataError("The number of examples must be at least 1.")
    return max_examples


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


def _csv_reader(text: str, label: str):
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    return csv.DictReader(io.StringIO(text, newline=""), dialect=dialect)


def csv_columns(source, name: str | None = None) -> list[str]:
    """The header of a CSV file (for choosing the text / pair columns)."""
    data, label = _read_bytes(source, name)
    text = _decode(data, label)
    if not text.strip():
        raise DataError(f"{label} is empty.")
    reader = _csv_reader(text, label)
    try:
        cols = [c for c in (reader.fieldnames or []) if c is not None]
    except csv.Error as exc:
        raise DataError(f"{label} is not a readable CSV file ({exc}).") from None
    if not cols:
        raise DataError(f"{label} has no header row.")
    return cols


def _parse_csv(text, label, text_column, pair_column):
    reader = _csv_reader(text, label)
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


def _parse_xml(data: bytes, label):
    from xml.etree.ElementTree import ParseError

    import defusedxml
    from defusedxml.ElementTree import fromstring

    try:
        root = fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException:
        raise DataError(
            f"{label} declares XML entities (possible entity bomb or external reference); "
            "refused."
        ) from None
    except ParseError as exc:
        raise DataError(f"{label} is not well-formed XML ({exc}).") from None
    texts, blank = [], 0
    found = False
    for sent in root.iter("sentence"):
        node = sent.find("text")
        if node is None:
            continue
        found = True
        t = (node.text or "").strip()
        if not t:
            blank += 1
            continue
        texts.append(t)
    if not found:
        raise DataError(
            f"{label} has no <sentence><text> elements (expected SemEval-2014/2016 review XML)."
        )
    return texts, [None] * len(texts), blank


# ---------------------------------------------------------------------------------------------
# Public readers


def read_corpus(source, *, fmt: str | None = None, text_column: str = "text",
                pair_column: str | None = None, max_examples: int | None = None,
                name: str | None = None):
    """Read a corpus file (path, uploaded file or bytes) into a Dataset (text, text_pair)."""
    max_examples = _check_cap(max_examples)
    data, label = _read_bytes(source, name)
    kind = detect_format(label, fmt)
    if not data.strip():
        raise DataError(f"{label} is empty.")
    if kind == "xml":
        texts, pairs, blank = _parse_xml(data, label)
        what = "empty sentence(s)"
    else:
        text = _decode(data, label)
        if kind == "txt":
            texts, pairs, blank = parse_lines(text, label)
            what = "blank line(s)"
        elif kind == "jsonl":
            texts, pairs, blank = _parse_jsonl(text, label, text_column, pair_column)
            what = "blank line(s) or empty text(s)"
        else:
            texts, pairs, blank = _parse_csv(text, label, text_column, pair_column)
            what = "row(s) with an empty text cell"
    if not texts:
        raise DataError(f"{label} holds no examples (only blank lines or empty texts).")
    notes = [f"Skipped {blank} {what}."] if blank else []
    notes += _cap_note(len(texts), max_examples)
    if max_examples is not None:
        texts, pairs = texts[:max_examples], pairs[:max_examples]
    return make_dataset(texts, pairs, notes)


def read_pasted(text: str, max_examples: int | None = None):
    """Pasted lines (one example per line, a tab separates a pair) -> Dataset."""
    max_examples = _check_cap(max_examples)
    if text is None or not str(text).strip():
        raise DataError("The pasted list is empty: paste one sentence per line.")
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise DataError(_too_big("The pasted text", len(text.encode("utf-8"))))
    texts, pairs, blank = parse_lines(text, "The pasted text")
    notes = [f"Skipped {blank} blank line(s)."] if blank else []
    notes += _cap_note(len(texts), max_examples)
    if max_examples is not None:
        texts, pairs = texts[:max_examples], pairs[:max_examples]
    return make_dataset(texts, pairs, notes)


def sample_corpus(max_examples: int | None = None):
    """The bundled sample corpus (data/sample_corpus/corpus.txt: sentences and tab pairs)."""
    return read_corpus(SAMPLE_FILE, max_examples=max_examples)


def _offline_datasets():
    """Context manager: put datasets in offline mode when the hub is unreachable, so a missing
    dataset fails in a second instead of after the hub client's retries."""
    import contextlib

    @contextlib.contextmanager
    def ctx():
        from analysis.models import hub_reachable

        if os.environ.get("HF_HUB_OFFLINE") == "1" or hub_reachable():
            yield
            return
        import datasets.config as dcfg

        old = dcfg.HF_HUB_OFFLINE
        dcfg.HF_HUB_OFFLINE = True
        try:
            yield
        finally:
            dcfg.HF_HUB_OFFLINE = old

    return ctx()


def read_hf_dataset(name: str, split: str, column: str, pair_column: str | None = None,
                    max_examples: int | None = None):
    """A Hugging Face dataset (hub id in the local cache, or a local folder) -> Dataset."""
    max_examples = _check_cap(max_examples)
    name = (name or "").strip()
    split = (split or "").strip() or "train"
    if not name:
        raise DataError("Give a Hugging Face dataset id, e.g. 'imdb'.")
    if not column:
        raise DataError("Give the name of the text column.")
    import datasets

    try:
        with _offline_datasets():
            ds = datasets.load_dataset(name, split=split)
    except Exception as exc:  # hub, cache, split and builder errors all end here
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise DataError(
            f"Could not load the dataset {name!r} (split {split!r}): it is not in the local "
            f"cache and the hub cannot be reached, or the id/split is wrong ({first})."
        ) from None
    if not isinstance(ds, datasets.Dataset):
        raise DataError(f"{name!r} split {split!r} is not a single table; pick one split.")
    cols = ds.column_names
    for col in (column, pair_column):
        if col is not None and col not in cols:
            raise DataError(f"The dataset {name!r} has no column {col!r} (columns: {', '.join(cols)}).")
    n_total = len(ds)
    texts, pairs, blank = [], [], 0
    for row in ds:
        t = row[column]
        if not isinstance(t, str) or not t.strip():
            blank += 1
            continue
        p = row[pair_column] if pair_column else None
        texts.append(t.strip())
        pairs.append(p.strip() if isinstance(p, str) and p.strip() else None)
        if max_examples is not None and len(texts) >= max_examples:
            break
    if not texts:
        raise DataError(f"The dataset {name!r} has no non-empty texts in column {column!r}.")
    notes = [f"Skipped {blank} row(s) with an empty text."] if blank else []
    if max_examples is not None and n_total > max_examples:
        notes.append(f"Capped to the first {len(texts)} of {n_total} rows.")
    return make_dataset(texts, pairs, notes)
