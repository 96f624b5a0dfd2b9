"""The atlas study, one call for the page and the CLI (docs/METHODS.md section 18):
:class:`Inputs` (what it needs besides the loaded models), :func:`plan` (ONE description of
the work for the job queue), :func:`compute` (every step's evidence, cached or computed, then
the assembly) and :class:`Result` (per head: each study's facts, its role, its use; the model
verdict's numbers), whose JSON keys are declared once in :data:`SCHEMA`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, ClassVar

import numpy as np

from analysis.aspects.heads import kind_verdict
from analysis.atlas import facts as F
from analysis.atlas.steps import Data, Models, Step, cached, keep, read_data, steps
from analysis.core.cards import read_card_file, trained_layers
from analysis.drift.pair import check_compatible
from analysis.core.errors import DataError, InputError
from analysis.core.execution.work import Study
from analysis.core.study import Field, Schema, StudyDef, StudyResult
from analysis.importance.evalset import load_classifier
from analysis.importance.pruning import n_removed
from analysis.core.models import (DEFAULT_SPEC, EXAMPLE_SPEC, ModelLoadError, load_model,
                                  resolve_spec)

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Inputs:
    """Everything the atlas needs besides the loaded models: the model and the model before
    fine-tuning (None: none), the corpus of No-op statistics and Drift (None: the bundled
    sample corpus) and its cap, the treebank (None: the bundled one), patching's
    counterfactual kind, the token cap (None: the model's) and the rules' thresholds."""

    model: str = EXAMPLE_SPEC
    before: str | None = DEFAULT_SPEC
    data: str | None = None
    max_examples: int = 200
    treebank: str | None = None
    contrast: str = "aspect"
    max_length: int | None = None
    thresholds: F.Thresholds = F.DEFAULT


def load_models(inputs: Inputs, loader=load_model, classifier=load_classifier) -> Models:
    """The models of ``inputs``: the model (an encoder), the model before (when it has the same
    layers, heads and tokenizer; else a note) and the model with its task head and ABSA card
    (else a note: the task is not measured)."""
    models = Models(loader(inputs.model))
    if before_of(inputs):
        try:
            before = loader(inputs.before)
            check_compatible(before, models.after)
            models.before = before
        except (InputError, ModelLoadError) as exc:
            models.notes.append(f"No model before fine-tuning: {exc}")
    if card_of(inputs.model) is not None:
        try:
            models.classifier, models.card = classifier(inputs.model)
        except (InputError, ModelLoadError) as exc:
            models.notes.append(f"The task is not measured: {exc}")
    return models


def before_of(inputs: Inputs) -> str | None:
    """The model before fine-tuning's spec, None when there is none (or it is the model)."""
    return inputs.before if inputs.before and inputs.before != inputs.model else None


def card_of(spec: str) -> dict | None:
    """The model's ABSA card (task, pair order, held-out sentences), None without one: the
    task's steps (Head importance, patching) need it."""
    card = read_card_file(spec)
    return card if card and card.get("task") else None


def name_of(spec: str | None) -> str | None:
    """A model's display name from its spec (nothing loaded)."""
    if not spec:
        return None
    try:
        return resolve_spec(spec)[1]
    except ModelLoadError:
        return str(spec)


def plan_steps(inputs: Inputs, data: Data) -> list[Step]:
    """The atlas's steps for ``inputs`` (:func:`analysis.atlas.steps.steps`): known, with their
    cache keys, before any model is loaded."""
    return steps(inputs.model, before_of(inputs), data, card_of(inputs.model),
                 contrast=inputs.contrast, max_length=inputs.max_length)


# ---------------------------------------------------------------------------------------------
# The result

SCHEMA = Schema((
    Field("layers", "number of layers"),
    Field("heads_per_layer", "heads in each layer"),
    Field("heads", "a list of `layers` lists of head objects (0-indexed layer and head): role, "
                   "roles, family, used ('yes', 'no', 'not measured'), changed, size, sep, cls, "
                   "punct, self, prev, next, entropy (No-op statistics, as `analysis noop` "
                   "writes them), importance and importance_ci (the metric's change with the "
                   "head's attention spread evenly, as `analysis importance` writes it), "
                   "importance_mask, patching and patching_ci (the corpus mean share, as "
                   "`analysis patching --data` writes it), cosine (as `analysis drift` writes "
                   "it), statement, disagreement and facts (every study's numbers)"),
    Field("before", "the same head objects for the model before fine-tuning (no task: used is "
                    "'not measured'), or null"),
    Field("verdict", "the model verdict: counts per role and family, heads used, the pruning "
                     "curve's share, the layers fine-tuning changed and could not change"),
    Field("reading", "the verdict in plain sentences"),
    Field("disagreements", "heads whose role and use disagree, in plain words"),
    Field("thresholds", "the role and use rules' thresholds"),
    Field("model", "the model, its name and the model before"),
    Field("studies", "each study's data and seconds"),
    Field("model_facts", "the model-level numbers the verdict is read from"),
    Field("notes", "what was not measured and why"),
))


def derive(facts: dict, t: F.Thresholds) -> dict:
    """A head's role, use and words from its facts under ``t``."""
    found = F.roles(facts, t)
    label = F.role_label(found)
    layer, head = facts["layer"], facts["head"]
    return {"roles": found, "role": label, "family": F.family(label),
            "used": F.used(facts, t), "changed": F.changed(facts, t),
            "size": F.use_size(facts),
            "statement": F.head_statement(layer, head, facts, t),
            "disagreement": F.disagreement(layer, head, facts, t)}


def _num(x):
    return None if x is None or not np.isfinite(x) else float(x)


def head_json(facts: dict, t: F.Thresholds) -> dict:
    """One head's object: its derived role and use, the issue's flat keys, and its facts."""
    d = derive(facts, t)
    noop = facts.get("noop") or {}
    imp = facts.get("importance") or {}
    pat = facts.get("patching")
    return {"layer": facts["layer"], "head": facts["head"],
            "name": F.head_name(facts["layer"], facts["head"]), **d,
            **{k: _num(noop.get(k)) for k in F.NOOP_KEYS},
            "importance": _num(imp["uniform"]["change"]) if "uniform" in imp else None,
            "importance_ci": imp["uniform"]["ci"] if "uniform" in imp else None,
            "importance_mask": _num(imp["mask"]["change"]) if "mask" in imp else None,
            "patching": _num(pat["share"]) if pat else None,
            "patching_ci": pat["ci"] if pat else None,
            "cosine": _num((facts.get("drift") or {}).get("cosine")),
            "facts": facts}


@dataclass
class Result(StudyResult):
    """The atlas of one model: per head its facts (``facts``: [L][H] dicts; ``facts_before``
    the model before's, or None), the model-level numbers (``model_facts``), the thresholds
    the roles were read with, each study's data and time, and notes."""

    SCHEMA: ClassVar[Schema] = SCHEMA

    model: str
    model_name: str
    n_layers: int
    n_heads: int
    facts: list[list[dict]]
    facts_before: list[list[dict]] | None = None
    before: str | None = None
    before_name: str | None = None
    model_facts: dict = field(default_factory=dict)
    thresholds: F.Thresholds = F.DEFAULT
    studies: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def with_thresholds(self, t: F.Thresholds) -> "Result":
        """The same facts read with other thresholds (the page's controls)."""
        return replace(self, thresholds=t)

    def heads(self, before: bool = False) -> list[dict]:
        """Every head's object (:func:`head_json`), layer by layer (derived once per result and
        side; treat them as read-only)."""
        if before not in self._memo:
            grid = self.facts_before if before else self.facts
            self._memo[before] = [head_json(f, self.thresholds) for row in grid or []
                                  for f in row]
        return self._memo[before]

    def json_fields(self) -> dict:
        # lazy: the reading imports this module (its Result)
        from analysis.atlas.reading import disagreements, reading, verdict

        def grid(before: bool):
            flat = self.heads(before)
            return [flat[i * self.n_heads:(i + 1) * self.n_heads] for i in range(self.n_layers)]

        out = {"layers": self.n_layers, "heads_per_layer": self.n_heads, "heads": grid(False),
               "before": None if self.facts_before is None else {
                   "model": self.before, "name": self.before_name, "heads": grid(True)},
               "verdict": verdict(self), "reading": reading(self),
               "disagreements": disagreements(self), "thresholds": self.thresholds.to_dict(),
               "model": {"spec": self.model, "name": self.model_name,
                         "before": self.before, "before_name": self.before_name},
               "studies": self.studies, "model_facts": self.model_facts,
               "notes": list(self.notes)}
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Result":
        """The result back from its JSON; only each head's ``facts``, ``model_facts`` and the
        thresholds are read (the rest is derived from them again: a precomputed file keeps
        no more, :func:`analysis.atlas.precomputed.compact`)."""
        model, before = data["model"], data.get("before")
        return cls(model["spec"], model["name"], int(data["layers"]),
                   int(data["heads_per_layer"]),
                   [[h["facts"] for h in row] for row in data["heads"]],
                   [[h["facts"] for h in row] for row in before["heads"]] if before else None,
                   model.get("before"), model.get("before_name"), data.get("model_facts", {}),
                   F.Thresholds.from_dict(data.get("thresholds")), data.get("studies", {}),
                   list(data.get("notes", [])))


# ---------------------------------------------------------------------------------------------
# Assembly: the steps' evidence -> facts per head


def _ranked(aspects: dict) -> tuple[dict, dict]:
    """(ranked rows per kind, verdict per kind) of one model's Aspect heads evidence."""
    ranked: dict[str, list] = {}
    for row in aspects["heads"]:
        ranked.setdefault(row["kind"], []).append(row)
    base = aspects.get("baselines") or {}
    return ranked, {k: kind_verdict(v, base.get(k) or {}) for k, v in ranked.items()}


def _importance(method: str, e: dict, layer: int, head: int) -> dict:
    """Head importance's facts of one head and one way (the chosen metric's), with the mean
    loss's change and interval beside them (shown on the evidence card, not used by the
    rules)."""
    out = F.importance_facts(method, e["metric"], e["label"], e["higher"], e["heads"],
                             e["heads_ci"], layer, head)
    loss = (e.get("all") or {}).get("loss")
    if loss and e["metric"] != "loss":
        out["loss"] = {"change": float(loss["heads"][layer][head]),
                       "ci": [float(x) for x in loss["heads_ci"][layer][head]]}
    return out


def facts_grid(evidence: dict, L: int, H: int, t: F.Thresholds, before: bool = False
               ) -> list[list[dict]]:
    """Every head's facts from the steps' evidence (the model's, or ``before``'s)."""
    noop = evidence.get("noop_before" if before else "noop")
    syntax = evidence.get("syntax_before" if before else "syntax")
    aspects = (evidence.get("aspects") or {}).get("before" if before else "after")
    ranked, verdicts = _ranked(aspects) if aspects else ({}, {})
    drift = evidence.get("drift")
    imp = {} if before else {m: evidence[f"importance_{m}"] for m in ("uniform", "mask")
                             if f"importance_{m}" in evidence}
    pat = None if before else evidence.get("patching")
    grid = []
    for layer in range(L):
        row = []
        for head in range(H):
            f: dict = {"layer": layer, "head": head}
            if noop:
                f["noop"] = F.noop_facts(noop["metrics"], noop.get("uniform_entropy"),
                                         layer, head)
            if syntax:
                f["syntax"] = F.syntax_facts(syntax["relations"], layer, head, t.syntax_min)
            if ranked:
                f["aspects"] = F.aspect_facts(ranked, verdicts, layer, head)
            if imp:
                f["importance"] = {m: _importance(m, e, layer, head) for m, e in imp.items()}
            if pat:
                f["patching"] = F.patching_facts(pat["heads"], pat["heads_ci"],
                                                 pat["contrast"], layer, head)
            if drift:
                f["drift"] = F.drift_facts(drift["cosine"], layer, head)
            row.append(f)
        grid.append(row)
    return grid


def model_facts(evidence: dict, card: dict | None, L: int, H: int) -> dict:
    """The model-level numbers the verdict reads: the intact task metric and the pruning
    curve's removable share (Head importance, attention spread evenly), the layers' mean
    cosine with its interval (Drift), what the fine-tune trained (the card)."""
    out: dict = {}
    imp = evidence.get("importance_uniform")
    if imp:
        out["task"] = {"metric": imp["metric"], "label": imp["label"], "intact": imp["intact"],
                       "data": imp["description"], "n_examples": imp["n_examples"]}
        pr = imp.get("pruning")
        if pr and "prunable" in pr:
            f = pr["prunable"]["by_importance"]
            out["pruning"] = {"fraction": f, "heads": n_removed(f, L * H),
                              "random_fraction": pr["prunable"]["random_mean"],
                              "tolerance": pr["tolerance"], "last": pr["fractions"][-1]}
    if evidence.get("patching"):
        out["contrast"] = evidence["patching"]["contrast"]
    drift = evidence.get("drift")
    if drift:
        cos = np.asarray(drift["cosine"], dtype=float)
        out["layers_cosine"] = [float(x) for x in cos.mean(1)]
        out["layers_ci"] = drift.get("layers_ci")
    if evidence.get("drift"):
        tr = trained_layers(card, L)
        out["trained"] = {"kind": tr.kind, "frozen": list(tr.frozen), "words": tr.words(),
                          "frozen_words": tr.frozen_words()}
    return out


def assemble(evidence: dict, inputs: Inputs, notes=(), studies: dict | None = None
             ) -> Result:
    """The atlas of ``inputs``' model from its steps' ``evidence`` (:func:`analysis.atlas.
    steps.steps`' names -> their evidence; a step the study refused holds its ``error``)."""
    notes = list(notes) + [f"{e['title']}: not measured ({e['error']})"
                           for e in evidence.values() if "error" in e]
    evidence = {k: e for k, e in evidence.items() if "error" not in e}
    noop = evidence.get("noop")
    if noop is None:
        raise DataError("No-op statistics are missing: the atlas has no heads to show.")
    L, H, t = int(noop["n_layers"]), int(noop["n_heads"]), inputs.thresholds
    before = before_of(inputs) if "noop_before" in evidence else None
    return Result(inputs.model, name_of(inputs.model), L, H, facts_grid(evidence, L, H, t),
                  facts_grid(evidence, L, H, t, before=True) if before else None,
                  before, name_of(before), model_facts(evidence, card_of(inputs.model), L, H),
                  t, studies or {}, notes)


# ---------------------------------------------------------------------------------------------
# Running it


def run_step(step: Step, models: Models, progress: Progress, runner=None) -> dict:
    """The step's evidence: its work run by ``runner(description)`` (default: in this
    process), or, when the study refuses the data or the models (one plain line: no pair
    changes the output, no task head...), that line as the step's ``error``."""
    t0 = time.perf_counter()
    try:
        work = step.describe(models)
        result = runner(work) if runner else work(progress)
    except (DataError, InputError) as exc:
        return {"error": str(exc), "title": step.title}
    return {"seconds": time.perf_counter() - t0, **step.evidence(result)}


def missing(todo: list[Step]) -> list[Step]:
    """The steps whose evidence is not kept yet."""
    return [s for s in todo if cached(s) is None]


def compute(inputs: Inputs, models: Models | None = None, data: Data | None = None, *,
            progress: Progress | None = None, use_cache: bool = True) -> Result:
    """Every step's evidence (kept ones read back, the others computed one study at a time in
    this process and kept), then the atlas; ``models`` are loaded only when a step is
    missing."""
    say = progress or (lambda f, t: None)
    t0 = time.perf_counter()
    data = data or read_data(inputs.data, inputs.max_examples, inputs.treebank)
    todo = plan_steps(inputs, data)
    evidence, studies = {}, {}
    for i, step in enumerate(todo):
        ev = cached(step) if use_cache else None
        fresh = ev is None
        if fresh:
            models = models or load_models(inputs)

            def sub(f, text, i=i, step=step):
                say((i + f) / len(todo), f"{step.title}: {text}")

            sub(0.0, "starting")
            ev = keep(step, run_step(step, models, sub))
        evidence[step.name] = ev
        studies[step.name] = {"title": step.title, "data": ev.get("data") or ev.get(
            "description"), "seconds": ev.get("seconds"), "cached": not fresh}
    say(1.0, "done")
    result = assemble(evidence, inputs, models.notes if models else (), studies)
    result.seconds = time.perf_counter() - t0
    return result


def plan(inputs: Inputs, models: Models | None = None) -> Study:
    """ONE description of the atlas's work for the job queue: each missing step in turn
    (in the worker, with progress), then the assembly."""
    def study(progress, run):
        return compute(inputs, models, progress=progress)

    return Study(study, inputs.model, here_if_unloadable=True)


# the study interface (analysis.core.study); here, not in the package's __init__, which
# imports nothing (the studies' readings import analysis.atlas.facts)
STUDY = StudyDef(name="atlas", title="Head atlas", inputs=Inputs, result=Result, plan=plan,
                 example=Inputs)
