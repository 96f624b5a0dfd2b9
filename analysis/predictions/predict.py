"""The classifier's answer to every row: one forward per length-sorted batch (docs/METHODS.md,
"Predictions").

:func:`input_logits` runs the encoded inputs through :func:`analysis.core.forward.forward` (no
attention maps) in the batches of :func:`analysis.core.batching.batches`, longest first;
:func:`answers` turns the logits into each row's class scores and loss (for the ABSA B tasks,
the 5-way scores of a (review, category)'s five yes/no rows,
:func:`analysis.absa.tasks.pair_scores`, and the loss ``-log`` of the gold label's score).
:func:`second_rows` reads the same rows for a second classifier, so that two models are
compared on exactly the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from analysis.absa.tasks import is_binary, pair_scores
from analysis.core.batching import batches, pad_features
from analysis.core.corpus.table import make_dataset
from analysis.core.encoding import clean_text
from analysis.core.errors import DataError, InputError
from analysis.core.forward import forward
from analysis.importance.evalset import absa_eval_set, check_classifier, labelled_eval_set
from analysis.importance.scoring import example_losses, softmax
from analysis.predictions.data import Labelled, class_names, from_eval_set

BATCH_SIZE = 64


@dataclass
class Answers:
    """Class scores [n, C] (probabilities; ABSA B tasks: the 5-way scores) and the loss [n]."""

    scores: np.ndarray
    losses: np.ndarray

    @property
    def predictions(self) -> np.ndarray:
        return self.scores.argmax(1)

    @property
    def confidence(self) -> np.ndarray:
        return self.scores.max(1)


def input_logits(loaded, features: dict, lengths, batch_size: int = BATCH_SIZE,
                 progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Logits [n, C] (float32) of the classifier on encoded inputs (tokenizer output: one list
    per input name, one entry per input)."""
    lengths = [int(x) for x in lengths]
    out = np.zeros((len(lengths), int(loaded.model.config.num_labels)), dtype=np.float32)
    done = 0
    for idx in batches(lengths, batch_size):
        inputs = pad_features(loaded.tokenizer, features, idx)
        out[idx] = forward(loaded.model, inputs=inputs, attentions=False).output.logits \
            .float().numpy()
        done += len(idx)
        if progress is not None:
            progress(done, len(lengths))
    return out


def answers(data: Labelled, logits: np.ndarray) -> Answers:
    """Each row's class scores and loss from the logits of its inputs."""
    logits = np.asarray(logits)
    if data.absa and is_binary(data.ev.task):
        _, scores = pair_scores(data.ev.scorer.examples, softmax(logits), data.ev.task)
        picked = scores[np.arange(data.n), data.gold]
        return Answers(scores, -np.log(np.maximum(picked, np.finfo(float).tiny)))
    return Answers(softmax(logits), example_losses(logits, data.gold))


def predict(loaded, data: Labelled, batch_size: int = BATCH_SIZE,
            progress: Callable[[int, int], None] | None = None) -> Answers:
    """The classifier's :class:`Answers` on every row of ``data``."""
    return answers(data, input_logits(loaded, data.ev.features, data.ev.lengths, batch_size,
                                      progress))


def encode_inputs(loaded, data: Labelled, texts, pairs) -> tuple[dict, list[int]]:
    """(features, lengths) of new (text, pair) inputs encoded as ``data``'s were: an ABSA
    pair with the tokenizer's truncation at the checkpoint's length; any other text cleaned as
    :func:`analysis.core.encoding.encode` cleans it (invisible characters out, NFC) and
    tokenised with the same truncation at the same length, in one call per kind of input
    (with or without a pair): :func:`analysis.importance.evalset.labelled_eval_set`'s ids (a
    test checks it) without its per-example work."""
    texts, pairs = list(texts), list(pairs)
    if data.absa:
        enc = loaded.tokenizer(texts, [p or "" for p in pairs], truncation=True,
                               max_length=data.max_length)
        features = {k: list(enc[k]) for k in enc.keys()}
        return features, [len(x) for x in features["input_ids"]]
    texts = [clean_text(t, "The text")[0] for t in texts]
    pairs = [None if p is None or not str(p).strip() else clean_text(p, "The second text")[0]
             for p in pairs]
    features: dict[str, list] = {}
    for with_pair in (False, True):
        idx = [k for k, p in enumerate(pairs) if (p is not None) == with_pair]
        if not idx:
            continue
        enc = loaded.tokenizer([texts[k] for k in idx], [pairs[k] for k in idx] if with_pair
                               else None, truncation=True, max_length=data.max_length)
        for name in enc.keys():
            column = features.setdefault(name, [None] * len(texts))
            for k, value in zip(idx, enc[name]):
                column[k] = list(value)
    keep = set(getattr(loaded.tokenizer, "model_input_names", [])) | {"input_ids",
                                                                     "attention_mask"}
    features = {k: v for k, v in features.items()
                if k in keep and all(x is not None for x in v)}
    return features, [len(x) for x in features["input_ids"]]


