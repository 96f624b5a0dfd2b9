"""Aspect heads as one study (:mod:`analysis.core.study`): its inputs, the result whose JSON is
the one ``python -m analysis aspects heads`` writes, its plan for the job queue and ``STUDY``,
which the CLI and the precomputed example (``python -m analysis precompute aspects``) run."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

from analysis.absa.checkpoints import load_any
from analysis.absa.data import attach_opinions
from analysis.absa.readers import load_absa, read_aste
from analysis.absa.tasks import TASK_NAMES, build_examples
from analysis.aspects.causal import causal_check
from analysis.aspects.gold import KINDS
from analysis.aspects.heads import discover, to_json
from analysis.core.errors import InputError
from analysis.core.models import EXAMPLE_SPEC
from analysis.core.study import Field, Schema, StudyDef, StudyResult


@dataclass(frozen=True)
class Inputs:
    """The model (a spec: ``example``, an ABSA checkpoint folder, any encoder), the gold data
    (``sample``: the bundled sample, or a file) with optional ASTE opinion files, and what is
    reported."""

    model: str = EXAMPLE_SPEC
    data: str = "sample"
    opinions: tuple[str, ...] = ()
    task: str | None = None  # None: the checkpoint's, else qa_m
    top_k: int | None = 10  # heads per kind in the JSON (None: every head)
    max_sentences: int | None = None
    causal: bool = False  # also mask the top-k heads of each kind (checkpoints only)
    skip_invalid: bool = False


@dataclass
class AspectHeadsResult(StudyResult):
    """Every head's scores per kind (the top ``top_k`` of each), the baselines and the pairs
    counted: the JSON of ``aspects heads`` (layer and head 0-indexed)."""

    SCHEMA: ClassVar[Schema] = Schema((
        Field("heads", "ranked heads of each kind, best first: layer, head (0-indexed), kind, "
                       "score (attention mass on the gold words), accuracy, their bootstrap "
                       "95% intervals, n_pairs"),
        Field("baselines", "per kind: the random-head, fixed-position, most-frequent-word and "
                           "uniform baselines' scores"),
        Field("n_pairs", "per kind: the pairs scored"),
        Field("indexing", "how layers and heads are counted (0-indexed)"),
        Field("model", "the model spec"),
        Field("data", "the gold data"),
        Field("task", "the auxiliary-sentence format (qa_m, nli_m, qa_b, nli_b)"),
        Field("seconds", "wall time of the discovery"),
        Field("causal", "per kind: the metrics with its top-k heads masked, next to k random "
                        "heads (--causal only)", optional=True),
    ))

    heads: list
    baselines: dict
    n_pairs: dict
    indexing: str
    model: str
    data: str
    task: str
    seconds: float
    causal: dict | None = None
    summary: list = field(default_factory=list)  # the command line's lines (not in the JSON)

    def json_fields(self) -> dict:
        out = {k: getattr(self, k) for k in self.SCHEMA.names if k != "causal"}
        if self.causal is not None:
            out["causal"] = self.causal
        return out

    def ranked(self) -> dict[str, list[dict]]:
        """Kind -> its heads in the JSON, best first (as :class:`~analysis.aspects.heads.
        Discovery`'s ``ranked``)."""
        return {k: [r for r in self.heads if r["kind"] == k] for k in KINDS}


def _load(spec: str):
    if spec == EXAMPLE_SPEC:
        # lazy: the example's loader imports the fine-tuning pipeline (torch)
        from analysis.absa.example import load_example

        return load_example()
    return load_any(spec)


def plan(inputs: Inputs, models=None):
    """Every head scored on every pair of the gold data (and, with ``causal``, the masking
    check): light work in one process, ``fn(progress)``. ``models``: the model and its card
    (or None) already loaded; else loaded by the spec."""
    loaded, card = models if models is not None else _load(inputs.model)
    if card is not None and inputs.task and inputs.task != card["task"]:
        raise InputError(f"{inputs.model} was fine-tuned for {TASK_NAMES[card['task']]}, "
                         f"not {TASK_NAMES[inputs.task]}: leave --task out or use "
                         f"--task {card['task']}.")
    if inputs.causal and card is None:
        raise InputError("--causal needs a fine-tuned checkpoint folder.")
    task = inputs.task or (card or {}).get("task", "qa_m")
    order = (card or {}).get("pair_order") if card and card["task"] == task else None
    ds = load_absa(inputs.data, skip_invalid=inputs.skip_invalid)
    for path in inputs.opinions:
        ds = attach_opinions(ds, read_aste(path))

    def work(progress):
        t0 = time.perf_counter()
        disc = discover(loaded, ds, task, order, max_sentences=inputs.max_sentences,
                        progress=lambda done, total: progress(
                            0.9 * done / max(total, 1), f"scoring the heads: {done}/{total} pairs"))
        out = to_json(disc, inputs.top_k)
        seconds = round(time.perf_counter() - t0, 1)
        causal = None
        if inputs.causal:
            progress(0.9, "masking the top heads")
            examples = build_examples(ds, task, order)
            causal = {kind: causal_check(loaded.model, loaded.tokenizer, examples, task,
                                         disc.ranked[kind], inputs.top_k or 10, loaded.n_layers,
                                         loaded.n_heads)
                      for kind in KINDS if disc.ranked[kind]}
        summary = []
        for kind in KINDS:
            top = disc.ranked[kind][:3]
            if top:
                summary.append(f"{kind} [{len(disc.hs.scores[kind])} pairs]: " + ", ".join(
                    f"{r['layer']}-{r['head']} ({r['score']:.3f}, acc {r['accuracy']:.2f})"
                    for r in top))
        progress(1.0, "done")
        return AspectHeadsResult(out["heads"], out["baselines"], out["n_pairs"],
                                 out["indexing"], str(inputs.model), str(inputs.data), task,
                                 seconds, causal, summary)

    return work


def example() -> Inputs:
    """The page's first view: the example checkpoint on the first 60 sentences of the bundled
    sample (the page's default), every head of every kind kept (its maps are drawn)."""
    return Inputs(top_k=None, max_sentences=60)


STUDY = StudyDef(name="aspects", title="Aspect heads", inputs=Inputs, result=AspectHeadsResult,
                 plan=plan, example=example)
