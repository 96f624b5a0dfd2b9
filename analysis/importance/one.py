"""Head importance for ONE example (docs/METHODS.md section 12, "One example"): the classifier
reads one input with its gold label; every single head and every whole layer is switched off
in turn (the whole-set study's ablations, :class:`analysis.importance.job.AblationJob`, on a
data set of one row), and for each the change of the gold class's probability, of the intact
answer's probability and of the loss, and whether the answer flips; with Michel et al.'s gate
gradient ``|dL/dxi_h|`` of this example.

One example has nothing to resample: there is no interval, and a per-example change is this
example's, not an estimate for any population (the result and its reading say so).

The input is a text (and an optional pair) with a label among the classifier's, or, for an
ABSA checkpoint of the M tasks (QA-M, NLI-M: the example checkpoint), a review and the aspect
category asked about with a label among :data:`analysis.absa.tasks.LABELS`, read as the
Predictions page's rows are (the card's pair order, auxiliary sentence and length).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, ClassVar

import numpy as np

from analysis.absa.finetune import _tokenize
from analysis.absa.tasks import (ASPECT_WORDS, LABELS, TASK_NAMES, PairExample,
                                 auxiliary_sentence, default_pair_order, is_binary)
from analysis.core.encoding import clean_text
from analysis.core.errors import DataError, InputError
from analysis.core.execution.corpus import run_local
from analysis.core.hooks import ABLATION_METHODS
from analysis.core.study import Field, Schema, StudyResult
from analysis.importance.ablate import MAX_TOKENS, single_ablations
from analysis.importance.evalset import EvalSet, check_classifier, labelled_eval_set
from analysis.importance.gradients import normalise_per_layer, spearman
from analysis.importance.job import AblationJob, eval_dataset
from analysis.importance.reading import METHOD_WORDS, name
from analysis.importance.run import DEFAULT_METHOD
from analysis.importance.scoring import AccuracyScorer, example_losses, softmax

MEASURES = ("gold_probability", "predicted_probability", "loss")
NO_INTERVAL = ("One example: these changes are this example's own, with no interval (there is "
               "nothing to resample), and not an estimate for any population of inputs.")
TOP = 3  # heads named in the reading


@dataclass
class OneExample:
    """One input encoded for the classifier: ``ev`` holds it as a data set of one row."""

    ev: EvalSet
    text: str
    pair: str | None
    aspect: str | None  # the category asked about (ABSA), else None
    label: str  # the gold label's name
    classes: tuple[str, ...]
    notes: list[str] = field(default_factory=list)

    @property
    def gold(self) -> int:
        return int(self.ev.labels[0])


def class_names(loaded) -> tuple[str, ...]:
    """The classifier's label names in index order (``LABEL_i`` where it names none)."""
    cfg = loaded.model.config
    id2label = getattr(cfg, "id2label", None) or {}
    return tuple(str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}")))
                 for i in range(int(cfg.num_labels)))


def category_of(aspect: str) -> str:
    """An aspect category (``food``, ``anecdotes/miscellaneous``) from its name or its word
    (``anecdotes``), any case; InputError naming the categories otherwise."""
    key = str(aspect or "").strip().lower()
    for cat, word in ASPECT_WORDS.items():
        if key in (cat, word):
            return cat
    raise InputError(f"Unknown aspect {str(aspect)[:40]!r}: use one of "
                     f"{', '.join(ASPECT_WORDS)}.")


def _aspect_example(loaded, card, review: str, aspect: str, label: str) -> EvalSet:
    """The review asked about ``aspect`` as the checkpoint reads it (its card's task, pair
    order and length), gold ``label`` among :data:`LABELS`."""
    if card is None:
        raise InputError(f"{loaded.name} has no ABSA card, so it cannot be asked about an "
                         "aspect: give the text (and pair) it reads instead.")
    task = card["task"]
    if is_binary(task):
        raise InputError(f"{loaded.name} was fine-tuned for {TASK_NAMES[task]}, which answers "
                         "a review and an aspect with five yes/no inputs: give one of them as "
                         "text and pair with its yes/no label.")
    cat = category_of(aspect)
    gold = str(label).strip().lower()
    if gold not in LABELS:
        raise DataError(f"The label {str(label)[:40]!r} is not one of the aspect labels "
                        f"({', '.join(LABELS)}).")
    order = card.get("pair_order") or default_pair_order(task)
    aux = auxiliary_sentence(task, cat)
    aux_first = order == "aux-review"
    a, b = (aux, review) if aux_first else (review, aux)
    ex = PairExample(a, b, LABELS.index(gold), 0, cat, gold, -1, aux_first)
    enc = _tokenize(loaded.tokenizer, [ex], int(card.get("max_length", 128)))
    labels = np.array([ex.label], dtype=np.int64)
    return EvalSet("one example", {k: list(enc[k]) for k in enc.keys()}, labels,
                   np.zeros(1, dtype=np.int64), AccuracyScorer(labels), [(a, b)], task=task,
                   pair_order=order)


