"""A plain labelled corpus (text, optional text_pair, a sentence-level ``label``: the .csv /
.jsonl files every study reads through :mod:`analysis.core.corpus`): every word's vector (the mean
of its pieces, both segments, [CLS]/[SEP] left out) at every layer, each word carrying its
sentence's label (docs/METHODS.md section 13, "A labelled corpus").

The label colours of the scatter are capped: the :data:`MAX_LABELS` labels of most sentences
(ties by name) keep a colour of their own, every other label falls into :data:`OTHER`; the
order (and so each label's colour) depends only on the corpus, never on the sample drawn.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

import numpy as np

from analysis.core.encoding import encode_dataset
from analysis.core.errors import DataError
from analysis.representations.states import WordCorpus, word_layers

MAX_LABELS = 10
OTHER = "other labels"
NONE = "no label"
NO_LABEL = ("The corpus has no 'label' column (or every label is blank), so its words cannot "
            "be coloured or probed by label; give a .csv or .jsonl file with a 'label' column.")


def label_of(value) -> str:
    """A sentence's label as text; '_' for a missing or blank one (left out of the probe)."""
    text = "" if value is None else str(value).strip()
    return text or "_"


def has_labels(dataset) -> bool:
    cols = set(getattr(dataset, "column_names", None) or ())
    return "label" in cols and any(label_of(v) != "_" for v in dataset["label"])


def label_legend(sentence_labels: Sequence[str], cap: int = MAX_LABELS) -> list[str]:
    """The labels that keep a colour of their own: the ``cap`` most frequent over sentences
    (ties by name), then :data:`OTHER` where more labels exist, then :data:`NONE` where some
    sentence has no label."""
    counts = Counter(label_of(v) for v in sentence_labels)
    blank = counts.pop("_", 0)
    order = sorted(counts, key=lambda k: (-counts[k], k))
    return order[:cap] + ([OTHER] if len(order) > cap else []) + ([NONE] if blank else [])


def capped_labels(labels: Sequence[str], legend: Sequence[str]) -> list[str]:
    """Each label as the scatter colours it: its own, :data:`OTHER` beyond the cap, or
    :data:`NONE` for a sentence without one."""
    own = set(legend) - {OTHER, NONE}
    return [NONE if v == "_" else v if v in own else OTHER for v in labels]


def labelled_words(loaded, dataset, max_sentences: int | None = None, batch_size: int = 32,
                   progress: Callable[[int, int], None] | None = None):
    """:class:`analysis.representations.states.WordCorpus` of a labelled Dataset: word vectors
    of every example (one batched pass), ``labels["label"]`` its sentence's label per word."""
    if "label" not in (dataset.column_names or ()):
        raise DataError(NO_LABEL)
    corpus = encode_dataset(loaded.tokenizer, dataset, max_length=loaded.max_length,
                            max_examples=max_sentences)
    labels = [label_of(v) for v in dataset["label"]]
    encs = corpus.encodings
    real = [~np.asarray(enc.special, bool) for enc in encs]
    word_lists = [list(dict.fromkeys(int(w) for w in np.asarray(enc.word_ids)[r]))
                  for enc, r in zip(encs, real)]
    layers = word_layers(loaded, encs, word_lists, batch_size, progress, real=real)
    forms, groups, places, per_word, sentences = [], [], [], [], []
    for i, enc in enumerate(encs):
        row = corpus.rows[i]
        words = [enc.words[w] for w in word_lists[i]]
        sentences.append(words + [f"(label: {labels[row]})"])
        for p, w in enumerate(words):
            forms.append(w)
            groups.append(row)
            places.append((i, p))
            per_word.append(labels[row])
    notes = ([f"Skipped {corpus.skipped} example(s) with no token the model can read."]
             if corpus.skipped else [])
    return WordCorpus(layers, forms, np.asarray(groups), places, sentences,
                      {"label": per_word}, "labelled", len(encs), notes,
                      sentence_labels=[labels[r] for r in corpus.rows])


def review_sentiment(row) -> str:
    """A review's sentence-level label: the polarity of its categories where they agree
    (positive, negative, neutral, conflict), "mixed" where they differ, '' without any."""
    polarities = {c["polarity"] for c in row.get("categories") or () if c.get("polarity")}
    if not polarities:
        return ""
    return polarities.pop() if len(polarities) == 1 else "mixed"


def sentiment_corpus(absa):
    """A labelled corpus from ABSA data: every review with :func:`review_sentiment` as its
    label (the bundled labelled corpus of the page)."""
    # lazy: imported when used: datasets (heavy)
    import datasets

    return datasets.Dataset.from_dict({
        "text": list(absa["text"]), "text_pair": [None] * len(absa),
        "label": [review_sentiment(r) for r in absa]})
