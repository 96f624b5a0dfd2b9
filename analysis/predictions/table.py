"""The table of every row (docs/METHODS.md, "Predictions"): a pandas frame built once per result,
filtered and ordered without answering again (10,000 rows in milliseconds), and the filter
as plain strings for a link.

Orders: ``errors`` (wrong answers first, the most confidently wrong first, then the right
ones least sure first), ``disagreements`` (with a second model: the rows the two answer
differently first, then as ``errors``), or any column, up or down.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields

import numpy as np
import pandas as pd

OUTCOMES = ("all", "wrong", "right", "disagree", "agree")
ORDERS = ("errors", "disagreements")
TEXT_COLUMNS = ("text", "pair", "review")


@dataclass(frozen=True)
class Filter:
    """Which rows the table shows: a gold label, a prediction (either model's with
    ``prediction_b``), right or wrong (or, with two models, where they disagree), a word the
    text contains, a range of lengths in tokens, an aspect category (ABSA)."""

    label: str = ""
    prediction: str = ""
    prediction_b: str = ""
    outcome: str = "all"
    contains: str = ""
    min_tokens: int = 0
    max_tokens: int = 0  # 0: no upper bound
    aspect: str = ""

    @property
    def active(self) -> bool:
        return self != Filter()

    def to_params(self, prefix: str) -> dict[str, str]:
        """The filter's non-default fields as URL parameters ``{prefix}{field}``."""
        default = Filter()
        return {f"{prefix}{k}": str(v) for k, v in asdict(self).items()
                if v != getattr(default, k)}

    @classmethod
    def from_params(cls, params, prefix: str) -> "Filter":
        """A filter from URL parameters (unknown or malformed values are ignored)."""
        values = {}
        for f in fields(cls):
            raw = params.get(f"{prefix}{f.name}")
            if raw is None:
                continue
            raw = str(raw)[:200]
            if f.type in ("int", int):
                if raw.strip().isdigit():
                    values[f.name] = int(raw.strip())
            elif f.name == "outcome":
                if raw in OUTCOMES:
                    values[f.name] = raw
            else:
                values[f.name] = raw
        return cls(**values)


def frame(result) -> pd.DataFrame:
    """One row per example: ``row`` (its index in the data), the texts (ABSA: ``review`` and
    ``aspect`` too), ``gold``, ``prediction``, ``confidence`` (the predicted class's
    probability), ``loss``, ``right``, ``tokens``; with a second model ``prediction_b``,
    ``confidence_b``, ``loss_b``, ``right_b`` and ``agree``."""
    classes = np.asarray(result.classes, dtype=object)
    pred = result.predictions
    cols = {"row": np.arange(result.n), "text": result.texts, "pair": result.pairs}
    if result.absa:
        cols.update(review=result.reviews, aspect=result.categories)
    cols.update(gold=classes[result.gold], prediction=classes[pred],
                confidence=result.scores.max(1), loss=result.losses, right=pred == result.gold,
                tokens=result.tokens)
    if result.scores_b is not None:
        pb = result.predictions_b
        cols.update(prediction_b=classes[pb], confidence_b=result.scores_b.max(1),
                    loss_b=result.losses_b, right_b=pb == result.gold, agree=pb == pred)
    df = pd.DataFrame(cols)
    for c in ("gold", "prediction", "prediction_b", "aspect"):
        if c in df:
            df[c] = df[c].astype("category")
    return df


def word_pattern(word: str) -> str:
    """A case-insensitive regular expression for ``word`` (or a phrase) as whole words."""
    word = " ".join(word.split())
    return rf"(?<!\w){re.escape(word)}(?!\w)"


def mask(df: pd.DataFrame, f: Filter) -> np.ndarray:
    """Bool [len(df)]: the rows ``f`` keeps."""
    keep = np.ones(len(df), dtype=bool)
    if f.label:
        keep &= (df["gold"] == f.label).to_numpy()
    if f.prediction:
        keep &= (df["prediction"] == f.prediction).to_numpy()
    if f.prediction_b and "prediction_b" in df:
        keep &= (df["prediction_b"] == f.prediction_b).to_numpy()
    if f.outcome in ("wrong", "right"):
        keep &= df["right"].to_numpy() == (f.outcome == "right")
    elif f.outcome in ("disagree", "agree") and "agree" in df:
        keep &= df["agree"].to_numpy() == (f.outcome == "agree")
    if f.contains.strip():
        pattern = word_pattern(f.contains)
        hit = np.zeros(len(df), dtype=bool)
        for c in TEXT_COLUMNS:
            if c in df:
                hit |= df[c].fillna("").str.contains(pattern, case=False, regex=True) \
                    .to_numpy()
        keep &= hit
    if f.min_tokens:
        keep &= df["tokens"].to_numpy() >= f.min_tokens
    if f.max_tokens:
        keep &= df["tokens"].to_numpy() <= f.max_tokens
    if f.aspect and "aspect" in df:
        keep &= (df["aspect"] == f.aspect).to_numpy()
    return keep


def apply(df: pd.DataFrame, f: Filter) -> pd.DataFrame:
    """The rows of ``df`` that ``f`` keeps (a view in the same order)."""
    return df[mask(df, f)] if f.active else df


def order(df: pd.DataFrame, by: str = "errors", descending: bool = True) -> pd.DataFrame:
    """``df`` in the order ``by`` (:data:`ORDERS` or a column; ``descending`` for a column):
    ties keep the data's order."""
    if by == "errors" or (by == "disagreements" and "agree" not in df):
        keys, ascending = ["right", "loss", "row"], [True, False, True]
    elif by == "disagreements":
        keys, ascending = ["agree", "right", "loss", "row"], [True, True, False, True]
    elif by in df:
        keys, ascending = [by, "row"], [not descending, True]
    else:
        raise ValueError(f"Unknown order {by!r}.")
    return df.sort_values(keys, ascending=ascending, kind="mergesort")


def view(df: pd.DataFrame, f: Filter, by: str = "errors", descending: bool = True,
         limit: int | None = None) -> pd.DataFrame:
    """Filtered, then ordered, then the first ``limit`` rows."""
    out = order(apply(df, f), by, descending)
    return out.head(limit) if limit is not None else out
