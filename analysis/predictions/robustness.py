"""Robustness over the set (docs/METHODS.md, "Predictions"): for every row, one generated
counterfactual of each kind, the classifier's answer to it, and how often the answer flips,
overall and per slice, with bootstrap 95% intervals over the units.

Kinds (the suggestions of the Causal patching page, :mod:`analysis.patching.counterfactuals`,
where they exist, so that an ABSA flip opens there with the same pair pinned):

- ``aspect``: the review asked about another aspect category (the first of Causal
  patching's, a category whose gold label differs first);
- ``opinion``: an annotated opinion word replaced by its opposite (Causal patching's first);
- ``swap``: the first word of the text found in the bundled list of opposites
  (:data:`analysis.patching.counterfactuals.OPPOSITES`) replaced by its opposite: any data.

The ABSA kinds keep the input's token count (patching copies position by position); a row with
no counterfactual of a kind is left out of that kind's rates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from analysis.patching.counterfactuals import OPPOSITES, Suggestion, opinion_pool, suggest
from analysis.predictions.data import Labelled
from analysis.predictions.metrics import Resamples, rates
from analysis.predictions.predict import BATCH_SIZE, predict_inputs

KINDS = ("aspect", "opinion", "swap")
KIND_NAMES = {"aspect": "another aspect asked", "opinion": "the opposite opinion word",
              "swap": "a word swapped for its opposite"}
WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


def _cased(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def word_swaps(text: str, limit: int = 3) -> list[tuple[str, str]]:
    """(new text, note) for up to ``limit`` words of ``text`` found in the list of opposites,
    each replaced by its opposite (its case kept), in the order they occur."""
    out = []
    for m in WORD.finditer(text or ""):
        word = m.group(0)
        new = OPPOSITES.get(word.lower())
        if new is None:
            continue
        out.append((text[:m.start()] + _cased(new, word) + text[m.end():],
                    f"'{word}' replaced by '{new}'"))
        if len(out) >= limit:
            break
    return out


def kinds_for(data: Labelled) -> tuple[str, ...]:
    """The kinds a data set can have: all three for ABSA (M tasks), the word swap otherwise;
    none for the ABSA B tasks (five inputs per answer)."""
    if data.per_row != 1:
        return ()
    return KINDS if data.absa else ("swap",)


def row_suggestions(loaded, data: Labelled, k: int, sentences=None, pool=None,
                    kinds=None) -> dict[str, list[Suggestion]]:
    """Kind -> counterfactuals of row ``k`` (``sentences``: ``data.ev.sentences`` as a list,
    ``pool``: its opinion pool, both made once by the caller for many rows)."""
    kinds = kinds_for(data) if kinds is None else kinds
    text, pair = data.texts[k], data.pairs[k]
    out: dict[str, list[Suggestion]] = {}
    if data.absa and ("aspect" in kinds or "opinion" in kinds):
        sentences = sentences if sentences is not None else data.ev.sentences.to_list()
        pool = pool if pool is not None else opinion_pool(sentences)
        ex = data.ev.scorer.examples[k]
        out.update(suggest(loaded.tokenizer, sentences[int(data.sentence[k])], ex,
                           data.ev.task, pool, data.max_length,
                           kinds=[x for x in kinds if x != "swap"]))
    if "swap" in kinds:
        review_first = not (data.absa and data.ev.scorer.examples[k].aux_first)
        own = text if review_first else (pair or "")
        out["swap"] = [Suggestion("swap", new if review_first else text,
                                  pair if review_first else new, note)
                       for new, note in word_swaps(own)]
    return out


@dataclass
class Robustness:
    """Per kind: the rows with a counterfactual, the counterfactual, its answer and whether it
    flipped; the flip rate over the set and per slice."""

    kinds: tuple[str, ...]
    rows: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> row indices
    counterfactuals: dict[str, list[tuple[str, str | None, str]]] = field(default_factory=dict)
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> [m, C]
    flipped: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> bool [m]
    rates: dict[str, dict[str, dict]] = field(default_factory=dict)  # kind -> slice -> rate

    def flip_rows(self, kind: str) -> list[int]:
        return [int(r) for r, f in zip(self.rows[kind], self.flipped[kind]) if f]


def robustness(loaded, data: Labelled, predictions: np.ndarray, slices: dict,
               boot: Resamples | None = None, *, kinds=None, batch_size: int = BATCH_SIZE,
               progress: Callable[[float, str], None] | None = None) -> Robustness:
    """Every row's first counterfactual of each kind, answered in batches; the flip rate of
    each kind over ``slices`` (key -> (name, mask), :func:`analysis.predictions.slices.
    slices`), its interval over ``boot`` (default: 1000 resamples of the data's units)."""
    boot = boot if boot is not None else Resamples(data.units)
    kinds = kinds_for(data) if kinds is None else tuple(k for k in kinds
                                                        if k in kinds_for(data))
    say = progress or (lambda f, t: None)
    out = Robustness(kinds)
    if not kinds:
        return out
    sentences = data.ev.sentences.to_list() if data.absa else None
    pool = opinion_pool(sentences) if data.absa else None
    found: dict[str, list] = {k: [] for k in kinds}
    for k in range(data.n):
        for kind, options in row_suggestions(loaded, data, k, sentences, pool, kinds).items():
            if options:
                found[kind].append((k, options[0]))
        if k % 200 == 0:
            say(0.5 * k / data.n, f"counterfactuals ({k}/{data.n})")
    for j, kind in enumerate(kinds):
        say(0.5 + 0.5 * j / len(kinds), f"answering the counterfactuals: {KIND_NAMES[kind]}")
        rows = np.array([k for k, _ in found[kind]], dtype=np.int64)
        cf = [(s.text, s.pair, s.note) for _, s in found[kind]]
        scores = predict_inputs(loaded, data, [t for t, _, _ in cf], [p for _, p, _ in cf],
                                batch_size)
        flipped = scores.argmax(1) != np.asarray(predictions)[rows] if len(rows) \
            else np.zeros(0, dtype=bool)
        out.rows[kind], out.counterfactuals[kind] = rows, cf
        out.scores[kind], out.flipped[kind] = scores, flipped
        hits = np.zeros(data.n, dtype=bool)
        hits[rows] = flipped
        has = np.zeros(data.n, dtype=bool)
        has[rows] = True
        out.rates[kind] = rates(hits, has, boot, {k: m for k, (_, m) in slices.items()})
    say(1.0, "done")
    return out
