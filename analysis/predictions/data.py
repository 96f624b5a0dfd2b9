"""The labelled examples a classifier answers, one row per answer (docs/METHODS.md, "Predictions").

The data is read and encoded once by Head importance's readers (:mod:`analysis.importance.
evalset`: ABSA sentences through :mod:`analysis.absa.readers`, a labelled .csv/.jsonl through
:mod:`analysis.core.corpus`), or comes from a Hugging Face dataset with a label column
(:func:`analysis.core.corpus.read_hf_dataset`). A row is:

- ABSA, the M tasks (QA-M, NLI-M): one classifier pair (the review asked about one aspect
  category), its gold label among the five of :data:`analysis.absa.tasks.LABELS`;
- ABSA, the B tasks (QA-B, NLI-B): one (review, category), whose answer is the 5-way score of
  its five yes/no rows (:func:`analysis.absa.tasks.pair_scores`);
- any other labelled data: one example, its gold label among the classifier's labels.

``units`` are what the bootstrap resamples: the review sentence for ABSA (its five answers are
not independent), each example otherwise.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from analysis.absa.readers import load_sample
from analysis.absa.tasks import ASPECT_WORDS, LABELS, is_binary
from analysis.core.corpus import read_hf_dataset
from analysis.core.errors import DataError
from analysis.importance.evalset import (EvalSet, absa_eval_set, check_classifier,
                                         labelled_eval_set, load_eval_set)

SAMPLE = "sample"  # the bundled ABSA sample (its held-out sentences for a checkpoint's card)
HF_PREFIX = "hf:"  # --data hf:NAME: a Hugging Face dataset


@dataclass
class Labelled:
    """The rows (see the module docstring) with what the table, the slices and the
    counterfactuals need; ``ev`` holds the classifier inputs, encoded once."""

    ev: EvalSet
    classes: tuple[str, ...]
    texts: list[str]  # the classifier's first text (ABSA: as ordered by the task)
    pairs: list[str | None]
    gold: np.ndarray  # [n] index into classes
    units: np.ndarray  # [n] bootstrap unit
    tokens: np.ndarray  # [n] tokens of the row's input (B tasks: the longest of its five)
    reviews: list[str] | None = None  # ABSA: the review sentence of the row
    categories: list[str] | None = None  # ABSA: the aspect category asked about
    sentence: np.ndarray | None = None  # ABSA: index of the review in ev.sentences
    notes: list[str] = field(default_factory=list)
    max_length: int = 512  # the inputs' token cap (an ABSA checkpoint's card's)

    @property
    def n(self) -> int:
        return len(self.gold)

    @property
    def absa(self) -> bool:
        return self.ev.task is not None

    @property
    def per_row(self) -> int:
        """Classifier inputs per row (5 for the B tasks, else 1)."""
        return len(LABELS) if self.absa and is_binary(self.ev.task) else 1

    @property
    def description(self) -> str:
        return self.ev.description

    def fingerprint(self) -> str:
        """A short hash of the rows' inputs and gold labels (a cache key with the weights)."""
        h = hashlib.sha1()
        for k in range(self.n):
            h.update(f"{self.texts[k]}\x1f{self.pairs[k]}\x1f{self.classes[self.gold[k]]}"
                     .encode("utf-8"))
            if self.categories is not None:
                h.update(self.categories[k].encode("utf-8"))
            h.update(b"\x1e")
        return h.hexdigest()[:16]


def class_names(loaded) -> tuple[str, ...]:
    """The classifier's label names in index order (``LABEL_i`` where it names none)."""
    cfg = loaded.model.config
    id2label = getattr(cfg, "id2label", None) or {}
    return tuple(str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}")))
                 for i in range(int(cfg.num_labels)))


def _lengths(ev: EvalSet, per: int) -> np.ndarray:
    n = np.asarray(ev.lengths, dtype=np.int64)
    return n.reshape(-1, per).max(1) if per > 1 else n


