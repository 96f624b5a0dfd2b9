"""The predictions study's result: the rows with both classifiers' answers, the metrics by
slice, the changes, the flips and the counterfactuals' flip rates; its JSON keys are declared
once (:data:`SCHEMA`, an :class:`analysis.core.study.Schema`), written by
:meth:`Result.to_json` (the CLI's file, the page's JSON download, the report, the precomputed
example) and read back by :meth:`Result.from_json`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analysis.core.study import Field, Schema, StudyResult
from analysis.predictions.metrics import row_counts
from analysis.predictions.robustness import KIND_NAMES

SCHEMA = Schema((
    Field("study", "always 'predictions'"),
    Field("model", "the classifier's name"),
    Field("compare", "the second classifier's name (null without --compare)"),
    Field("data", "the rows in words (which sentences or file, how many)"),
    Field("task", "the ABSA task (qa_m, nli_m, qa_b, nli_b), null for other data"),
    Field("classes", "the label names, in the classifier's order"),
    Field("rows", "per example: text, pair, label, prediction, probabilities (per class, 6 "
                  "decimals), loss, tokens, unit (what the bootstrap resamples); ABSA: review, "
                  "aspect, sentence (0-based index of the review among the data's); with "
                  "--compare: prediction_b, probabilities_b, loss_b"),
    Field("metrics", "slice key -> {name, metric -> {value, low, high, n}}: accuracy, macro_f1, "
                     "ABSA's aspect_f1, acc_4way, acc_3way (percent) and loss, with bootstrap "
                     "95% intervals over the units of the slice"),
    Field("metrics_b", "the same for the second classifier (null without --compare)"),
    Field("changes", "slice key -> metric -> {a, b, change, low, high, n}: b minus a with the "
                     "paired bootstrap 95% interval (null without --compare)"),
    Field("flips", "the rows the two classifiers answer differently: row, label, prediction, "
                   "prediction_b, change (fixed / broken / both wrong); null without --compare"),
    Field("confusion", "[gold][predicted] counts of the classifier"),
    Field("robustness", "counterfactual kind -> {name, rows, counterfactuals [[text, pair, "
                        "note]], predictions, flipped, rates: slice key -> {value, low, high, "
                        "n}}; null with --no-robustness"),
    Field("notes", "what the readers skipped or cut"),
    Field("seconds", "the study's time"),
))
KEYS = SCHEMA.names
DIGITS = 6  # probabilities and losses in the JSON


def _nan(x):
    """JSON null back to NaN, walked (an absent part, None at the top, stays None)."""
    return None if x is None else _nans(x)


def _nans(x):
    if isinstance(x, dict):
        return {k: _nans(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_nans(v) for v in x]
    return float("nan") if x is None else x


@dataclass
class Result(StudyResult):
    """The study's result (see the module docstring); its JSON: :data:`SCHEMA`."""

    SCHEMA = SCHEMA

    model: str
    compare: str | None
    data: str
    task: str | None
    classes: tuple[str, ...]
    texts: list[str]
    pairs: list[str | None]
    gold: np.ndarray  # [n]
    tokens: np.ndarray  # [n]
    units: np.ndarray  # [n]
    scores: np.ndarray  # [n, C]
    losses: np.ndarray  # [n]
    metrics: dict
    confusion: np.ndarray
    reviews: list[str] | None = None
    categories: list[str] | None = None
    sentence: np.ndarray | None = None
    scores_b: np.ndarray | None = None
    losses_b: np.ndarray | None = None
    metrics_b: dict | None = None
    changes: dict | None = None
    flips: list[dict] | None = None
    robustness: dict | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def n(self) -> int:
        return len(self.gold)

    @property
    def absa(self) -> bool:
        return self.task is not None

    @property
    def predictions(self) -> np.ndarray:
        return self.scores.argmax(1)

    @property
    def predictions_b(self) -> np.ndarray | None:
        return None if self.scores_b is None else self.scores_b.argmax(1)

    def counts(self, second: bool = False) -> np.ndarray:
        """Per-row counts of :func:`analysis.predictions.metrics.row_counts` (a visitor's own
        slice is measured from them without answering again)."""
        scores, losses = (self.scores_b, self.losses_b) if second else (self.scores,
                                                                         self.losses)
        return row_counts(self.gold, scores, losses, self.absa)

    @classmethod
    def of(cls, data, models, a, b, metrics, metrics_b, changes, flips, robust, conf,
           seconds) -> "Result":
        rob = None
        if robust is not None:
            rob = {}
            for kind in robust.kinds:
                rob[kind] = {"name": KIND_NAMES[kind], "rows": robust.rows[kind],
                             "counterfactuals": robust.counterfactuals[kind],
                             "predictions": robust.scores[kind].argmax(1)
                             if len(robust.rows[kind]) else np.zeros(0, dtype=np.int64),
                             "flipped": robust.flipped[kind], "rates": robust.rates[kind]}
        return cls(models.loaded.name, None if models.compare is None else models.compare.name,
                   data.description, data.ev.task, tuple(data.classes), list(data.texts),
                   list(data.pairs), np.asarray(data.gold), np.asarray(data.tokens),
                   np.asarray(data.units), a.scores, a.losses, metrics, conf,
                   data.reviews, data.categories, data.sentence,
                   None if b is None else b.scores, None if b is None else b.losses,
                   metrics_b, changes, flips, rob, list(data.notes), float(seconds))

    def rows_json(self) -> list[dict]:
        out = []
        pred, pred_b = self.predictions, self.predictions_b
        for k in range(self.n):
            row = {"text": self.texts[k], "pair": self.pairs[k],
                   "label": self.classes[int(self.gold[k])],
                   "prediction": self.classes[int(pred[k])],
                   "probabilities": np.round(self.scores[k], DIGITS),
                   "loss": round(float(self.losses[k]), DIGITS),
                   "tokens": int(self.tokens[k]), "unit": int(self.units[k])}
            if self.absa:
                row.update(review=self.reviews[k], aspect=self.categories[k],
                           sentence=int(self.sentence[k]))
            if pred_b is not None:
                row.update(prediction_b=self.classes[int(pred_b[k])],
                           probabilities_b=np.round(self.scores_b[k], DIGITS),
                           loss_b=round(float(self.losses_b[k]), DIGITS))
            out.append(row)
        return out

    def json_fields(self) -> dict:
        """The JSON of :data:`SCHEMA` (made strict by :meth:`StudyResult.to_json`)."""
        rob = None if self.robustness is None else {
            kind: {**v, "rows": list(v["rows"]), "predictions": list(v["predictions"]),
                   "flipped": list(v["flipped"]),
                   "counterfactuals": [list(c) for c in v["counterfactuals"]]}
            for kind, v in self.robustness.items()}
        return {"study": "predictions", "model": self.model, "compare": self.compare,
                "data": self.data, "task": self.task, "classes": list(self.classes),
                "rows": self.rows_json(), "metrics": self.metrics, "metrics_b": self.metrics_b,
                "changes": self.changes, "flips": self.flips, "confusion": self.confusion,
                "robustness": rob, "notes": self.notes, "seconds": self.seconds}

    @classmethod
    def from_json(cls, d: dict) -> "Result":
        """A result back from :meth:`to_json` (probabilities as written: 6 decimals)."""
        cls.SCHEMA.check(d)
        rows = d["rows"]
        classes = tuple(d["classes"])
        index = {c: k for k, c in enumerate(classes)}
        absa = d.get("task") is not None
        two = d.get("compare") is not None
        rob = d.get("robustness")
        if rob is not None:
            rob = {kind: {**v, "rows": np.asarray(v["rows"], dtype=np.int64),
                          "predictions": np.asarray(v["predictions"], dtype=np.int64),
                          "flipped": np.asarray(v["flipped"], dtype=bool),
                          "counterfactuals": [tuple(c) for c in v["counterfactuals"]],
                          "rates": _nan(v["rates"])}
                   for kind, v in rob.items()}
        return cls(
            d["model"], d.get("compare"), d["data"], d.get("task"), classes,
            [r["text"] for r in rows], [r["pair"] for r in rows],
            np.array([index[r["label"]] for r in rows], dtype=np.int64),
            np.array([r["tokens"] for r in rows], dtype=np.int64),
            np.array([r["unit"] for r in rows], dtype=np.int64),
            np.array([r["probabilities"] for r in rows], dtype=np.float64).reshape(
                len(rows), len(classes)),
            np.array([r["loss"] for r in rows], dtype=np.float64), _nan(d["metrics"]),
            np.asarray(d["confusion"], dtype=np.int64),
            [r["review"] for r in rows] if absa else None,
            [r["aspect"] for r in rows] if absa else None,
            np.array([r["sentence"] for r in rows], dtype=np.int64) if absa else None,
            np.array([r["probabilities_b"] for r in rows], dtype=np.float64).reshape(
                len(rows), len(classes)) if two else None,
            np.array([r["loss_b"] for r in rows], dtype=np.float64) if two else None,
            _nan(d.get("metrics_b")), _nan(d.get("changes")), d.get("flips"), rob,
            list(d.get("notes") or []), float(d.get("seconds") or 0.0))
