"""Edit and compare (docs/METHODS.md, "Predictions"): one row and an edited copy of it (typed,
or a suggested counterfactual of :mod:`analysis.predictions.robustness`), the classifier's two
answers, the two attributions by one method of the Attribution page (its one call,
:func:`analysis.attribution.attribute`) and the words that changed, marked on both sides."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from analysis.attribution import attribute, check_methods
from analysis.errors import InputError
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
    changed: list[bool]  # per word of the attribution's words

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


def _words(text: str | None) -> list[str]:
    return (text or "").split()


def changed_words(before: str | None, after: str | None) -> tuple[set[int], set[int]]:
    """(indices of the words of ``before`` that the edit removed or replaced, indices of the
    words of ``after`` it inserted or changed): a word-level diff (difflib) of the two texts,
    words split at white space."""
    a, b = _words(before), _words(after)
    gone, new = set(), set()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            gone.update(range(i1, i2))
            new.update(range(j1, j2))
    return gone, new


def _marks(attr, segment_words: list[list[str]], changed: list[set[int]]) -> list[bool]:
    """Per word of the attribution, whether it lies in a changed whitespace word: the
    attribution's words are matched in order to the texts' whitespace words by their
    characters (a whitespace word "great," is two words of the encoding, "great" and ",")."""
    marks = [False] * len(attr.words)
    flat = [(s, i, w) for s, words in enumerate(segment_words) for i, w in enumerate(words)]
    pos, used = 0, ""
    special = {int(attr.word_ids[t]) for t in range(len(attr.tokens)) if attr.special[t]}
    for k, word in enumerate(attr.words):
        if k in special or pos >= len(flat):
            continue
        s, i, w = flat[pos]
        marks[k] = i in changed[s]
        used += word
        if len(used.replace(" ", "")) >= len(w.replace(" ", "")):
            pos, used = pos + 1, ""
    return marks


def compare_edit(loaded, data: Labelled, text: str, pair: str | None, new_text: str,
                 new_pair: str | None, method: str = DEFAULT_METHOD) -> Edit:
    """Both inputs answered as the table's rows are (:func:`analysis.predictions.predict.
    predict_inputs`) and attributed by ``method`` (one of the Attribution page's)."""
    method = check_methods([method], loaded)[0]
    if not (new_text or "").strip():
        raise InputError("The edited text is empty: type a sentence.")
    probs = predict_inputs(loaded, data, [text, new_text], [pair, new_pair])
    sides = []
    gone_a, new_a = changed_words(text, new_text)
    gone_b, new_b = changed_words(pair, new_pair)
    for (t, p, c), pr in zip(((text, pair, [gone_a, gone_b]), (new_text, new_pair,
                                                               [new_a, new_b])), probs):
        attr = attribute(loaded, t, p, methods=[method])
        sides.append(Side(t, p, pr, attr, _marks(attr, [_words(t), _words(p)], c)))
    return Edit(method, data.classes, *sides)
