"""Aspect-based sentiment as sentence pairs (Sun et al. 2019, repository HSLCY/ABSA-BERT-pair):
the four auxiliary-sentence tasks, their classifier pairs and the paper's metrics
(docs/METHODS.md section 6).

=======  ==================================================  ===================  ============
task     auxiliary sentence                                  label                pair order
=======  ==================================================  ===================  ============
qa_m     ``what do you think of the {aspect} of it ?``       5-way                (review, aux)
nli_m    ``{aspect}``                                        5-way                (review, aux)
qa_b     ``the polarity of the aspect {aspect} is {label} .``  yes/no, 5 rows     (aux, review)
nli_b    ``{label} - {aspect}``                              yes/no, 5 rows       (aux, review)
=======  ==================================================  ===================  ============

Aspects (in this order): price, anecdotes, food, ambience, service. Labels: positive, neutral,
negative, conflict, none. Metrics follow the paper's evaluation code: aspect micro P/R/F1 and
4-way / 3-way / binary sentiment accuracy (percent).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from analysis.absa.data import CATEGORIES
from analysis.core.errors import DataError, InputError

TASKS = ("qa_m", "nli_m", "qa_b", "nli_b")
TASK_NAMES = {"qa_m": "QA-M", "nli_m": "NLI-M", "qa_b": "QA-B", "nli_b": "NLI-B"}
# The word used for each category in the auxiliary sentence (paper's data generator).
ASPECT_WORDS = {"price": "price", "anecdotes/miscellaneous": "anecdotes", "food": "food",
                "ambience": "ambience", "service": "service"}
LABELS = ("positive", "neutral", "negative", "conflict", "none")
NONE = LABELS.index("none")
PAIR_ORDERS = ("review-aux", "aux-review")


def default_pair_order(task: str) -> str:
    """The paper's order: review first for the M tasks, auxiliary sentence first for B."""
    check_task(task)
    return "review-aux" if task.endswith("_m") else "aux-review"


def check_task(task: str) -> str:
    if task not in TASKS:
        raise InputError(f"Unknown task {task!r}; choose one of {', '.join(TASKS)}.")
    return task


def is_binary(task: str) -> bool:
    return check_task(task).endswith("_b")


def num_labels(task: str) -> int:
    return 2 if is_binary(task) else len(LABELS)


def auxiliary_sentence(task: str, category: str, label: str | None = None) -> str:
    """The auxiliary sentence for a category (and, for the B tasks, a candidate label)."""
    check_task(task)
    aspect = ASPECT_WORDS.get(category)
    if aspect is None:
        raise DataError(f"Unknown category {category!r}.")
    if task == "qa_m":
        return f"what do you think of the {aspect} of it ?"
    if task == "nli_m":
        return aspect
    if label not in LABELS:
        raise InputError(f"The {TASK_NAMES[task]} task needs one of the labels {LABELS}.")
    if task == "qa_b":
        return f"the polarity of the aspect {aspect} is {label} ."
    return f"{label} - {aspect}"


@dataclass
class PairExample:
    """One classifier input. ``sentence`` indexes the dataset row, ``category`` the aspect,
    ``row`` the candidate label (B tasks) or -1."""

    text_a: str
    text_b: str
    label: int
    sentence: int
    category: str
    gold: str
    row: int = -1
    aux_first: bool = False


def gold_polarities(row: dict) -> dict[str, str]:
    """Category -> gold label for one sentence (``none`` for categories it does not mention)."""
    gold = {c: "none" for c in CATEGORIES}
    for c in row["categories"]:
        gold[c["category"]] = c["polarity"]
    return gold


def build_examples(ds, task: str, pair_order: str | None = None) -> list[PairExample]:
    """Dataset rows -> classifier pairs: 5 per sentence (M tasks) or 25 (B tasks)."""
    pair_order = pair_order or default_pair_order(task)
    if pair_order not in PAIR_ORDERS:
        raise InputError(f"Unknown pair order {pair_order!r}; choose {' or '.join(PAIR_ORDERS)}.")
    if not any(len(r["categories"]) for r in ds):
        raise DataError("The data has no sentence-level category polarities (ASTE files have "
                        "none); use SemEval-14/16 XML or the bundled sample for fine-tuning.")
    aux_first = pair_order == "aux-review"
    out = []
    for i, row in enumerate(ds):
        gold = gold_polarities(row)
        for cat in CATEGORIES:
            rows = ([(None, -1)] if not is_binary(task)
                    else [(lab, k) for k, lab in enumerate(LABELS)])
            for lab, k in rows:
                aux = auxiliary_sentence(task, cat, lab)
                label = LABELS.index(gold[cat]) if k < 0 else int(lab == gold[cat])
                a, b = (aux, row["text"]) if aux_first else (row["text"], aux)
                out.append(PairExample(a, b, label, i, cat, gold[cat], k, aux_first))
    return out