def encode_one(loaded, card, text: str, pair: str | None = None, label: str = "",
               aspect: str | None = None) -> OneExample:
    """One input for the classifier ``loaded`` (its ABSA ``card`` or None): ``text`` (and
    ``pair``) with gold ``label`` (a label name of the classifier, any case, or its index), or,
    with ``aspect``, ``text`` as a review asked about that category (see the module
    docstring). Bad input is an InputError or DataError (one plain line)."""
    check_classifier(loaded)
    text, notes = clean_text(text, "The text")
    if pair is not None and not str(pair).strip():
        pair = None
    if pair is not None:
        pair, more = clean_text(pair, "The pair")
        notes += more
    if label is None or not str(label).strip():
        raise InputError("Give the example's gold label (its correct answer).")
    if aspect is not None and str(aspect).strip():
        if pair is not None:
            raise InputError("Give a review with an aspect, or a text with a pair, not both.")
        ev = _aspect_example(loaded, card, text, aspect, label)
        return OneExample(ev, text, None, category_of(aspect), LABELS[int(ev.labels[0])],
                          LABELS, notes)
    # lazy: imported when used: datasets (heavy)
    import datasets

    cols = {"text": [text], **({"text_pair": [pair]} if pair is not None else {})}
    ev = labelled_eval_set(loaded, datasets.Dataset.from_dict(cols), [str(label).strip()])
    classes = class_names(loaded)
    return OneExample(ev, text, pair, None, classes[int(ev.labels[0])], classes,
                      notes + list(ev.notes))


@dataclass
class OneResult(StudyResult):
    """Head importance of one example (module docstring): per measure of :data:`MEASURES`,
    the change [L, H] with each head disabled and [L] with each layer disabled (ablated minus
    intact); the answer under each; Michel's gate gradient of this example."""

    SCHEMA: ClassVar[Schema] = Schema((
        Field("model", "the classifier's name"),
        Field("text", "the text (for an aspect: the review)"),
        Field("pair", "the second text (null: none, or an aspect asked)"),
        Field("aspect", "the aspect category asked about (ABSA checkpoints; null otherwise)"),
        Field("label", "the gold label"),
        Field("classes", "the classifier's labels, in index order"),
        Field("method", "how a head is disabled: uniform (attention spread evenly, Kovaleva "
                        "et al.) or mask (output zeroed, Michel et al.)"),
        Field("probabilities", "the intact model's class probabilities (in classes order)"),
        Field("loss", "the intact model's cross-entropy against the gold label"),
        Field("prediction", "the intact model's answer"),
        Field("heads", "per measure (gold_probability, predicted_probability: the intact "
                       "answer's, loss): layers x heads (0-indexed), the change with that head "
                       "disabled (ablated minus intact); flips: layers x heads, whether the "
                       "answer changes; answer: layers x heads, the answer then"),
        Field("layers", "the same per layer, the whole layer disabled"),
        Field("gradient_importance", "layers x heads: |dL/dxi| of this example (Michel et al.'s "
                                     "gate gradient, not normalised)"),
        Field("intervals", "always null: one example has no bootstrap interval (a per-example "
                           "change is not a population estimate)"),
        Field("reading", "the plain reading, one sentence per item"),
    ))

    model: str
    text: str
    pair: str | None
    aspect: str | None
    label: str
    classes: tuple[str, ...]
    method: str
    probabilities: np.ndarray  # [C]
    loss: float
    heads: dict  # measure -> [L, H] float; "flips" -> [L, H] bool; "answer" -> [L, H] int
    layers: dict  # the same per layer [L]
    gradient_raw: np.ndarray  # [L, H] |dL/dxi|
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    read_as: tuple | None = None  # (text, pair) the classifier read (an aspect: its question)

    @property
    def shape(self) -> tuple[int, int]:
        return self.gradient_raw.shape

    @property
    def gold(self) -> int:
        return self.classes.index(self.label)

    @property
    def predicted(self) -> int:
        return int(np.argmax(self.probabilities))

    @property
    def gradient(self) -> np.ndarray:
        """The gate gradients normalised per layer (the whole-set map's scale)."""
        return normalise_per_layer(self.gradient_raw)

    def flipped(self) -> list[tuple[int, int, str]]:
        """(layer, head, the answer then) of every head whose removal flips the answer,
        0-indexed, the largest fall of the intact answer's probability first."""
        fall = self.heads["predicted_probability"]
        rows = [(int(l), int(h)) for l, h in zip(*np.nonzero(self.heads["flips"]))]
        rows.sort(key=lambda x: (fall[x], x))
        return [(l, h, self.classes[int(self.heads["answer"][l, h])]) for l, h in rows]

    def json_fields(self) -> dict:
        names = list(self.classes)

        def part(d):
            return {**{m: d[m] for m in MEASURES}, "flips": np.asarray(d["flips"], dtype=bool),
                    "answer": np.vectorize(lambda i: names[int(i)], otypes=[object])(
                        d["answer"])}

        return {"model": self.model, "text": self.text, "pair": self.pair,
                "aspect": self.aspect, "label": self.label, "classes": names,
                "method": self.method, "probabilities": self.probabilities,
                "loss": self.loss, "prediction": names[self.predicted],
                "heads": part(self.heads), "layers": part(self.layers),
                "gradient_importance": self.gradient_raw, "intervals": None,
                "reading": one_reading(self)}

    @classmethod
    def from_json(cls, data: dict) -> OneResult:
        cls.SCHEMA.check(data)
        classes = tuple(data["classes"])

        def part(d):
            return {**{m: np.asarray(d[m], dtype=float) for m in MEASURES},
                    "flips": np.asarray(d["flips"], dtype=bool),
                    "answer": np.vectorize(classes.index, otypes=[np.int64])(
                        np.asarray(d["answer"], dtype=object))}

        return cls(data["model"], data["text"], data["pair"], data["aspect"], data["label"],
                   classes, data["method"], np.asarray(data["probabilities"], dtype=float),
                   float(data["loss"]), part(data["heads"]), part(data["layers"]),
                   np.asarray(data["gradient_importance"], dtype=float))