def card_max_length(loaded, card, absa: bool = True) -> int:
    """The token cap of the inputs: for ABSA pairs the card's (128 without one, as
    :func:`analysis.importance.evalset.absa_eval_set` reads it), else the model's."""
    if not absa:
        return int(loaded.max_length)
    return int(card.get("max_length", 128)) if card is not None else 128


def from_eval_set(ev: EvalSet, loaded, max_length: int | None = None) -> Labelled:
    """The rows of an encoded evaluation set of :mod:`analysis.importance.evalset`
    (``max_length``: its token cap, :func:`card_max_length`)."""
    max_length = int(max_length or (128 if ev.task is not None else loaded.max_length))
    if ev.task is None:
        return Labelled(ev, class_names(loaded), [t for t, _ in ev.texts],
                        [p for _, p in ev.texts], np.asarray(ev.labels, dtype=np.int64),
                        np.asarray(ev.units, dtype=np.int64), _lengths(ev, 1),
                        notes=list(ev.notes), max_length=max_length)
    examples = ev.scorer.examples
    per = len(LABELS) if is_binary(ev.task) else 1
    heads = examples[::per]
    reviews = [e.text_b if e.aux_first else e.text_a for e in heads]
    if per > 1:  # one row per (review, category): the review and the aspect word
        texts, pairs = reviews, [ASPECT_WORDS[e.category] for e in heads]
    else:
        texts, pairs = [e.text_a for e in heads], [e.text_b for e in heads]
    sentence = np.array([e.sentence for e in heads], dtype=np.int64)
    return Labelled(ev, LABELS, texts, pairs,
                    np.array([LABELS.index(e.gold) for e in heads], dtype=np.int64), sentence,
                    _lengths(ev, per), reviews, [e.category for e in heads], sentence,
                    list(ev.notes), max_length)


def heldout(loaded, card) -> Labelled:
    """An ABSA checkpoint's held-out sentences of the bundled sample (its card names them),
    as Head importance and Causal patching read them."""
    check_classifier(loaded)
    if card is None:
        raise DataError("The bundled sample is labelled by aspect: it needs a checkpoint "
                        "fine-tuned on it here (with its card); for this model upload a "
                        "labelled file.")
    return from_eval_set(absa_eval_set(loaded, card, load_sample()), loaded,
                         card_max_length(loaded, card))


def hf_labelled(loaded, name: str, split: str = "train", column: str = "text",
                pair_column: str | None = None, label_column: str = "label",
                max_examples: int | None = None, max_chars: int | None = None,
                local_ok: bool = True) -> Labelled:
    """A Hugging Face dataset with a label column (an id in the local cache or reachable
    online; one plain line when it is neither)."""
    check_classifier(loaded)
    ds = read_hf_dataset(name, split, column, pair_column, max_examples=max_examples,
                         max_chars=max_chars, local_ok=local_ok, label_column=label_column)
    return from_eval_set(labelled_eval_set(loaded, ds, list(ds["label"]), max_examples),
                         loaded)


def load_labelled(loaded, card, source, *, task: str | None = None,
                  max_examples: int | None = None, text_column: str = "text",
                  pair_column: str | None = None, label_column: str = "label",
                  name: str | None = None, max_bytes: int | None = None,
                  split: str = "train") -> Labelled:
    """The rows of ``source``: ``sample`` (an ABSA checkpoint's held-out sentences), ``hf:NAME``
    (a Hugging Face dataset, ``split``), a file path or uploaded bytes named ``name`` (ABSA
    data for an ABSA checkpoint or with ``task``, else a labelled .csv/.jsonl), read by
    :func:`analysis.importance.evalset.load_eval_set`."""
    if isinstance(source, str) and source.startswith(HF_PREFIX):
        return hf_labelled(loaded, source[len(HF_PREFIX):], split, text_column, pair_column,
                           label_column, max_examples)
    ev = load_eval_set(loaded, card, source, task=task, max_examples=max_examples,
                       text_column=text_column, pair_column=pair_column,
                       label_column=label_column, name=name, max_bytes=max_bytes)
    return from_eval_set(ev, loaded, card_max_length(loaded, card, ev.task is not None))
