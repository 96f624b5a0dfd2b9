"""Aspect-based sentiment data: readers for SemEval-2014 Task 4, SemEval-2016 Task 5, ASTE
triplets and the project's bundled sample, all returning one ``datasets.Dataset`` schema.

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
negative, conflict. SemEval-2016 ``ENTITY#ATTRIBUTE`` categories are mapped to them by
:func:`map_semeval16_category` (documented there and in ``data/absa_sample/README.md``).
Every malformed input raises :class:`analysis.errors.DataError` with a one-line message.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from analysis.errors import DataError

CATEGORIES = ("price", "anecdotes/miscellaneous", "food", "ambience", "service")
POLARITIES = ("positive", "neutral", "negative", "conflict")
ASTE_POLARITY = {"POS": "positive", "NEG": "negative", "NEU": "neutral"}

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data" / "absa_sample"
SAMPLE_PATH = SAMPLE_DIR / "restaurants.json"

# SemEval-2016 ENTITY#ATTRIBUTE -> SemEval-2014 category. The attribute PRICES wins over the
# entity (FOOD#PRICES is about price); FOOD and DRINKS are food; RESTAURANT#GENERAL,
# RESTAURANT#MISCELLANEOUS and LOCATION#GENERAL are anecdotes/miscellaneous.
SEMEVAL16_ENTITY = {
    "FOOD": "food",
    "DRINKS": "food",
    "SERVICE": "service",
    "AMBIENCE": "ambience",
    "RESTAURANT": "anecdotes/miscellaneous",
    "LOCATION": "anecdotes/miscellaneous",
}


def _features():
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
    from datasets import Dataset, DatasetInfo  # noqa: F401

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
    rows = kept
    cols = {k: [r[k] for r in rows] for k in ("id", "text", "terms", "categories", "source")}
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


# ---------------------------------------------------------------------------------------------
# XML


def _parse_xml(path):
    import defusedxml.ElementTree as ET
    from xml.etree.ElementTree import ParseError

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file", str(path))
    try:
        return ET.parse(str(path)).getroot()
    except ParseError as exc:
        raise DataError(f"{path.name} is not well-formed XML ({exc}).") from exc
    except Exception as exc:  # defusedxml refuses entities, DTDs...
        raise DataError(f"{path.name} cannot be read safely as XML: {exc}.") from exc


def read_semeval14(path, skip_invalid: bool = False):
    """SemEval-2014 Task 4 XML (``<sentences><sentence><text><aspectTerms>
    <aspectCategories>``) -> Dataset."""
    root = _parse_xml(path)
    sentences = root.findall(".//sentence")
    if root.tag != "sentences" or not sentences or root.find(".//Opinions") is not None:
        raise DataError(f"{Path(path).name} is not SemEval-2014 Task 4 XML (expected "
                        "<sentences> with <sentence> elements holding aspectTerms).")
    rows = []
    for s in sentences:
        sid = s.get("id", str(len(rows)))
        text = (s.findtext("text") or "")
        terms = []
        for a in s.findall("./aspectTerms/aspectTerm"):
            try:
                start, end = int(a.get("from")), int(a.get("to"))
            except (TypeError, ValueError):
                raise DataError(f"Sentence {sid}: aspect term without numeric from/to.")
            terms.append({"term": a.get("term", ""), "start": start, "end": end,
                          "category": "", "polarity": a.get("polarity", ""), "opinions": []})
        cats = [{"category": c.get("category", ""), "polarity": c.get("polarity", "")}
                for c in s.findall("./aspectCategories/aspectCategory")]
        rows.append({"id": sid, "text": text, "terms": terms, "categories": cats,
                     "source": "semeval14"})
    return to_dataset(rows, skip_invalid)


def map_semeval16_category(category: str) -> str:
    """``ENTITY#ATTRIBUTE`` -> one of CATEGORIES (PRICES -> price; FOOD/DRINKS -> food;
    SERVICE -> service; AMBIENCE -> ambience; RESTAURANT/LOCATION -> anecdotes/miscellaneous)."""
    entity, _, attribute = (category or "").upper().partition("#")
    if attribute == "PRICES":
        return "price"
    if entity not in SEMEVAL16_ENTITY or not attribute:
        raise DataError(f"Unknown SemEval-2016 category {category!r}.")
    return SEMEVAL16_ENTITY[entity]


def read_semeval16(path, skip_invalid: bool = False):
    """SemEval-2016 Task 5 (sentence level, SB1) XML -> Dataset. Targets with offsets become
    terms with their mapped category; every opinion (NULL targets too) feeds the
    sentence-level category polarity (combined with :func:`combine_polarities`)."""
    root = _parse_xml(path)
    sentences = root.findall(".//sentence")
    if not sentences or root.find(".//aspectTerms") is not None or \
            root.find(".//Opinions") is None and root.tag != "Reviews":
        raise DataError(f"{Path(path).name} is not SemEval-2016 Task 5 XML (expected <Reviews> "
                        "with sentences holding <Opinions>).")
    rows = []
    for s in sentences:
        sid = s.get("id", str(len(rows)))
        text = s.findtext("text") or ""
        if (s.get("OutOfScope") or "").upper() == "TRUE":
            continue  # not annotated
        terms, seen, by_cat = [], set(), {}
        for o in s.findall("./Opinions/Opinion"):
            cat = map_semeval16_category(o.get("category", ""))
            pol = o.get("polarity", "")
            if pol not in POLARITIES:
                raise DataError(f"Sentence {sid}: unknown polarity {pol!r}.")
            by_cat.setdefault(cat, []).append(pol)
            target = o.get("target", "NULL")
            if target and target != "NULL":
                try:
                    start, end = int(o.get("from")), int(o.get("to"))
                except (TypeError, ValueError):
                    raise DataError(f"Sentence {sid}: opinion target without numeric from/to.")
                key = (start, end, cat)
                if key in seen:
                    continue
                seen.add(key)
                terms.append({"term": target, "start": start, "end": end, "category": cat,
                              "polarity": pol, "opinions": []})
        cats = [{"category": c, "polarity": combine_polarities(p)} for c, p in by_cat.items()]
        rows.append({"id": sid, "text": text, "terms": terms, "categories": cats,
                     "source": "semeval16"})
    return to_dataset(rows, skip_invalid)


# ---------------------------------------------------------------------------------------------
# ASTE


def _word_spans(words: list[str]) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for w in words:
        spans.append((pos, pos + len(w)))
        pos += len(w) + 1
    return spans


def read_aste(path, skip_invalid: bool = False):
    """ASTE-v2 triplets (``sentence####[([a idx], [o idx], 'POS'), ...]``, whitespace
    tokens, 0-based) -> Dataset; the text is the tokens joined by single spaces."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file", str(path))
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if "####" not in line:
            raise DataError(f"{path.name} line {n}: not an ASTE triplet line "
                            "(expected 'sentence####[([...], [...], 'POS')]').")
        sentence, _, trip = line.partition("####")
        try:
            triplets = ast.literal_eval(trip.strip())
        except (ValueError, SyntaxError) as exc:
            raise DataError(f"{path.name} line {n}: the triplet list cannot be parsed.") from exc
        words = sentence.split()
        text = " ".join(words)
        spans = _word_spans(words)
        terms: dict[tuple[int, int], dict] = {}
        try:
            for a_idx, o_idx, pol in triplets:
                a_idx, o_idx = sorted(a_idx), sorted(o_idx)
                if pol not in ASTE_POLARITY:
                    raise DataError(f"{path.name} line {n}: unknown polarity {pol!r}.")
                if not a_idx or max(a_idx + o_idx) >= len(words) or min(a_idx + o_idx) < 0:
                    raise DataError(f"{path.name} line {n}: word index outside the sentence.")
                start, end = spans[a_idx[0]][0], spans[a_idx[-1]][1]
                term = terms.setdefault((start, end), {
                    "term": text[start:end], "start": start, "end": end, "category": "",
                    "polarities": [], "opinions": []})
                term["polarities"].append(ASTE_POLARITY[pol])
                os_, oe = spans[o_idx[0]][0], spans[o_idx[-1]][1]
                if not any(o["start"] == os_ and o["end"] == oe for o in term["opinions"]):
                    term["opinions"].append({"word": text[os_:oe], "start": os_, "end": oe})
        except (TypeError, ValueError) as exc:
            if isinstance(exc, DataError):
                raise
            raise DataError(f"{path.name} line {n}: triplets must be ([aspect idx], "
                            "[opinion idx], 'POS'|'NEG'|'NEU').") from exc
        out_terms = []
        for t in sorted(terms.values(), key=lambda t: t["start"]):
            pol = combine_polarities(t.pop("polarities"))
            out_terms.append({**t, "polarity": pol})
        rows.append({"id": f"{path.stem}:{n}", "text": text, "terms": out_terms,
                     "categories": [], "source": "aste"})
    if not rows:
        raise DataError(f"{path.name} holds no ASTE triplet lines.")
    return to_dataset(rows, skip_invalid)


