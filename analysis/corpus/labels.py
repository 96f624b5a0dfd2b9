"""Gold labels for a corpus read from a .jsonl or .csv file (the split by label on the drift
page and in its CLI)."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.corpus.csv import csv_reader
from analysis.corpus.files import sniff_format


def read_labels(source, dataset, *, fmt: str | None = None, text_column: str = "text",
                label_column: str = "label", name: str | None = None) -> tuple[list | None, str]:
    """Gold labels for the rows of ``dataset`` (read by :func:`analysis.corpus.read_corpus` from the
    same .jsonl/.csv ``source``) from its ``label_column``, or (None, why not).

    Rows are matched by text in file order (blank texts are skipped as the reader skips them);
    if the texts do not line up the labels are not used."""
    label_name = name or (str(source) if isinstance(source, (str, Path)) else
                          getattr(source, "name", None))
    kind = sniff_format(label_name, fmt)
    if kind not in ("jsonl", "csv"):
        return None, ""
    if isinstance(source, (str, Path)):
        data = Path(source).read_bytes()
    elif isinstance(source, (bytes, bytearray)):
        data = bytes(source)
    else:
        data = source.getvalue() if hasattr(source, "getvalue") else source.read()
    text = data.decode("utf-8", errors="replace")
    rows = []
    if kind == "jsonl":
        for line in text.splitlines():
            if line.strip():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    return None, ""
                if isinstance(obj, dict):
                    rows.append((obj.get(text_column), obj.get(label_column, None)))
    else:
        reader = csv_reader(text)
        if label_column not in (reader.fieldnames or []):
            return None, f"The data has no {label_column!r} column, so no split by label."
        rows = [(r.get(text_column), r.get(label_column)) for r in reader]
    rows = [(t, lab) for t, lab in rows if isinstance(t, str) and t.strip()]
    if not any(lab is not None and str(lab).strip() for _, lab in rows):
        return None, f"The data has no {label_column!r} column, so no split by label."
    texts = dataset["text"]
    if len(rows) < len(texts) or any(
            (t or "").strip() != (r or "").strip() for (r, _), t in zip(rows, texts)):
        return None, "The labels could not be matched to the examples, so no split by label."
    return [None if lab is None else str(lab).strip() for _, lab in rows[: len(texts)]], ""
