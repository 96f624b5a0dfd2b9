"""Aspect-based sentiment data: the one ``datasets.Dataset`` schema every reader returns
(:mod:`analysis.absa.readers`), its validation, opinion linking and the held-out split
(docs/METHODS.md section 6).

One row per review sentence::

    id          str
    text        str
    terms       list of {term, start, end, category, polarity,
                         opinions: list of {word, start, end}}
                (``text[start:end] == term``; category "" where the source has none,
                 e.g. ASTE or SemEval-14 terms)
    categories  list of {category, polarity}   sentence-level category polarities
    source      str   ("semeval14", "semeval16", "aste", "sample")

Categories are the five of SemEval-2014 (``CATEGORIES``); polarities are positive, neutral,
negative, conflict. Every malformed input raises :class:`analysis.core.errors.DataError` with a
one-line message.
"""

from __future__ import annotations

import re

from analysis.core.errors import DataError

CATEGORIES = ("price", "anecdotes/miscellaneous", "food", "ambience", "service")
POLARITIES = ("positive", "neutral", "negative", "conflict")
COLUMNS = ("id", "text", "terms", "categories", "source")


def _features():
    # lazy: imported when used: datasets (heavy)
    from datasets import Features, List, Value

    opinion = {"word": Value("string"), "start": Value("int32"), "end": Value("int32")}
    term = {
        "term": Value("string"), "start": Value("int32"), "end": Value("int32"),
        "category": Value("string"), "polarity": Value("string"),
        "opinions": List(opinion),
    }
    return Features({
        "id": Value("string"),
        "text": Value("string"),
        "terms": List(term),
        "categories": List({"category": Value("string"), "polarity": Value("string")}),
        "source": Value("string"),
    })


def to_dataset(rows: list[dict], skip_invalid: bool = False):
    """Rows in the schema above -> ``datasets.Dataset`` (validated).

    With ``skip_invalid`` sentences that fail validation are dropped and counted in
    ``dataset.info.description`` ("skipped N invalid sentence(s)"); otherwise the first
    problem raises DataError."""
    # lazy: imported when used: datasets (heavy)
    from datasets import Dataset, DatasetInfo

    kept, skipped, first = [], 0, None
    for row in rows:
        try:
            validate_row(row)
            kept.append(row)
        except DataError as exc:
            if not skip_invalid:
                raise DataError(f"{exc} (use the skip-invalid option to drop such "
                                "sentences)") from None
            skipped += 1
            first = first or str(exc)
    if not kept:
        raise DataError(f"No usable sentences: {first or 'the file is empty'}")
    cols = {k: [r[k] for r in kept] for k in COLUMNS}
    features = _features()
    info = DatasetInfo(description=f"skipped {skipped} invalid sentence(s)" if skipped else "",
                       features=features)
    return Dataset.from_dict(cols, features=features, info=info)


def validate_row(row: dict) -> None:
    """Raise DataError when offsets, categories or polarities are inconsistent."""
    sid, text = row.get("id", "?"), row.get("text")
    if not isinstance(text, str) or not text.strip():
        raise DataError(f"Sentence {sid} has no text.")
    for t in row.get("terms", []):
        s, e = t.get("start"), t.get("end")
        if not (isinstance(s, int) and isinstance(e, int) and 0 <= s < e <= len(text)):
            raise DataError(f"Sentence {sid}: term {t.get('term')!r} has offsets {s}-{e} "
                            f"outside the text ({len(text)} characters).")
        if text[s:e] != t.get("term"):
            raise DataError(f"Sentence {sid}: offsets {s}-{e} give {text[s:e]!r}, not the term "
                            f"{t.get('term')!r}.")
        if t.get("category") and t["category"] not in CATEGORIES:
            raise DataError(f"Sentence {sid}: unknown category {t['category']!r} (expected one "
                            f"of {', '.join(CATEGORIES)}).")
        if t.get("polarity") not in POLARITIES:
            raise DataError(f"Sentence {sid}: unknown polarity {t.get('polarity')!r} for term "
                            f"{t.get('term')!r}.")
        for o in t.get("opinions", []):
            os_, oe = o.get("start"), o.get("end")
            if not (isinstance(os_, int) and isinstance(oe, int) and 0 <= os_ < oe <= len(text)) \
                    or text[os_:oe] != o.get("word"):
                raise DataError(f"Sentence {sid}: opinion {o.get('word')!r} does not match the "
                                f"text at {os_}-{oe}.")
    for c in row.get("categories", []):
        if c.get("category") not in CATEGORIES:
            raise DataError(f"Sentence {sid}: unknown category {c.get('category')!r} (expected "
                            f"one of {', '.join(CATEGORIES)}).")
        if c.get("polarity") not in POLARITIES:
            raise DataError(f"Sentence {sid}: unknown polarity {c.get('polarity')!r} for "
                            f"category {c.get('category')!r}.")


