"""Fine-tuning drift as one study (:mod:`analysis.core.study`): its inputs, its result as the
JSON ``python -m analysis drift`` writes (:class:`DriftSummary`), its plan for the job queue
and ``STUDY``, which the CLI and the precomputed example (``python -m analysis precompute
drift``) run.

Why a summary and not :class:`analysis.drift.run.DriftResult` itself: that one keeps every
example's numbers (per-example cosine maps, pattern features, texts) for the page's galleries
and distributions, which the JSON leaves out; the study's result is what the JSON holds, made
from it by :meth:`DriftSummary.of` (the same numbers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from analysis.core.corpus import SAMPLE_FILE, read_corpus, read_labels
from analysis.core.execution.work import Study
from analysis.core.models import EXAMPLE_SPEC
from analysis.core.study import Field, Schema, StudyDef, StudyResult
from analysis.drift.job import DriftJob, has_labels, models_of
from analysis.drift.pair import load_pair
from analysis.drift.patterns import PatternThresholds
from analysis.drift.run import DriftResult


@dataclass(frozen=True)
class Inputs:
    """The two checkpoints (specs: ``default``, ``example``, a hub id or a folder), the corpus
    file with its columns, and the pattern thresholds."""

    after: str = EXAMPLE_SPEC
    data: str = str(SAMPLE_FILE)
    before: str = "default"
    fmt: str | None = None
    text_column: str = "text"
    pair_column: str | None = None
    label_column: str = "label"
    max_examples: int | None = None
    batch_size: int = 32
    thresholds: PatternThresholds = PatternThresholds()


@dataclass
class DriftSummary(StudyResult):
    """What fine-tuning changed, as the CLI's JSON: per head, per layer, per statistic and per
    pattern type (layers and heads 0-indexed in the lists)."""

    SCHEMA: ClassVar[Schema] = Schema((
        Field("before", "the model before fine-tuning"),
        Field("after", "the model after fine-tuning"),
        Field("n_examples", "examples compared"),
        Field("n_layers", "layers"),
        Field("n_heads", "heads per layer"),
        Field("cosine", "layers x heads: mean cosine similarity of the head's attention maps "
                        "before and after (1: unchanged)"),
        Field("rsa", "per layer, embeddings first: mean RSA of the token representations"),
        Field("cka", "per layer, embeddings first: linear CKA over the corpus's tokens"),
        Field("noop_delta", "cls, sep, punct: layers x heads, the change (after minus before) "
                            "of the attention on [CLS], [SEP], punctuation"),
        Field("patterns", "share of maps per pattern type before and after, and the "
                          "thresholds used"),
        Field("identical", "whether the two models attend identically (every cosine 1)"),
        Field("summary", "one plain sentence"),
        Field("layers_ci", "per layer: the 95% interval over examples of the mean head cosine "
                           "(null with fewer than two examples)"),
        Field("groups", "by gold label and by correct/wrong prediction: layers x heads mean "
                        "cosine", optional=True),
        Field("label_note", "why the labels were not used", optional=True),
    ))

    before: str
    after: str
    n_examples: int
    n_layers: int
    n_heads: int
    cosine: np.ndarray
    rsa: np.ndarray  # [L+1]
    cka: np.ndarray  # [L+1]
    noop_delta: dict
    patterns: dict
    identical: bool
    summary: str
    layers_ci: list
    groups: dict | None = None
    label_note: str | None = None
    notices: list = field(default_factory=list)  # the command line's notes (not in the JSON)

    def json_fields(self) -> dict:
        out = {k: getattr(self, k) for k in self.SCHEMA.names}
        return {k: v for k, v in out.items() if v is not None or k not in ("groups",
                                                                             "label_note")}

    @classmethod
    def from_json(cls, data: dict) -> DriftSummary:
        cls.SCHEMA.check(data)
        kept = {k: data.get(k) for k in cls.SCHEMA.names}
        kept["cosine"] = np.asarray(data["cosine"], dtype=float)
        kept["rsa"] = np.array([np.nan if x is None else x for x in data["rsa"]], dtype=float)
        kept["cka"] = np.array([np.nan if x is None else x for x in data["cka"]], dtype=float)
        kept["noop_delta"] = {k: np.asarray(v, dtype=float)
                              for k, v in data["noop_delta"].items()}
        return cls(**kept)

    @classmethod
    def of(cls, result: DriftResult, thresholds: PatternThresholds | None = None,
           label_note: str | None = None) -> DriftSummary:
        """The summary of a full result (its JSON's numbers), the corpus's label note added."""
        out = result.to_json(thresholds)
        if label_note:
            out["label_note"] = label_note
        summary = cls.from_json(out)
        summary.notices = list(result.notices)
        return summary


def plan(inputs: Inputs, models=None) -> Study:
    """Both models over the corpus: one map/merge corpus job (in this process as one shard, or
    on the Ray cluster of the placement: the same numbers), summed up in the JSON's numbers.
    ``models``: the two models already loaded, else loaded by their specs."""
    dataset = read_corpus(inputs.data, fmt=inputs.fmt, text_column=inputs.text_column,
                          pair_column=inputs.pair_column, max_examples=inputs.max_examples)
    labels, note = read_labels(inputs.data, dataset, fmt=inputs.fmt,
                               text_column=inputs.text_column, label_column=inputs.label_column)
    if labels is not None:
        dataset = dataset.add_column("label", labels)
    before, after = models if models is not None else load_pair(inputs.before, inputs.after)
    job = DriftJob(before.spec, after.spec, inputs.batch_size, has_labels(dataset))

    def study(progress, run):
        def told(done: int, total: int) -> None:
            progress(done / max(total, 1), f"{done}/{total} examples")

        result = run(job, models_of(before, after), dataset, told)
        return DriftSummary.of(result, inputs.thresholds, note)

    return Study(study, after.spec, len(dataset))


def example() -> Inputs:
    """The page's first view: the embedded model against the example checkpoint over the
    bundled sample corpus's first 200 examples (the page's default cap)."""
    return Inputs(max_examples=200)


STUDY = StudyDef(name="drift", title="Fine-tuning drift", inputs=Inputs, result=DriftSummary,
                 plan=plan, example=example)