# ---------------------------------------------------------------------------------------------
# The bundled sample and JSON files in the same schema


def read_json(path, skip_invalid: bool = False):
    """A JSON file in this project's schema (``{"sentences": [...]}`` or a list) -> Dataset."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file", str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path.name} is not valid JSON (line {exc.lineno}).") from exc
    items = data.get("sentences") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise DataError(f"{path.name} holds no sentences (expected {{\"sentences\": [...]}}).")
    rows = []
    for i, s in enumerate(items):
        if not isinstance(s, dict) or "text" not in s:
            raise DataError(f"{path.name}: entry {i} is not a sentence object with a text.")
        terms = []
        for t in s.get("terms", []):
            if not isinstance(t, dict):
                raise DataError(f"{path.name}: sentence {s.get('id', i)} has a malformed term.")
            terms.append({"term": t.get("term"), "start": t.get("start"), "end": t.get("end"),
                          "category": t.get("category", ""), "polarity": t.get("polarity"),
                          "opinions": [{"word": o.get("word"), "start": o.get("start"),
                                        "end": o.get("end")} for o in t.get("opinions", [])]})
        cats = [{"category": c.get("category"), "polarity": c.get("polarity")}
                for c in s.get("categories", [])]
        if not terms and not cats:
            if skip_invalid:
                continue
            raise DataError(f"{path.name}: sentence {s.get('id', i)} has no annotated aspects "
                            "(no terms and no categories); annotate it or remove it.")
        rows.append({"id": str(s.get("id", i)), "text": s["text"], "terms": terms,
                     "categories": cats, "source": s.get("source", "json")})
    return to_dataset(rows, skip_invalid)


def load_sample():
    """The bundled restaurant-review sample (``data/absa_sample/restaurants.json``)."""
    return read_json(SAMPLE_PATH)


def sniff_format(path) -> str:
    """Guess the format of a file: semeval14, semeval16, aste or json."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file", str(path))
    head = path.read_bytes()[:4000].decode("utf-8", errors="replace")
    if path.suffix.lower() == ".json" or head.lstrip().startswith(("{", "[")):
        return "json"
    if head.lstrip().startswith("<"):
        if "<Reviews" in head or "<Opinions" in head or "<Opinion " in head:
            return "semeval16"
        return "semeval14"
    if "####" in head:
        return "aste"
    raise DataError(f"{path.name}: unknown data format (expected SemEval-14/16 XML, ASTE "
                    "triplets or this project's JSON).")


