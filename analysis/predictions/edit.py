"""Edit and compare (docs/METHODS.md, "Predictions"): one row and an edited copy of it (typed,
or a suggested counterfactual of :mod:`analysis.predictions.robustness`), the classifier's two
answers, the two attributions by one method of the Attribution page (its one call,
:func:`analysis.attribution.attribute`) and the words that changed, marked on both sides (a
word-level diff of the two inputs' words as the attribution splits them)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from analysis.attribution import attribute, check_methods
from analysis.core.errors import InputError
from analysis.predictions.data import Labelled
from analysis.predictions.predict import predict_inputs

DEFAULT_METHOD = "grad_input"


@dataclass
class Side:
    """One input: its class probabilities (as the table's rows are answered), the
    attribution (tokens, words, scores) and which of its words changed."""

    text: str
    pair: str | None
    probabilities: np.ndarray  # [C]
    attribution: object  # analysis.attribution.run.Attribution
    changed: list[bool]  # per word of the attribution (a word-level diff of the two inputs)

    @property
    def prediction(self) -> int:
        return int(np.argmax(self.probabilities))


@dataclass
class Edit:
    method: str
    classes: tuple[str, ...]
    before: Side
    after: Side

    @property
    def flipped(self) -> bool:
        return self.before.prediction != self.after.prediction


def changed_words(before, after) -> tuple[set[int], set[int]]:
    """(indices of the words of ``before`` that the edit removed or replaced, indices of the
    words of ``after`` it inserted or changed): a diff (difflib) of two word lists."""
    gone, new = set(), set()
    matcher = difflib.SequenceMatcher(a=list(before or []), b=list(after or []), autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            gone.update(range(i1, i2))
            new.update(range(j1, j2))
    return gone, new


def compare_edit(loaded, data: Labelled, text: str, pair: str | None, new_text: str,
                 new_pair: str | None, method: str = DEFAULT_METHOD) -> Edit:
    """Both inputs answered as the table's rows are (:func:`analysis.predictions.predict.
    predict_inputs`) and attributed by ``method`` (one of the Attribution page's)."""
    method = check_methods([method], loaded)[0]
    if not (new_text or "").strip():
        raise InputError("The edited text is empty: type a sentence.")
    probs = predict_inputs(loaded, data, [text, new_text], [pair, new_pair])
    before = attribute(loaded, text, pair, methods=[method])
    after = attribute(loaded, new_text, new_pair, methods=[method])
    gone, new = changed_words([w.lower() for w in before.words],
                              [w.lower() for w in after.words])
    return Edit(method, data.classes,
                Side(text, pair, probs[0], before, [k in gone for k in range(len(before.words))]),
                Side(new_text, new_pair, probs[1], after,
                     [k in new for k in range(len(after.words))]))
