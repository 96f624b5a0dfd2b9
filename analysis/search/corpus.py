"""A corpus for the search index: its sentences, each sentence's number (the line number of a
.txt file, 0-based; else the sentence's 0-based place in the corpus) and the labels its word
pieces carry (docs/METHODS.md section 16, "Data").

- a treebank (``analysis.syntax.treebank`` Dataset): the sentence is its words joined by
  spaces; each piece carries its word's UPOS and dependency relation;
- ABSA data (``analysis.aspects`` Dataset): the review; each piece carries its word's role
  (aspect term, opinion word, other);
- a corpus (``analysis.core.corpus`` Dataset: text, text_pair, optional label, optional line): the
  text (and pair); each piece carries its sentence's label where the corpus has labels.

A piece's word is found by its characters: the encoding's words (their text spans) are looked
up in the sentence in order, so the pieces the tokenizer makes of ``text`` (what the CLI's
``--token`` and the Attention page count) keep the labels of the data's own words.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from typing import Sequence

from analysis.core.errors import DataError
from analysis.core.corpus import read_corpus, read_labels
from analysis.core.corpus.files import iter_lines, read_bytes

KINDS = ("treebank", "absa", "labelled", "text")
LABEL_NAMES = {"upos": "part of speech (UPOS)", "deprel": "dependency relation",
               "role": "aspect role", "label": "sentence's label"}
ROLE_ASPECT, ROLE_OPINION, ROLE_OTHER = "aspect term", "opinion word", "other"
NONE = "_"


@dataclass
class SearchCorpus:
    """Sentences with their numbers and per-character word labels.

    ``spans[i]``: the start character of each labelled unit of sentence ``i`` (sorted) and
    ``span_labels[i][name]`` the label of each unit; a piece takes the label of the unit its
    word starts in (:meth:`piece_labels`)."""

    kind: str
    texts: list[str]
    pairs: list[str | None]
    numbers: list[int]
    label_names: tuple[str, ...] = ()
    spans: list[list[tuple[int, int]]] = field(default_factory=list)
    span_labels: list[dict[str, list[str]]] = field(default_factory=list)
    sentence_labels: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts)

    def select(self, lo: int, hi: int) -> "SearchCorpus":
        cut = slice(lo, hi)
        return SearchCorpus(self.kind, self.texts[cut], self.pairs[cut], self.numbers[cut],
                            self.label_names, self.spans[cut] if self.spans else [],
                            self.span_labels[cut] if self.span_labels else [],
                            self.sentence_labels[cut] if self.sentence_labels else [],
                            self.notes)

    def piece_labels(self, i: int, enc) -> dict[str, list[str]]:
        """Every label name -> one label per token of ``enc`` (sentence ``i``'s encoding;
        specials and segment B's tokens get '_')."""
        out = {name: [NONE] * enc.n_tokens for name in self.label_names}
        if not self.label_names:
            return out
        starts = word_starts(enc)
        for t, w in enumerate(enc.word_ids):
            if enc.special[t] or int(enc.segments[t]) != 0:
                continue
            if self.sentence_labels:
                for name, value in self.sentence_labels[i].items():
                    out[name][t] = value
                continue
            start = starts.get(int(w))
            if start is None:
                continue
            units = self.spans[i]
            k = bisect.bisect_right([a for a, _ in units], start) - 1
            if k >= 0 and start < units[k][1]:
                for name in self.label_names:
                    out[name][t] = self.span_labels[i][name][k]
        return out

    def fingerprint(self) -> str:
        """A short content hash of the sentences, their numbers and labels (cache keys)."""
        h = hashlib.sha1(self.kind.encode())
        for i, text in enumerate(self.texts):
            h.update(f"{self.numbers[i]}\x1f{text}\x1f{self.pairs[i] or ''}".encode("utf-8"))
            if self.spans:
                h.update(repr((self.spans[i], self.span_labels[i])).encode("utf-8"))
            if self.sentence_labels:
                h.update(repr(self.sentence_labels[i]).encode("utf-8"))
            h.update(b"\x1e")
        return h.hexdigest()[:16]


def word_starts(enc) -> dict[int, int]:
    """Word index -> its first character in ``enc.text`` (segment A's words, looked up in
    order; a word not found, e.g. one the tokenizer changed, is left out)."""
    out, cursor = {}, 0
    seen = set()
    for t, w in enumerate(enc.word_ids):
        w = int(w)
        if w in seen or enc.special[t] or int(enc.segments[t]) != 0:
            continue
        seen.add(w)
        k = enc.text.find(enc.words[w], cursor)
        if k < 0:
            k = enc.text.lower().find(enc.words[w].lower(), cursor)
        if k >= 0:
            out[w] = k
            cursor = k + len(enc.words[w])
    return out


def _joined(words: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    spans, pos = [], 0
    for w in words:
        spans.append((pos, pos + len(w)))
        pos += len(w) + 1
    return " ".join(words), spans


def treebank_corpus(dataset) -> SearchCorpus:
    texts, spans, labels = [], [], []
    for row in dataset:
        text, sp = _joined(list(row["words"]))
        texts.append(text)
        spans.append(sp)
        labels.append({"upos": [str(u) for u in row["upos"]],
                       "deprel": [str(d) for d in row["deprels"]]})
    has_upos = any(u != NONE for lab in labels for u in lab["upos"])
    names = ("upos", "deprel") if has_upos else ("deprel",)
    return SearchCorpus("treebank", texts, [None] * len(texts), list(range(len(texts))),
                        names, spans, labels)


def absa_corpus(dataset) -> SearchCorpus:
    texts, spans, labels = [], [], []
    for row in dataset:
        text = row["text"]
        units: dict[tuple[int, int], str] = {}
        for term in row.get("terms") or ():
            for op in term.get("opinions") or ():
                units.setdefault((int(op["start"]), int(op["end"])), ROLE_OPINION)
        for term in row.get("terms") or ():
            units[(int(term["start"]), int(term["end"]))] = ROLE_ASPECT
        # every other word: "other"; units are the words (split at spaces) with their role
        sp, roles = [], []
        pos = 0
        for w in text.split(" "):
            a, b = pos, pos + len(w)
            pos = b + 1
            if not w:
                continue
            role = ROLE_OTHER
            for (s, e), r in units.items():
                if a < e and s < b and (r == ROLE_ASPECT or role == ROLE_OTHER):
                    role = r
            sp.append((a, b))
            roles.append(role)
        texts.append(text)
        spans.append(sp)
        labels.append({"role": roles})
    return SearchCorpus("absa", texts, [None] * len(texts), list(range(len(texts))),
                        ("role",), spans, labels)


def text_corpus(dataset) -> SearchCorpus:
    """A Dataset of ``analysis.core.corpus`` (text, text_pair; a ``label`` column and a ``line``
    column (0-based line numbers of a .txt file) where present)."""
    cols = set(dataset.column_names or ())
    texts = list(dataset["text"])
    pairs = list(dataset["text_pair"]) if "text_pair" in cols else [None] * len(texts)
    numbers = list(dataset["line"]) if "line" in cols else list(range(len(texts)))
    sentence_labels: list[dict[str, str]] = []
    names: tuple[str, ...] = ()
    if "label" in cols:
        values = ["" if v is None else str(v).strip() for v in dataset["label"]]
        if any(values):
            names = ("label",)
            sentence_labels = [{"label": v or NONE} for v in values]
    return SearchCorpus("labelled" if names else "text", texts, pairs, [int(n) for n in numbers],
                        names, [], [], sentence_labels)


def search_corpus(dataset) -> SearchCorpus:
    """The :class:`SearchCorpus` of a treebank, ABSA or text Dataset (by its columns)."""
    if dataset is None or len(dataset) == 0:
        raise DataError("The corpus is empty.")
    cols = set(dataset.column_names or ())
    if "terms" in cols:
        out = absa_corpus(dataset)
    elif {"words", "upos", "deprels"} <= cols:
        out = treebank_corpus(dataset)
    elif "text" in cols:
        out = text_corpus(dataset)
    else:
        raise DataError("The data is neither a text corpus, a treebank (CoNLL-U) nor ABSA "
                        "data.")
    desc = getattr(getattr(dataset, "info", None), "description", "") or ""
    out.notes = [line for line in desc.splitlines() if line.strip()]
    return out


def line_numbers(source, name: str | None = None, max_bytes: int | None = None) -> list[int]:
    """The 0-based line numbers of a .txt file's non-blank lines (the rows the corpus reader
    keeps, in order)."""
    data, label = read_bytes(source, name, max_bytes)
    return [i for i, line in enumerate(iter_lines(data, label)) if line.strip()]


TEXT_SUFFIXES = (".txt", ".tsv", ".text")
TABLE_SUFFIXES = (".csv", ".jsonl")
ABSA_SUFFIXES = (".xml", ".json")


def looks_aste(data: bytes) -> bool:
    """An ASTE-v2 file (``sentence####[triplets]`` lines) rather than one sentence a line:
    ``####`` in its first line, as the ABSA reader decides."""
    return b"####" in data.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]


def read_data(source, name: str | None = None, max_examples: int | None = None,
              max_bytes: int | None = None, max_chars: int | None = None):
    """A data file (a path, or the bytes of an upload named ``name``) -> (Dataset, the 0-based
    line numbers of its sentences or None), read by its kind, as the CLI and the page both do:

    - .conllu: a treebank (each word's UPOS and dependency relation);
    - .xml, .json, and a .txt of ASTE triplets: ABSA data (each word's aspect role);
    - .txt / .tsv: one sentence a line (a tab for a pair), numbered by the file's lines;
    - .csv / .jsonl: a text corpus, with its ``label`` column where it has one.

    ``max_examples`` keeps the first sentences; ``max_bytes`` and ``max_chars`` go to the
    readers (their own limits when None)."""
    data, label = read_bytes(source, name, max_bytes)
    lower = label.lower()
    if lower.endswith(".conllu"):
        # lazy: a treebank reads only when one is given (the search package loads fast)
        from analysis.syntax.treebank import read_conllu

        return read_conllu(data, name=label, max_sentences=max_examples), None
    if lower.endswith(TEXT_SUFFIXES) and not looks_aste(data):
        ds = read_corpus(data, name=label, fmt="txt", max_examples=max_examples,
                         max_bytes=max_bytes, max_chars=max_chars)
        return ds, line_numbers(data, label, max_bytes)[:len(ds)]
    if lower.endswith(TABLE_SUFFIXES):
        ds = read_corpus(data, name=label, max_examples=max_examples, max_bytes=max_bytes,
                         max_chars=max_chars)
        gold, _ = read_labels(data, ds, name=label, max_bytes=max_bytes)
        return (ds.add_column("label", gold) if gold is not None else ds), None
    if not lower.endswith(ABSA_SUFFIXES + TEXT_SUFFIXES):
        raise DataError(f"{label}: use a .conllu treebank, ABSA data (.xml, .json or ASTE "
                        ".txt), or a text corpus (.txt, .tsv, .csv or .jsonl).")
    # lazy: ABSA data reads only when given
    from analysis.absa.readers import load_absa

    ds = load_absa(data, name=label, max_bytes=max_bytes, max_chars=max_chars)
    return (ds.select(range(min(len(ds), max_examples))) if max_examples else ds), None


def with_lines(dataset, lines: Sequence[int] | None):
    """``dataset`` with its sentences' line numbers as a ``line`` column (what
    :func:`text_corpus` numbers them by), or unchanged when there are none."""
    if lines is None or "line" in (dataset.column_names or ()):
        return dataset
    return dataset.add_column("line", [int(n) for n in lines[:len(dataset)]])