def _changes(probs: np.ndarray, losses: np.ndarray, gold: int, n: int) -> tuple[dict, dict]:
    """(heads, layers) of the measures from the probabilities [A, C] and losses [A] of
    :func:`analysis.importance.ablate.single_ablations`' order (intact, heads, layers)."""
    pred = int(np.argmax(probs[0]))
    answer = probs.argmax(-1)
    every = {"gold_probability": probs[:, gold] - probs[0, gold],
             "predicted_probability": probs[:, pred] - probs[0, pred],
             "loss": losses - losses[0], "flips": answer != pred, "answer": answer}
    return ({k: v[1:1 + n] for k, v in every.items()}, {k: v[1 + n:] for k, v in every.items()})


def one_example_study(loaded, one: OneExample, *, method: str = DEFAULT_METHOD,
                      max_tokens: int | None = None,
                      progress: Callable[[float, str], None] | None = None,
                      run=None) -> OneResult:
    """Every head and every layer of ``loaded`` disabled on the one example ``one``
    (:func:`encode_one`) with ``method``; the forward work is the whole-set study's corpus job
    (:class:`AblationJob` on a data set of one row: the same ablations and gate gradients) run
    by ``run(job, loaded, dataset, progress)`` (default: this process)."""
    if method not in ABLATION_METHODS:
        raise InputError(f"Unknown method {method!r}; use uniform or mask.")
    say = progress or (lambda f, t: None)
    t0 = time.perf_counter()
    L, H = loaded.n_layers, loaded.n_heads
    tokens = MAX_TOKENS if max_tokens is None else int(max_tokens)
    job = AblationJob(loaded.spec, single_ablations(L, H), method, True, tokens)
    ablated = (run or run_local)(job, loaded, eval_dataset(one.ev), lambda d, t: say(
        0.95 * d / t, f"disabling heads and layers, gradients ({d}/{t})"))
    logits = ablated.logits[:, 0]  # [A, C]
    probs = softmax(logits)
    losses = example_losses(logits, np.full(len(logits), one.gold))
    heads, layers = _changes(probs, losses, one.gold, L * H)
    heads = {k: v.reshape(L, H) for k, v in heads.items()}
    result = OneResult(loaded.name, one.text, one.pair, one.aspect, one.label, one.classes,
                       method, probs[0], float(losses[0]), heads, layers,
                       np.asarray(ablated.gradient_raw, dtype=np.float64),
                       notes=[*one.notes, NO_INTERVAL], read_as=tuple(one.ev.texts[0]))
    result.seconds = time.perf_counter() - t0
    say(1.0, "done")
    return result


# ---------------------------------------------------------------------------------------------
# The plain reading


def _pts(x: float) -> str:
    return f"{100 * x:+.1f} points"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if 0.005 <= x <= 0.995 or x in (0.0, 1.0) else f"{100 * x:.1f}%"