def predict_inputs(loaded, data: Labelled, texts, pairs,
                   batch_size: int = BATCH_SIZE) -> np.ndarray:
    """Class probabilities [m, C] of new inputs (one classifier input each: not for the ABSA
    B tasks, whose answer takes five)."""
    if data.per_row != 1:
        raise InputError("The QA-B and NLI-B tasks answer from five inputs per aspect: edit "
                         "and counterfactuals need a checkpoint of QA-M or NLI-M.")
    if not len(texts):
        return np.zeros((0, len(data.classes)))
    features, lengths = encode_inputs(loaded, data, texts, pairs)
    return softmax(input_logits(loaded, features, lengths, batch_size))


def second_rows(loaded_b, card_b, data: Labelled) -> tuple[Labelled, np.ndarray]:
    """(the rows of ``data`` for a second classifier, the column of its scores for each of
    ``data``'s classes): ABSA data as pairs of that checkpoint's own task and pair order over
    the same review sentences (all of them, held out by the first model's card), any other
    data as the same texts and gold labels, its classes matched by name."""
    check_classifier(loaded_b)
    if data.absa:
        if card_b is None:
            raise InputError(f"{loaded_b.name} has no ABSA card, so it cannot answer the "
                             "aspect questions of this data: compare two ABSA checkpoints.")
        card = {**card_b, "heldout_ids": []}  # the same sentences, not its own held-out ones
        rows = from_eval_set(absa_eval_set(loaded_b, card, data.ev.sentences), loaded_b,
                             int(card_b.get("max_length", 128)))
        if [(r, c, g) for r, c, g in zip(rows.reviews, rows.categories, rows.gold)] != \
                [(r, c, g) for r, c, g in zip(data.reviews, data.categories, data.gold)]:
            raise DataError("The two checkpoints read the reviews differently, so their "
                            "answers cannot be compared row by row.")
        return rows, np.arange(len(data.classes))
    names = [c.strip().lower() for c in class_names(loaded_b)]
    missing = [c for c in data.classes if c.strip().lower() not in names]
    if missing:
        raise DataError(f"{loaded_b.name} has no label {missing[0]!r} (its labels: "
                        f"{', '.join(class_names(loaded_b))}): compare two classifiers of the "
                        "same labels.")
    columns = np.array([names.index(c.strip().lower()) for c in data.classes])
    gold = [data.classes[g] for g in data.gold]
    ev = labelled_eval_set(loaded_b, make_dataset(data.texts, data.pairs), gold)
    if ev.n_examples != data.n:
        raise DataError(f"{loaded_b.name}'s tokenizer cannot read every example of the data, "
                        "so the two models' answers cannot be compared row by row.")
    rows = from_eval_set(ev, loaded_b, loaded_b.max_length)
    return replace(rows, classes=data.classes, gold=data.gold.copy()), columns


def predict_second(loaded_b, card_b, data: Labelled, batch_size: int = BATCH_SIZE,
                   progress: Callable[[int, int], None] | None = None) -> Answers:
    """The second classifier's :class:`Answers` on ``data``'s rows, in ``data``'s classes."""
    rows, columns = second_rows(loaded_b, card_b, data)
    got = predict(loaded_b, rows, batch_size, progress)
    return Answers(got.scores[:, columns], got.losses)
