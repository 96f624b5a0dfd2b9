"""Readers of aspect-based sentiment files: SemEval-2014 Task 4 XML, SemEval-2016 Task 5 XML,
ASTE-v2 triplets, this project's JSON and the bundled sample, all into the schema of
:mod:`analysis.absa.data` (docs/METHODS.md section 6).

Every reader takes a path, or the file's bytes with its ``name``; bytes come through the core
:func:`analysis.core.corpus.files.read_bytes` with the ABSA size cap (``max_bytes``, default
:data:`MAX_ABSA_BYTES`: parsing annotations costs far more memory per byte than a corpus),
the format from :func:`analysis.core.corpus.files.sniff_format` (XML by its root element), XML
through the streaming :func:`analysis.core.corpus.xml.iter_xml` (one sentence in memory at a time).
A sentence (or an ASTE line's triplet list) longer than ``max_chars`` characters
(:data:`analysis.core.corpus.files.MAX_CHARS` by default) is skipped, not parsed, and counted in
the dataset's notes (``info.description``, one per line): its offsets could not be kept by a
cut. A missing path raises FileNotFoundError; a malformed file DataError with one line.
SemEval-2016 ``ENTITY#ATTRIBUTE`` categories are mapped by :func:`map_semeval16_category`.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from analysis.absa.data import POLARITIES, combine_polarities, to_dataset
from analysis.core.corpus.files import (MAX_CHARS, check_limit, decode, iter_lines, read_bytes,
                                   sniff_format)
from analysis.core.corpus.jsonsafe import loads
from analysis.core.corpus.xml import iter_xml
from analysis.core.errors import DataError

MAX_ABSA_BYTES = 20 * 1024 * 1024  # 20 MB: twenty times the largest SemEval / ASTE file

ASTE_POLARITY = {"POS": "positive", "NEG": "negative", "NEU": "neutral"}
SAMPLE_PATH = Path(__file__).resolve().parents[2] / "data" / "absa_sample" / "restaurants.json"

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


def _read(source, name: str | None = None, max_bytes: int | None = None) -> tuple[bytes, str]:
    """(bytes, file name) of a path or of bytes named ``name``, refused over ``max_bytes``
    (default :data:`MAX_ABSA_BYTES`)."""
    if isinstance(source, (str, os.PathLike)) and not Path(source).exists():
        raise FileNotFoundError(2, "No such file", str(Path(source)))
    return read_bytes(source, name, MAX_ABSA_BYTES if max_bytes is None else max_bytes)


def _finish(rows: list[dict], skip_invalid: bool, n_long: int, max_chars: int):
    """The Dataset of ``rows``, with the sentences skipped for their length in its notes."""
    if not rows and n_long:
        raise DataError(f"Every sentence is longer than {max_chars:,} characters; none was read.")
    ds = to_dataset(rows, skip_invalid)
    if n_long:
        note = f"Skipped {n_long} sentence(s) longer than {max_chars:,} characters."
        ds.info.description = "\n".join(x for x in (ds.info.description, note) if x)
    return ds


def _sentences(data: bytes, name: str, refuse: str, what: str, seen: dict):
    """The ``<sentence>`` elements of SemEval XML, streamed (one in memory at a time); every
    tag met is recorded in ``seen`` (``seen["root"]`` the root's); a ``refuse`` element raises
    DataError with ``what``."""
    for event, el in iter_xml(data, name, release=("sentence",)):
        if event == "start":
            seen.setdefault("root", el.tag)
            seen[el.tag] = True
            if el.tag == refuse:
                raise DataError(what)
        elif el.tag == "sentence":
            yield el


# ---------------------------------------------------------------------------------------------
# XML


def read_semeval14(source, skip_invalid: bool = False, name: str | None = None,
                   max_bytes: int | None = None, max_chars: int | None = None):
    """SemEval-2014 Task 4 XML (``<sentences><sentence><text><aspectTerms>
    <aspectCategories>``) -> Dataset."""
    max_chars = check_limit(max_chars, "The character cap", MAX_CHARS)
    data, name = _read(source, name, max_bytes)
    what = (f"{name} is not SemEval-2014 Task 4 XML (expected <sentences> with <sentence> "
            "elements holding aspectTerms).")
    rows, n_long, tags = [], 0, {}
    for s in _sentences(data, name, "Opinions", what, tags):
        if tags["root"] != "sentences":
            raise DataError(what)
        sid = s.get("id", str(len(rows)))
        text = (s.findtext("text") or "")
        if len(text) > max_chars:
            n_long += 1
            continue
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
    if not rows and not n_long:
        raise DataError(what)
    return _finish(rows, skip_invalid, n_long, max_chars)


def map_semeval16_category(category: str) -> str:
    """``ENTITY#ATTRIBUTE`` -> one of CATEGORIES (PRICES -> price; FOOD/DRINKS -> food;
    SERVICE -> service; AMBIENCE -> ambience; RESTAURANT/LOCATION -> anecdotes/miscellaneous)."""
    entity, _, attribute = (category or "").upper().partition("#")
    if attribute == "PRICES":
        return "price"
    if entity not in SEMEVAL16_ENTITY or not attribute:
        raise DataError(f"Unknown SemEval-2016 category {category!r}.")
    return SEMEVAL16_ENTITY[entity]


def read_semeval16(source, skip_invalid: bool = False, name: str | None = None,
                   max_bytes: int | None = None, max_chars: int | None = None):
    """SemEval-2016 Task 5 (sentence level, SB1) XML -> Dataset. Targets with offsets become
    terms with their mapped category; every opinion (NULL targets too) feeds the
    sentence-level category polarity (combined with :func:`combine_polarities`)."""
    max_chars = check_limit(max_chars, "The character cap", MAX_CHARS)
    data, name = _read(source, name, max_bytes)
    what = (f"{name} is not SemEval-2016 Task 5 XML (expected <Reviews> with sentences "
            "holding <Opinions>).")
    rows, n_long, n_seen, tags = [], 0, 0, {}
    for s in _sentences(data, name, "aspectTerms", what, tags):
        n_seen += 1
        sid = s.get("id", str(len(rows)))
        text = s.findtext("text") or ""
        if (s.get("OutOfScope") or "").upper() == "TRUE":
            continue  # not annotated
        if len(text) > max_chars:
            n_long += 1
            continue
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
    if not n_seen or "Opinions" not in tags and tags.get("root") != "Reviews":
        raise DataError(what)
    return _finish(rows, skip_invalid, n_long, max_chars)


# ---------------------------------------------------------------------------------------------
# ASTE


def _word_spans(words: list[str]) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for w in words:
        spans.append((pos, pos + len(w)))
        pos += len(w) + 1
    return spans


def _aste_terms(triplets, words: list[str], text: str, where: str) -> list[dict]:
    """The terms of one ASTE line: spans from word indices, opinions deduplicated, the term's
    polarities combined."""
    spans = _word_spans(words)
    terms: dict[tuple[int, int], dict] = {}
    try:
        for a_idx, o_idx, pol in triplets:
            a_idx, o_idx = sorted(a_idx), sorted(o_idx)
            if pol not in ASTE_POLARITY:
                raise DataError(f"{where}: unknown polarity {pol!r}.")
            if not a_idx or max(a_idx + o_idx) >= len(words) or min(a_idx + o_idx) < 0:
                raise DataError(f"{where}: word index outside the sentence.")
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
        raise DataError(f"{where}: triplets must be ([aspect idx], [opinion idx], "
                        "'POS'|'NEG'|'NEU').") from exc
    out = []
    for t in sorted(terms.values(), key=lambda t: t["start"]):
        pol = combine_polarities(t.pop("polarities"))
        out.append({**t, "polarity": pol})
    return out


def read_aste(source, skip_invalid: bool = False, name: str | None = None,
              max_bytes: int | None = None, max_chars: int | None = None):
    """ASTE-v2 triplets (``sentence####[([a idx], [o idx], 'POS'), ...]``, whitespace
    tokens, 0-based) -> Dataset; the text is the tokens joined by single spaces. A line whose
    sentence or triplet list is longer than ``max_chars`` characters is skipped (counted)
    before its triplets are parsed."""
    max_chars = check_limit(max_chars, "The character cap", MAX_CHARS)
    data, name = _read(source, name, max_bytes)
    rows, n_long = [], 0
    for n, line in enumerate(iter_lines(data, name), 1):
        if not line.strip():
            continue
        if "####" not in line:
            raise DataError(f"{name} line {n}: not an ASTE triplet line "
                            "(expected 'sentence####[([...], [...], 'POS')]').")
        sentence, _, trip = line.partition("####")
        if len(sentence) > max_chars or len(trip) > max_chars:
            n_long += 1
            continue
        try:
            triplets = ast.literal_eval(trip.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            raise DataError(f"{name} line {n}: the triplet list cannot be parsed.") from exc
        words = sentence.split()
        text = " ".join(words)
        rows.append({"id": f"{Path(name).stem}:{n}", "text": text,
                     "terms": _aste_terms(triplets, words, text, f"{name} line {n}"),
                     "categories": [], "source": "aste"})
    if not rows and not n_long:
        raise DataError(f"{name} holds no ASTE triplet lines.")
    return _finish(rows, skip_invalid, n_long, max_chars)


# ---------------------------------------------------------------------------------------------
# The bundled sample and JSON files in the same schema


def read_json(source, skip_invalid: bool = False, name: str | None = None,
              max_bytes: int | None = None, max_chars: int | None = None):
    """A JSON file in this project's schema (``{"sentences": [...]}`` or a list) -> Dataset;
    sentences longer than ``max_chars`` characters are skipped (counted)."""
    max_chars = check_limit(max_chars, "The character cap", MAX_CHARS)
    data, name = _read(source, name, max_bytes)
    items = loads(decode(data, name), name)
    items = items.get("sentences") if isinstance(items, dict) else items
    if not isinstance(items, list) or not items:
        raise DataError(f"{name} holds no sentences (expected {{\"sentences\": [...]}}).")
    rows, n_long = [], 0
    for i, s in enumerate(items):
        if not isinstance(s, dict) or "text" not in s:
            raise DataError(f"{name}: entry {i} is not a sentence object with a text.")
        if isinstance(s["text"], str) and len(s["text"]) > max_chars:
            n_long += 1
            continue
        terms = []
        for t in s.get("terms", []):
            if not isinstance(t, dict):
                raise DataError(f"{name}: sentence {s.get('id', i)} has a malformed term.")
            terms.append({"term": t.get("term"), "start": t.get("start"), "end": t.get("end"),
                          "category": t.get("category", ""), "polarity": t.get("polarity"),
                          "opinions": [{"word": o.get("word"), "start": o.get("start"),
                                        "end": o.get("end")} for o in t.get("opinions", [])]})
        cats = [{"category": c.get("category"), "polarity": c.get("polarity")}
                for c in s.get("categories", [])]
        if not terms and not cats:
            if skip_invalid:
                continue
            raise DataError(f"{name}: sentence {s.get('id', i)} has no annotated aspects "
                            "(no terms and no categories); annotate it or remove it.")
        rows.append({"id": str(s.get("id", i)), "text": s["text"], "terms": terms,
                     "categories": cats, "source": s.get("source", "json")})
    return _finish(rows, skip_invalid, n_long, max_chars)


def load_sample():
    """The bundled restaurant-review sample (``data/absa_sample/restaurants.json``)."""
    return read_json(SAMPLE_PATH)


READERS = {"json": read_json, "semeval14": read_semeval14, "semeval16": read_semeval16,
           "aste": read_aste}


def load_absa(source, skip_invalid: bool = False, name: str | None = None,
              max_bytes: int | None = None, max_chars: int | None = None):
    """A file of any supported format (a path, or bytes named ``name``), or ``"sample"`` for
    the bundled sample; ``max_bytes`` and ``max_chars`` as in the readers."""
    if isinstance(source, (str, os.PathLike)) and str(source) in ("sample", "bundled"):
        return load_sample()
    data, name = _read(source, name, max_bytes)
    fmt = sniff_format(name, head=data)
    return READERS[fmt](data, skip_invalid=skip_invalid, name=name, max_bytes=max_bytes,
                        max_chars=max_chars)