# ---------------------------------------------------------------------------------------------
# Metrics (HSLCY/ABSA-BERT-pair evaluation.py, semeval_PRF and semeval_Acc)


def aspect_prf(y_true: Sequence[int], y_pred: Sequence[int]) -> tuple[float, float, float]:
    """Aspect detection micro P/R/F1 (percent). Inputs are 5 consecutive labels per sentence
    (in CATEGORIES order); sentences without any gold aspect are skipped, as in the paper:
    ``P = sum|S & G| / sum|S|``, ``R = sum|S & G| / sum|G|``, ``F1 = 2PR / (P + R)``."""
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred) or len(y_true) % 5:
        raise ValueError("aspect_prf needs 5 labels per sentence for truth and prediction.")
    s_all = g_all = sg_all = 0
    for i in range(0, len(y_true), 5):
        s = {j for j in range(5) if y_pred[i + j] != NONE}
        g = {j for j in range(5) if y_true[i + j] != NONE}
        if not g:
            continue
        s_all += len(s)
        g_all += len(g)
        sg_all += len(s & g)
    p = sg_all / s_all if s_all else 0.0
    r = sg_all / g_all if g_all else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return 100 * p, 100 * r, 100 * f


def sentiment_accuracy(y_true: Sequence[int], y_pred: Sequence[int], scores: np.ndarray,
                       classes: int) -> float:
    """Sentiment accuracy (percent) over gold != none: 4-way (a predicted none becomes the
    argmax of the 4 polarities), 3-way (gold in pos/neu/neg; argmax over those three) or
    binary (gold in pos/neg; the larger of the two)."""
    scores = np.asarray(scores, dtype=np.float64)
    total = right = 0
    for t, p, sc in zip(y_true, y_pred, scores):
        if classes == 4:
            if t == NONE:
                continue
            if p == NONE:
                p = int(np.argmax(sc[:4]))
        elif classes == 3:
            if t >= 3:
                continue
            if p >= 3:
                p = int(np.argmax(sc[:3]))
        elif classes == 2:
            if t >= 3 or t == 1:
                continue
            if p >= 3 or p == 1:
                p = 0 if sc[0] >= sc[2] else 2
        else:
            raise ValueError("classes must be 4, 3 or 2")
        total += 1
        right += int(p == t)
    return 100.0 * right / total if total else float("nan")


def metrics_from_scores(y_true: Sequence[int], scores: np.ndarray) -> dict:
    """All paper metrics from 5-way scores [n_pairs, 5] (pairs in sentence x CATEGORIES order)."""
    scores = np.asarray(scores, dtype=np.float64)
    y_pred = [int(i) for i in scores.argmax(1)]
    p, r, f = aspect_prf(y_true, y_pred)
    return {
        "aspect_precision": p, "aspect_recall": r, "aspect_f1": f,
        "acc_4way": sentiment_accuracy(y_true, y_pred, scores, 4),
        "acc_3way": sentiment_accuracy(y_true, y_pred, scores, 3),
        "acc_binary": sentiment_accuracy(y_true, y_pred, scores, 2),
        "n_pairs": len(y_true),
        # percent of the pairs given the most often predicted label: 100 = one label for all
        "top_label_share": (100.0 * max(np.bincount(y_pred)) / len(y_pred)) if y_pred
        else float("nan"),
        "top_label": LABELS[int(np.bincount(y_pred).argmax())] if y_pred else None,
    }


def pair_scores(examples: Sequence[PairExample], probs: np.ndarray, task: str):
    """Classifier probabilities -> (gold 5-way labels, 5-way scores) per (sentence, category).
    B tasks: P(yes) of the 5 rows of an aspect, softmax-normalised over the rows,
    ``s[c, r] = exp(y[c, r]) / sum_r' exp(y[c, r'])``."""
    probs = np.asarray(probs, dtype=np.float64)
    if not is_binary(task):
        return [e.label for e in examples], probs
    yes = probs[:, 1].reshape(-1, len(LABELS))
    e = np.exp(yes - yes.max(1, keepdims=True))
    scores = e / e.sum(1, keepdims=True)
    gold = [LABELS.index(examples[k].gold) for k in range(0, len(examples), len(LABELS))]
    return gold, scores
