"""The corpus a dictionary is trained on and read against: the inputs the model reads, each
piece's annotations, and which inputs are held out (docs/METHODS.md section 19, "Data").

- ABSA data (``analysis.absa`` Dataset) for a classifier with an ABSA card (the example
  checkpoint): the very pairs the classifier reads (the card's task and pair order, one pair
  per review and category), each labelled with its gold answer (``label``) and the category it
  asks about (``aspect``); the held-out inputs are the card's held-out reviews;
- any other data (ABSA reviews for a model without a card, a treebank, a text corpus): its
  sentences (and pairs) as :mod:`analysis.search.corpus` reads them; a seeded share of the
  sentences is held out.

Every piece carries the labels :class:`analysis.search.corpus.SearchCorpus` gives it (UPOS and
dependency relation from a treebank, the aspect role from ABSA data, a corpus's sentence
label), plus the input's own labels; '_' where it has none ([CLS], [SEP], the auxiliary
sentence).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from analysis.core.errors import DataError
from analysis.search.corpus import NONE, SearchCorpus, search_corpus

HELDOUT = 0.15
LABEL_NAMES = {"upos": "part of speech (UPOS)", "deprel": "dependency relation",
               "role": "aspect role", "label": "sentence's label", "aspect": "category asked"}


@dataclass
class FeatureCorpus:
    """Inputs (``texts``, ``pairs``), the :class:`SearchCorpus` sentence each comes from
    (``source``, in ``words[part]``), its own labels, whether it is held out, and its gold
    class (or -1)."""

    name: str
    texts: list[str]
    pairs: list[str | None]
    source: list[int]
    words: list[SearchCorpus]
    heldout: np.ndarray  # bool per input
    own_labels: list[dict[str, str]] = field(default_factory=list)
    classes: np.ndarray | None = None  # gold class index per input (a classifier's data)
    class_names: tuple[str, ...] = ()
    max_length: int | None = None  # the inputs' token cap (a card's), else the model's
    notes: list[str] = field(default_factory=list)
    part: list[int] = field(default_factory=list)  # which of ``words`` (default: the first)

    def __len__(self) -> int:
        return len(self.texts)

    @cached_property
    def label_names(self) -> tuple[str, ...]:
        names = [n for w in self.words for n in w.label_names]
        names += [n for own in self.own_labels for n in own]
        return tuple(dict.fromkeys(names))

    def scored(self) -> np.ndarray:
        """The held-out inputs the model is scored on: those with a gold class where the
        corpus has classes (the classifier's own pairs; extra sentences train the dictionary
        only), else every held-out input."""
        held = np.asarray(self.heldout, bool)
        return held if self.classes is None else held & (np.asarray(self.classes) >= 0)

    def piece_labels(self, i: int, enc) -> dict[str, list[str]]:
        """Every label name -> one label per token of input ``i``'s encoding ``enc``."""
        words = self.words[self.part[i] if self.part else 0]
        out = words.piece_labels(self.source[i], enc)
        for name, value in (self.own_labels[i] if self.own_labels else {}).items():
            out[name] = [NONE if enc.special[t] else value for t in range(enc.n_tokens)]
        return {name: out.get(name, [NONE] * enc.n_tokens) for name in self.label_names}

    def fingerprint(self) -> str:
        """A short content hash of the inputs, their split and labels (cache keys)."""
        h = hashlib.sha1("".join(w.fingerprint() for w in self.words).encode())
        own = self.own_labels or [{}] * len(self)
        part = self.part or [0] * len(self)
        for i, text in enumerate(self.texts):
            h.update(f"{text}\x1f{self.pairs[i] or ''}\x1f{int(self.heldout[i])}\x1f"
                     f"{part[i]}:{self.source[i]}\x1f{sorted(own[i].items())}".encode("utf-8"))
        h.update(repr(self.max_length).encode())
        return h.hexdigest()[:16]


