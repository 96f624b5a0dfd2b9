"""The classifier and its held-out labelled examples, encoded once (docs/METHODS.md section 12).

Two kinds of data:

- ABSA sentence pairs (a checkpoint of the Aspect heads page, or any classifier with
  ``task``): the pairs, tokenisation, labels and metrics of :mod:`analysis.aspects` (the
  card's task, pair order and length; its held-out sentences when the card names them);
- any labelled corpus (.csv/.jsonl with a label column) for any sequence classifier: the
  labels are the model's label names (or their indices), the metric is accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analysis.core.errors import DataError, InputError
from analysis.aspects.causal import evaluation_data
from analysis.absa.checkpoints import is_checkpoint, load_checkpoint
from analysis.absa.example import load_example
from analysis.absa.finetune import _tokenize
from analysis.absa.readers import load_absa
from analysis.absa.tasks import (
    TASK_NAMES, build_examples, check_task, default_pair_order, num_labels,
)
from analysis.core.corpus import read_corpus, read_labels
from analysis.core.encoding import encode_corpus
from analysis.importance.scoring import AbsaScorer, AccuracyScorer
from analysis.core.models import EXAMPLE_SPEC, load_config, load_task_head, normalise_spec


@dataclass
class EvalSet:
    """Encoded examples with gold labels; ``units`` groups examples for the bootstrap (the
    sentence of an ABSA pair; each example on its own otherwise)."""

    description: str
    features: dict  # tokenizer output, one list per input name, one entry per example
    labels: np.ndarray  # [n] int
    units: np.ndarray  # [n] int, 0 .. n_units - 1
    scorer: object  # analysis.importance.scoring.AbsaScorer | AccuracyScorer
    texts: list[tuple[str, str | None]] = field(default_factory=list)  # (text, pair) each
    notes: list[str] = field(default_factory=list)
    sentences: object = None  # ABSA: the Dataset of sentences the pairs come from
    task: str | None = None  # ABSA task
    pair_order: str | None = None

    @property
    def n_examples(self) -> int:
        return len(self.labels)

    @property
    def n_units(self) -> int:
        return int(self.units.max()) + 1 if len(self.units) else 0

    @property
    def lengths(self) -> list[int]:
        return [len(x) for x in self.features["input_ids"]]


def check_classifier(loaded) -> None:
    """Refuse a model without a single-label classification head (one plain line)."""
    model = loaded.model
    cfg = model.config
    archs = list(getattr(cfg, "architectures", None) or [type(model).__name__])
    if not type(model).__name__.endswith("ForSequenceClassification"):
        raise InputError(f"{loaded.name} has no task head (it is {', '.join(archs)}, not a "
                         "fine-tuned classifier): pick a checkpoint fine-tuned for a task, "
                         "e.g. the example checkpoint.")
    if getattr(cfg, "problem_type", None) in ("regression", "multi_label_classification") \
            or int(getattr(cfg, "num_labels", 0)) < 2:
        raise InputError(f"{loaded.name} is not a single-label classifier, so it has no "
                         "accuracy to lose.")


def load_headed(spec: str):
    """(LoadedModel with its task head, ABSA card or None) for a model spec: ``example``, a
    checkpoint folder of this dashboard, or any model whose config names a
    ``...ForSequenceClassification`` architecture; None for a model without a task head (the
    caller loads its encoder alone, or refuses: :func:`load_classifier`)."""
    spec = normalise_spec(spec)
    if spec == EXAMPLE_SPEC:
        return load_example()
    if is_checkpoint(spec):
        return load_checkpoint(spec)
    loaded = load_task_head(spec)
    return None if loaded is None else (loaded, None)


def no_task_head(spec: str) -> InputError:
    """The refusal of a model without a task head where a classifier is needed."""
    try:
        archs = list(getattr(load_config(spec), "architectures", None) or [])
    except Exception:
        archs = []
    return InputError(f"{spec} has no task head (architectures: {', '.join(archs) or 'none'}): "
                      "pick a checkpoint fine-tuned for a task, e.g. the example checkpoint.")


def require_classifier(headed, spec: str):
    """``headed`` (:func:`load_headed`'s answer) when it is a single-label classifier, else
    InputError (no task head; or a head this study cannot score: :func:`check_classifier`)."""
    if headed is None:
        raise no_task_head(normalise_spec(spec))
    check_classifier(headed[0])
    return headed


def load_classifier(spec: str):
    """(LoadedModel with its task head, ABSA card or None) for a model spec
    (:func:`load_headed`); a model without a single-label task head is refused."""
    return require_classifier(load_headed(spec), spec)


def absa_eval_set(loaded, card: dict | None, data, task: str | None = None,
                  max_sentences: int | None = None) -> EvalSet:
    """The ABSA pairs of ``data`` (a Dataset of :mod:`analysis.absa.readers`) for the
    checkpoint: the card's task, pair order and maximum length, and, when the card names
    held-out sentences found in ``data``, only those (:func:`analysis.aspects.causal.
    evaluation_data`); without a card ``task`` is required and must fit the classifier."""
    check_classifier(loaded)
    if card is not None:
        if task is not None and check_task(task) != card["task"]:
            raise InputError(f"{loaded.name} was fine-tuned for {TASK_NAMES[card['task']]}, "
                             f"not {TASK_NAMES[task]}: leave the task out or choose "
                             f"{card['task']}.")
        task, order = card["task"], card.get("pair_order") or default_pair_order(card["task"])
        max_length = int(card.get("max_length", 128))
        ds, description = evaluation_data(card, data)
        if len(ds) == len(data) and "held-out sentences (from its card)" not in description:
            # evaluation_data's words name the Aspect heads page's step 2: not this study's
            description = (f"the {len(ds)} sentences of the data (the checkpoint's card names "
                           "no held-out sentences among them, so some may be training data)")
    else:
        if task is None:
            raise InputError(f"{loaded.name} has no ABSA card: name its task (qa_m, nli_m, "
                             "qa_b, nli_b).")
        n = int(loaded.model.config.num_labels)
        if n != num_labels(check_task(task)):
            raise InputError(f"{loaded.name} was not trained for {TASK_NAMES[task]}: its "
                             f"classifier has {n} labels, the task needs {num_labels(task)}.")
        order, max_length = default_pair_order(task), 128
        ds, description = data, f"the {len(data)} sentences of the data"
    if max_sentences is not None and len(ds) > max_sentences:
        ds = ds.select(range(int(max_sentences)))
        description += f", the first {max_sentences}"
    if not len(ds):
        raise DataError("The data has no sentences.")
    examples = build_examples(ds, task, order)
    enc = _tokenize(loaded.tokenizer, examples, max_length)
    features = {k: list(enc[k]) for k in enc.keys()}
    return EvalSet(description, features, np.array([e.label for e in examples], dtype=np.int64),
                   np.array([e.sentence for e in examples], dtype=np.int64),
                   AbsaScorer(examples, task), [(e.text_a, e.text_b) for e in examples],
                   sentences=ds, task=task, pair_order=order)


def label_ids(loaded, labels) -> np.ndarray:
    """Gold label texts -> class indices of the classifier: its label names (any case), else
    whole numbers below its number of labels; anything else is a DataError."""
    cfg = loaded.model.config
    n = int(cfg.num_labels)
    names = {str(v).strip().lower(): int(k) for k, v in (cfg.id2label or {}).items()}
    out = []
    for lab in labels:
        text = "" if lab is None else str(lab).strip()
        if text.lower() in names:
            out.append(names[text.lower()])
        elif text.lstrip("-").isdigit() and 0 <= int(text) < n:
            out.append(int(text))
        else:
            shown = ", ".join(str(cfg.id2label[i]) for i in sorted(cfg.id2label)) \
                if cfg.id2label else f"0 to {n - 1}"
            raise DataError(f"The label {text[:40]!r} is not one of {loaded.name}'s labels "
                            f"({shown}).")
    return np.array(out, dtype=np.int64)


def labelled_eval_set(loaded, dataset, labels, max_examples: int | None = None) -> EvalSet:
    """A labelled corpus (``dataset`` of :func:`analysis.core.corpus.read_corpus`, ``labels`` from
    :func:`analysis.core.corpus.read_labels`) encoded once through :mod:`analysis.core.encoding`."""
    check_classifier(loaded)
    if labels is None:
        raise DataError("The data has no labels (a 'label' column matching the texts): "
                        "every example needs its correct answer.")
    pairs = dataset["text_pair"] if "text_pair" in dataset.column_names else None
    corpus = encode_corpus(loaded.tokenizer, dataset["text"], pairs, labels,
                           max_length=loaded.max_length, max_examples=max_examples)
    y = label_ids(loaded, corpus.labels)
    encs = corpus.encodings
    features = {"input_ids": [e.input_ids for e in encs],
                "attention_mask": [[1] * e.n_tokens for e in encs]}
    if "token_type_ids" in getattr(loaded.tokenizer, "model_input_names", []) and all(
            e.token_type_ids is not None for e in encs):
        features["token_type_ids"] = [e.token_type_ids for e in encs]
    notes = []
    if corpus.skipped:
        notes.append(f"{corpus.skipped} example(s) with no readable token were skipped.")
    if corpus.truncated:
        notes.append(f"{corpus.truncated} example(s) were cut to {loaded.max_length} tokens.")
    return EvalSet(f"the {len(encs)} labelled examples of the data", features, y,
                   np.arange(len(encs), dtype=np.int64), AccuracyScorer(y),
                   [(e.text, e.pair) for e in encs], notes)


SAMPLE_NEEDS_CARD = ("The bundled sample is restaurant reviews labelled by aspect: it measures "
                     "a classifier fine-tuned on them here (with its card); for this model "
                     "upload a labelled file.")


def load_eval_set(loaded, card: dict | None, source, *, task: str | None = None,
                  max_examples: int | None = None, text_column: str = "text",
                  pair_column: str | None = None, label_column: str = "label",
                  name: str | None = None, max_bytes: int | None = None) -> EvalSet:
    """The examples of a data file (a path, bytes named ``name``, or ``sample``) for the
    classifier: ABSA sentences (:func:`analysis.absa.readers.load_absa`) when the model has
    an ABSA card or ``task`` is given, else a labelled .csv/.jsonl corpus (``max_examples``
    caps sentences, or examples; ``max_bytes`` the file's size, as in the readers)."""
    if card is not None or task is not None:
        return absa_eval_set(loaded, card, load_absa(source, name=name, max_bytes=max_bytes),
                             task, max_examples)
    check_classifier(loaded)
    if isinstance(source, str) and source in ("sample", "bundled"):
        raise DataError(SAMPLE_NEEDS_CARD)
    dataset = read_corpus(source, text_column=text_column, pair_column=pair_column,
                          max_examples=max_examples, name=name, max_bytes=max_bytes)
    labels, why = read_labels(source, dataset, text_column=text_column,
                              label_column=label_column, name=name, max_bytes=max_bytes)
    if labels is None:
        raise DataError(f"The data has no labels ({why or f'no {label_column!r} column'}): "
                        "every example needs its correct answer; for ABSA data name the "
                        "task.")
    return labelled_eval_set(loaded, dataset, labels, max_examples)