def load_absa(path_or_name, skip_invalid: bool = False):
    """Load a file of any supported format, or ``"sample"`` for the bundled sample."""
    if str(path_or_name) in ("sample", "bundled"):
        return load_sample()
    fmt = sniff_format(path_or_name)
    return {"json": read_json, "semeval14": read_semeval14, "semeval16": read_semeval16,
            "aste": read_aste}[fmt](path_or_name, skip_invalid=skip_invalid)


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
        row = {k: row[k] for k in ("id", "text", "terms", "categories", "source")}
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


def assign_single_category(ds):
    """SemEval-14 terms have no category; where a sentence has exactly one category, every
    uncategorised term gets it (DESIGN.md section 5). Returns a new Dataset."""
    rows = []
    for row in ds:
        row = {k: row[k] for k in ("id", "text", "terms", "categories", "source")}
        if len(row["categories"]) == 1:
            cat = row["categories"][0]["category"]
            for t in row["terms"]:
                if not t["category"]:
                    t["category"] = cat
        rows.append(row)
    return to_dataset(rows)


def split_dataset(ds, test_fraction: float = 0.1, seed: int = 0):
    """Sentence-level train/held-out split with a fixed seed -> (train, test)."""
    n = len(ds)
    n_test = int(round(n * test_fraction))
    if n < 2 or n_test < 1 or n - n_test < 1:
        raise DataError(f"{n} sentence(s) are too few to split into training and held-out "
                        "parts; use a larger file.")
    parts = ds.train_test_split(test_size=n_test, seed=seed, shuffle=True)
    return parts["train"], parts["test"]