def split_sentences(n: int, share: float = HELDOUT, seed: int = 0) -> np.ndarray:
    """Held-out marks of ``n`` sentences: a seeded ``share`` of them (at least one, and at
    least one left to train on)."""
    if n < 2:
        raise DataError(f"{n} sentence(s) are too few to hold some out: use a larger corpus.")
    k = min(n - 1, max(1, int(round(n * share))))
    out = np.zeros(n, bool)
    out[np.random.default_rng(seed).permutation(n)[:k]] = True
    return out


def absa_pairs_corpus(dataset, card: dict, name: str, seed: int = 0) -> FeatureCorpus:
    """The classifier's own pairs of ABSA ``dataset`` (the card's task and pair order)."""
    # lazy: the ABSA task code is only needed for a classifier's data
    from analysis.absa.tasks import LABELS, build_examples, default_pair_order, is_binary

    task = card["task"]
    order = card.get("pair_order") or default_pair_order(task)
    words = search_corpus(dataset)
    examples = [e for e in build_examples(dataset, task, order)
                if not is_binary(task) or e.row == 0]
    held_ids = set(card.get("heldout_ids") or ())
    ids = list(dataset["id"]) if "id" in dataset.column_names else []
    by_card = bool(held_ids) and any(i in held_ids for i in ids)
    held_sent = (np.array([i in held_ids for i in ids]) if by_card
                 else split_sentences(len(dataset), seed=seed))
    notes = [] if by_card else ["The checkpoint's card names no held-out sentences of this "
                                "data, so a seeded 15% of its sentences is held out."]
    if is_binary(task):
        notes.append("A yes/no task: each review and category is read once (its first "
                     "candidate label's pair).")
    review_first = order == "review-aux"
    return FeatureCorpus(
        name=name, texts=[e.text_a for e in examples], pairs=[e.text_b for e in examples],
        source=[e.sentence for e in examples], words=[words],
        heldout=np.array([held_sent[e.sentence] for e in examples], bool),
        own_labels=[{"label": e.gold, "aspect": e.category} for e in examples],
        classes=None if is_binary(task) else np.array([e.label for e in examples], np.int64),
        class_names=() if is_binary(task) else tuple(LABELS),
        max_length=int(card.get("max_length", 128)),
        notes=notes + ([] if review_first else
                       ["The review is the second text: its words carry no aspect role."]))


def feature_corpus(dataset, name: str, card: dict | None = None, seed: int = 0,
                   max_examples: int | None = None) -> FeatureCorpus:
    """The :class:`FeatureCorpus` of a Dataset (module docstring): the classifier's pairs for
    ABSA data and a card with a task, else the sentences themselves. ``max_examples`` keeps
    the first sentences of the data."""
    if dataset is None or len(dataset) == 0:
        raise DataError("The corpus is empty.")
    if max_examples is not None and len(dataset) > max_examples:
        dataset = dataset.select(range(int(max_examples)))
    cols = set(dataset.column_names or ())
    if "terms" in cols and card and card.get("task") and any(
            len(r["categories"]) for r in dataset):
        return absa_pairs_corpus(dataset, card, name, seed)
    words = search_corpus(dataset)
    held = split_sentences(len(words), seed=seed)
    return FeatureCorpus(name, list(words.texts), list(words.pairs), list(range(len(words))),
                         [words], held, notes=list(words.notes))


def concat(corpora, name: str) -> FeatureCorpus:
    """One corpus of several (each keeps its own split and labels; inputs without a gold
    class get -1; the first corpus's token cap and class names hold)."""
    first = corpora[0]
    words, part, own = [], [], []
    for c in corpora:
        base = len(words)
        words += c.words
        part += [base + (c.part[i] if c.part else 0) for i in range(len(c))]
        own += c.own_labels or [{}] * len(c)
    classes = None
    if first.classes is not None:
        classes = np.concatenate([c.classes if c.classes is not None
                                  else np.full(len(c), -1, np.int64) for c in corpora])
    return FeatureCorpus(
        name, [t for c in corpora for t in c.texts], [p for c in corpora for p in c.pairs],
        [s for c in corpora for s in c.source], words,
        np.concatenate([c.heldout for c in corpora]), own, classes, first.class_names,
        first.max_length, [n for c in corpora for n in c.notes], part)
