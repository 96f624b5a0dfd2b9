"""The examples faithfulness is measured on: the example checkpoint's held-out ABSA sentences
as the pairs it classifies (its recipe's task and pair order), or any corpus file / Dataset
(text and optional text_pair columns), read through :mod:`analysis.core.corpus`."""

from __future__ import annotations
from analysis.absa.example import RECIPE, split_sample
from analysis.absa.tasks import build_examples
from analysis.core.corpus import corpus_notes, read_corpus

HELDOUT_NAME = "the ABSA sample's held-out sentences (the example checkpoint's test split)"


def heldout_examples(max_examples: int | None = None):
    """(texts, pairs, notes) of the held-out sentences of the example recipe as classifier
    pairs (one per sentence and aspect, in the recipe's pair order), at most ``max_examples``."""
    _, test = split_sample(RECIPE)
    pairs = build_examples(test, RECIPE.task, RECIPE.pair_order)
    if max_examples is not None:
        pairs = pairs[:max_examples]
    notes = [f"Data: {len(pairs)} pairs from {HELDOUT_NAME}."]
    return [p.text_a for p in pairs], [p.text_b for p in pairs], notes


def dataset_examples(dataset, max_examples: int | None = None):
    """(texts, pairs, notes) of a ``datasets.Dataset`` with ``text`` and optional
    ``text_pair``."""
    n = len(dataset) if max_examples is None else min(len(dataset), max_examples)
    part = dataset.select(range(n))
    texts = list(part["text"])
    pairs = list(part["text_pair"]) if "text_pair" in part.column_names else [None] * n
    return texts, pairs, list(corpus_notes(dataset))


def corpus_examples(path, max_examples: int | None = None):
    """(texts, pairs, notes) of a corpus file (.txt .jsonl .csv .xml)."""
    return dataset_examples(read_corpus(path, max_examples=max_examples), max_examples)