def combine_polarities(polarities) -> str:
    """One polarity for a category from its opinions: all equal -> that one; positive and
    negative (or any conflict) -> conflict; neutral next to one polar value -> the polar one."""
    pols = set(polarities)
    if not pols:
        raise DataError("A category has no polarity.")
    if "conflict" in pols or {"positive", "negative"} <= pols:
        return "conflict"
    pols.discard("neutral")
    return pols.pop() if pols else "neutral"


def sole_category_terms(row: dict) -> list[dict]:
    """The row's terms, each term without a category given the sentence's category when the
    sentence has exactly one (SemEval-14 terms carry none); otherwise left unassigned."""
    sole = row["categories"][0]["category"] if len(row["categories"]) == 1 else ""
    return [{**t, "category": t["category"] or sole} for t in row["terms"]]


# ---------------------------------------------------------------------------------------------
# Linking sources


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _char_map(text: str) -> list[int]:
    """Index in ``text`` of every non-space character (for whitespace-insensitive matching)."""
    return [i for i, ch in enumerate(text) if not ch.isspace()]


def attach_opinions(base, aste):
    """Copy ASTE opinion words onto the terms of ``base`` (same sentence up to whitespace and
    case, same term span); returns a new Dataset. Sentences without a match are unchanged."""
    index = {}
    for row in aste:
        index[_norm(row["text"])] = row
    rows = []
    for row in base:
        row = {k: row[k] for k in COLUMNS}
        match = index.get(_norm(row["text"]))
        if match is not None:
            src_map, dst_map = _char_map(match["text"]), _char_map(row["text"])
            pos_src = {c: k for k, c in enumerate(src_map)}

            def to_dst(start, end):
                a, b = pos_src.get(start), pos_src.get(end - 1)
                if a is None or b is None:
                    return None
                return dst_map[a], dst_map[b] + 1

            by_span = {}
            for t in match["terms"]:
                span = to_dst(t["start"], t["end"])
                if span:
                    by_span[span] = [to_dst(o["start"], o["end"]) for o in t["opinions"]]
            for t in row["terms"]:
                ops = by_span.get((t["start"], t["end"]))
                if ops:
                    t["opinions"] = [{"word": row["text"][s:e], "start": s, "end": e}
                                     for s, e in (o for o in ops if o)]
        rows.append(row)
    out = to_dataset(rows)
    out.info.description = base.info.description
    return out


def split_dataset(ds, test_fraction: float = 0.1, seed: int = 0):
    """Sentence-level train/held-out split with a fixed seed -> (train, test)."""
    n = len(ds)
    n_test = int(round(n * test_fraction))
    if n < 2 or n_test < 1 or n - n_test < 1:
        raise DataError(f"{n} sentence(s) are too few to split into training and held-out "
                        "parts; use a larger file.")
    parts = ds.train_test_split(test_size=n_test, seed=seed, shuffle=True)
    return parts["train"], parts["test"]