def top_heads(result: OneResult, measure: str = "gold_probability", most: int = TOP
              ) -> list[tuple[int, int, float]]:
    """(layer, head, change) of the ``most`` heads whose removal moves ``measure`` against
    the example most (the gold or answer's probability down, the loss up), 0-indexed; only
    heads that do."""
    ch = result.heads[measure]
    harm = ch if measure == "loss" else -ch
    order = np.argsort(-harm, axis=None, kind="stable")[:most]
    return [(int(i // ch.shape[1]), int(i % ch.shape[1]), float(ch.flat[i])) for i in order
            if harm.flat[i] > 0]


def whole_set_sentence(result: OneResult, whole) -> str | None:
    """How this example's loss changes compare with the mean loss changes of the whole-set
    study ``whole`` (an :class:`analysis.importance.run.ImportanceResult` of the same model
    and method; None when it does not fit): Spearman over the heads, and whether this
    example's costliest head is among the set's five costliest."""
    if whole is None or "loss" not in getattr(whole, "heads", {}) or \
            whole.method != result.method or whole.shape != result.shape:
        return None
    mine, theirs = result.heads["loss"], whole.heads["loss"]
    rho = spearman(mine, theirs)
    H = result.shape[1]
    top = int(np.argmax(mine))
    five = [int(i) for i in np.argsort(-theirs, axis=None, kind="stable")[:5]]
    where = ("also among" if top in five else "not among")
    return (f"Against the whole set ({whole.description}), where the mean loss is measured: "
            + (f"Spearman {rho:.2f} between this example's loss changes and the set's; "
               if np.isfinite(rho) else "") +
            f"this example's costliest head, {name(*divmod(top, H))}, is {where} the set's five "
            f"costliest ({', '.join(name(*divmod(i, H)) for i in five)}). One example can "
            "lean on heads the set does not, and the other way round.")


def one_reading(result: OneResult, whole=None) -> list[str]:
    """Plain sentences from ``result``: the intact answer, the heads that matter most for this
    example, whether any single head (or layer) flips it, the gate gradient's agreement, how it
    compares with the whole-set study ``whole`` when one is at hand (same model and method),
    and that one example has no interval."""
    L, H = result.shape
    p, g, k = result.probabilities, result.gold, result.predicted
    gold, answer = result.label, result.classes[k]
    right = "right" if k == g else "wrong"
    out = [f"The intact model answers {answer} ({_pct(p[k])}), which is {right}: the gold "
           f"label {gold} gets {_pct(p[g])}, the loss is {result.loss:.3f}. Each of the "
           f"{L * H} heads, then each of the {L} layers, was switched off in turn, "
           f"{METHOD_WORDS[result.method]}."]
    top = top_heads(result)
    if top:
        out.append("For this example, removing these heads lowers the gold label's "
                   "probability most: " + "; ".join(
                       f"head {name(l, h)} ({_pts(c)}, to {_pct(p[g] + c)})"
                       for l, h, c in top) + ".")
    else:
        out.append("No single head's removal lowers the gold label's probability.")
    flips = result.flipped()
    sorted_p = np.sort(p)
    margin = float(sorted_p[-1] - sorted_p[-2]) if len(p) > 1 else 1.0
    if flips:
        shown = "; ".join(f"head {name(l, h)} (to {c})" for l, h, c in flips[:5])
        more = f" and {len(flips) - 5} more" if len(flips) > 5 else ""
        heads = f"{len(flips)} single heads flip" if len(flips) > 1 else "1 single head flips"
        out.append(f"{heads} the answer when removed: {shown}{more}. The intact answer "
                   f"leads the next class by {_pts(margin)[1:]}: near a decision boundary a "
                   "tiny change flips it, so a flip says more about the margin than about the "
                   "head.")
    else:
        fall = float(result.heads["predicted_probability"].min())
        out.append(f"No single head flips the answer: the largest fall of its probability is "
                   f"{_pts(fall)} (the intact answer leads the next class by "
                   f"{_pts(margin)[1:]}).")
    lay = result.layers["gold_probability"]
    j = int(np.argmin(lay))
    n_flip = int(np.sum(result.layers["flips"]))
    out.append((f"Switching off a whole layer: layer {j + 1} lowers the gold label's "
                f"probability most ({_pts(float(lay[j]))})" if lay[j] < 0 else
                "Switching off a whole layer never lowers the gold label's probability")
               + f"; {n_flip} of {L} layers {'flips' if n_flip == 1 else 'flip'} the answer.")
    rho = spearman(result.gradient_raw, np.abs(result.heads["loss"]))
    gl, gh = divmod(int(np.argmax(result.gradient_raw)), H)
    out.append(f"Gate gradients (Michel et al., |dL/dxi| for this example) rank head "
               f"{name(gl, gh)} first" + (
                   f"; their Spearman with the size of the measured loss changes is {rho:.2f}"
                   if np.isfinite(rho) else "") + ".")
    versus = whole_set_sentence(result, whole)
    if versus:
        out.append(versus)
    out.append(NO_INTERVAL)
    return out


__all__ = ["MEASURES", "NO_INTERVAL", "OneExample", "OneResult", "category_of", "encode_one",
           "one_example_study", "one_reading", "top_heads", "whole_set_sentence"]
