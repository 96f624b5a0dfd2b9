"""The atlas's work: each study's own library call, on the data its page opens on, as one
step (docs/METHODS.md section 18, "What it computes").

A :class:`Step` names the study, describes its work for the job queue (a corpus job, a study
of corpus jobs, or a plain callable: :mod:`analysis.core.execution.work`) and turns the study's
result into its *evidence*: the JSON the study's command writes (``analysis noop``,
``analysis syntax``, ``analysis drift``, ``analysis patching --data``'s ``corpus``, the
Aspect heads' ranking, Head importance's with the loss beside the metric). Evidence is kept on
disk under the cache folder, keyed by the models (and their checkpoints' stamps), the data
and the settings (:func:`cached`, :func:`keep`), so what was computed once is read back.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

from analysis.aspects.heads import PAGE_SENTENCES, discover, to_json as aspects_json
from analysis.absa.readers import SAMPLE_PATH, load_sample
from analysis.absa.tasks import default_pair_order
from analysis.core.corpus import SAMPLE_FILE, read_corpus, sample_corpus
from analysis.drift.job import DriftJob, has_labels, models_of
from analysis.core.errors import InputError
from analysis.core.example import cache_root
from analysis.core.execution.work import Corpus, Study
from analysis.importance import importance_study
from analysis.importance.evalset import absa_eval_set
from analysis.importance.scoring import LOSS, METRIC_LABELS, higher_is_better
from analysis.core.models import checkpoint_stamp
from analysis.noop.corpus import NoopJob
from analysis.patching.corpus import corpus_patching
from analysis.patching.run import pair_max_length
from analysis.syntax.job import HeadsJob
from analysis.syntax.treebank import SAMPLE_TREEBANK, read_conllu, sample_treebank

VERSION = 1  # of the evidence's form: a cache written by another version is not read
CACHE_DIR = "atlas"
NOOP_BATCH = 64  # the No-op statistics page's and command's default
SYNTAX_BATCH = 32  # the Syntax page's and command's
DRIFT_BATCH = 32  # the Drift page's and command's
ASPECT_SENTENCES = PAGE_SENTENCES  # the Aspect heads page's default: heads are ranked on them
TASK_SENTENCES = 40  # Head importance's default: the example's 33 held-out sentences fit


@dataclass
class Models:
    """The loaded models the steps run on: ``after`` (the model the atlas is of, an encoder),
    ``before`` (or None), ``classifier`` (the same model with its task head, or None: no task)
    and ``card`` (its ABSA card: task, pair order, held-out sentences; or None)."""

    after: Any
    before: Any = None
    classifier: Any = None
    card: dict | None = None
    notes: list[str] = field(default_factory=list)


class Data:
    """The data of the steps: ``corpus`` (No-op statistics and Drift: a corpus file, None for
    the bundled sample corpus, its first ``max_examples``), ``treebank`` (Syntax: a CoNLL-U
    file, None for the bundled treebank) and ``absa`` (the bundled ABSA sample: Aspect heads,
    Head importance, patching). Each is read when a step first needs it; its identity (the
    file's bytes hashed, the cap) is known without reading it, so the steps' cache keys are
    too (a first view reads no data)."""

    def __init__(self, corpus: str | None = None, max_examples: int = 200,
                 treebank: str | None = None, max_sentences: int | None = 500):
        self.corpus_file, self.max_examples = corpus, max_examples
        self.treebank_file, self.max_sentences = treebank, max_sentences
        self.corpus_name = ("the bundled sample corpus" if corpus is None
                            else Path(corpus).name)
        self.treebank_name = ("the bundled sample treebank" if treebank is None
                              else Path(treebank).name)

    @cached_property
    def corpus(self):
        if self.corpus_file is None:
            return sample_corpus(self.max_examples)
        return read_corpus(self.corpus_file, max_examples=self.max_examples)

    @cached_property
    def treebank(self):
        if self.treebank_file is None:
            return sample_treebank(self.max_sentences)
        return read_conllu(self.treebank_file, max_sentences=self.max_sentences)

    @cached_property
    def absa(self):
        return load_sample()

    @cached_property
    def corpus_id(self) -> list:
        return [_file_hash(self.corpus_file or SAMPLE_FILE), self.max_examples]

    @cached_property
    def treebank_id(self) -> list:
        return [_file_hash(self.treebank_file or SAMPLE_TREEBANK), self.max_sentences]

    @cached_property
    def absa_id(self) -> str:
        return _file_hash(SAMPLE_PATH)


def _file_hash(path) -> str:
    """A data file's identity: its bytes hashed (a file that cannot be read: its path, and
    the reader says why when the data is read)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return str(path)


def read_data(corpus: str | None = None, max_examples: int = 200, treebank: str | None = None,
              max_sentences: int | None = 500) -> Data:
    """The steps' data (:class:`Data`, read when first needed)."""
    return Data(corpus, max_examples, treebank, max_sentences)


@dataclass
class Step:
    """One study's call: ``name`` (its evidence's key), ``title`` (the page's words),
    ``kind``/``size``/``unit`` (the queue's: its measured speed), ``key`` (the evidence's
    cache key: the models by spec and checkpoint stamp, the data, the settings; known before
    any model is loaded), ``describe(models)`` (the work for the queue) and
    ``evidence(result)``."""

    name: str
    title: str
    kind: str
    size: int
    unit: str
    key: str
    describe: Callable[[Models], Any]
    evidence: Callable[[Any], dict]


def _key(*parts) -> str:
    text = json.dumps([VERSION, *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _model_id(spec: str) -> list:
    return [spec, checkpoint_stamp(spec)]


def cache_folder() -> Path:
    return cache_root() / CACHE_DIR


def cached(step: Step) -> dict | None:
    """The step's evidence kept on disk, or None."""
    try:
        data = json.loads((cache_folder() / f"{step.name}-{step.key}.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("key") == step.key else None


def keep(step: Step, evidence: dict) -> dict:
    """Write the step's evidence to the cache (atomically; a cache that cannot be written is
    skipped: the evidence is returned either way)."""
    evidence = {**evidence, "key": step.key}
    folder = cache_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{step.name}-{step.key}.json"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(evidence), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass
    return evidence


def _cap(max_length: int | None, loaded) -> int | None:
    """The token cap (demo mode's), never above the model's own maximum."""
    return min(int(max_length), loaded.max_length) if max_length else None


def _needs(loaded, what: str):
    if loaded is None:
        raise InputError(f"No {what} is loaded.")
    return loaded


# ---------------------------------------------------------------------------------------------
# The steps


def _noop(name: str, spec: str, data: Data, max_length: int | None) -> Step:
    before = name.endswith("_before")

    def describe(models: Models):
        loaded = _needs(models.before if before else models.after, "model")
        job = NoopJob(loaded.spec, NOOP_BATCH, norms=False)
        return Corpus(job, data.corpus, models=loaded, max_length=_cap(max_length, loaded))

    def evidence(stats) -> dict:  # = analysis noop's JSON
        return {**stats.to_json(), "data": data.corpus_name,
                "seconds": stats.seconds}

    return Step(name, "No-op statistics" + (" (before fine-tuning)" if before else ""),
                "No-op statistics", data.max_examples, "examples",
                _key(name, _model_id(spec), data.corpus_id, max_length),
                describe, evidence)


def _syntax(name: str, spec: str, data: Data, max_length: int | None) -> Step:
    before = name.endswith("_before")

    def describe(models: Models):
        loaded = _needs(models.before if before else models.after, "model")
        return Corpus(HeadsJob(loaded.spec, SYNTAX_BATCH), data.treebank, unit="sentences",
                      models=loaded, max_length=_cap(max_length, loaded))

    def evidence(result) -> dict:  # = analysis syntax's JSON
        return {**result.to_json(), "data": data.treebank_name, "seconds": result.seconds}

    return Step(name, "Syntax heads" + (" (before fine-tuning)" if before else ""),
                "Syntax heads", data.max_sentences or 500, "sentences",
                _key(name, _model_id(spec), data.treebank_id, max_length),
                describe, evidence)


def task_of(card: dict | None) -> tuple[str, str]:
    """(task, pair order) the heads are scored with: the card's, else QA-M (as ``analysis
    aspects heads`` does)."""
    task = (card or {}).get("task") or "qa_m"
    return task, (card or {}).get("pair_order") or default_pair_order(task)


def _aspects(specs: list[str], card: dict | None, data: Data) -> Step:
    task, order = task_of(card)

    def describe(models: Models):
        named = [("after", models.after)] + ([("before", models.before)]
                                             if models.before is not None else [])

        def work(progress):
            out = {}
            for n, (which, loaded) in enumerate(named):
                disc = discover(loaded, data.absa, task, order, max_sentences=ASPECT_SENTENCES,
                                progress=lambda d, t, n=n, which=which: progress(
                                    (n + d / t) / len(named), f"{which}: {d}/{t} pairs"))
                out[which] = aspects_json(disc)
            return out

        return work

    def evidence(out) -> dict:
        return {**out, "task": task, "pair_order": order,
                "data": f"the first {ASPECT_SENTENCES} sentences of the bundled ABSA sample"}

    kind = "Aspect heads" + (", before and after fine-tuning" if len(specs) > 1 else "")
    key = _key("aspects", [_model_id(s) for s in specs], task, order, ASPECT_SENTENCES,
               data.absa_id)
    return Step("aspects", "Aspect heads", kind, ASPECT_SENTENCES, "sentences", key,
                describe, evidence)


def _drift(before_spec: str, spec: str, data: Data, max_length: int | None) -> Step:
    def describe(models: Models):
        before = _needs(models.before, "model before fine-tuning")
        after = models.classifier or models.after
        job = DriftJob(before.spec, after.spec, DRIFT_BATCH, has_labels(data.corpus))
        return Corpus(job, data.corpus, models=models_of(before, after),
                      max_length=_cap(max_length, before))

    def evidence(result) -> dict:  # = analysis drift's JSON
        return {**result.to_json(), "data": data.corpus_name}

    return Step("drift", "Fine-tuning drift", "Fine-tuning drift", data.max_examples,
                "examples", _key("drift", _model_id(before_spec), _model_id(spec),
                                 data.corpus_id, max_length), describe, evidence)


def eval_set(models: Models, data: Data):
    """Head importance's and patching's examples: the checkpoint's held-out sentences of the
    bundled ABSA sample (at most :data:`TASK_SENTENCES`)."""
    return absa_eval_set(_needs(models.classifier, "classifier"), models.card, data.absa,
                         max_sentences=TASK_SENTENCES)


def importance_evidence(result) -> dict:
    """Head importance's JSON (``analysis importance``'s, the chosen metric) with the loss's
    changes and intervals beside the metric's, whether higher is better, and the pruning
    curve's removable share."""
    out = result.to_json()
    out.update({"method": result.method, "description": result.description,
                "n_examples": result.n_examples, "seconds": result.seconds,
                "label": METRIC_LABELS.get(result.metric, result.metric),
                "higher": higher_is_better(result.metric),
                "all": {m: {"intact": result.intact[m], "heads": result.heads[m].tolist(),
                            "heads_ci": result.heads_ci[m].tolist(),
                            "label": METRIC_LABELS.get(m, m), "higher": higher_is_better(m)}
                        for m in (result.metric, LOSS)}})
    if result.pruning is not None:
        out["pruning"]["prunable"] = {k: float(v) for k, v in
                                      result.pruning["prunable"].items()}
        out["pruning"]["tolerance"] = float(result.pruning["tolerance"])
    return out


METHOD_TITLES = {"uniform": "attention spread evenly", "mask": "output zeroed"}


def _importance(spec: str, data: Data, method: str) -> Step:
    prune = method == "uniform"  # the pruning curve of the page's default way

    def describe(models: Models):
        ev = eval_set(models, data)

        def study(progress, run):
            return importance_study(models.classifier, ev, method=method, prune=prune,
                                    progress=progress, run=run)

        return Study(study, models.classifier.spec, ev.n_examples, here_if_unloadable=True)

    return Step(f"importance_{method}", f"Head importance ({METHOD_TITLES[method]})",
                "Head importance", TASK_SENTENCES * 5, "examples",
                _key("importance", _model_id(spec), method, prune, TASK_SENTENCES,
                     data.absa_id),
                describe, importance_evidence)


def _patching(spec: str, data: Data, contrast: str) -> Step:
    def describe(models: Models):
        cls, ev = models.classifier, eval_set(models, data)

        def work(progress):
            return corpus_patching(cls, ev, contrast=contrast,
                                   max_length=pair_max_length(cls, models.card),
                                   importance=False, marks=False, progress=progress)

        return work

    def evidence(cr) -> dict:  # = analysis patching --data's "corpus" (without importance)
        return {**cr.to_json(), "seconds": cr.seconds}

    return Step("patching", "Causal patching (held-out pairs)", "Patching the held-out pairs",
                TASK_SENTENCES * 5, "pairs",
                _key("patching", _model_id(spec), contrast, TASK_SENTENCES, data.absa_id),
                describe, evidence)


def steps(model: str, before: str | None, data: Data, card: dict | None, *,
          contrast: str = "aspect", max_length: int | None = None) -> list[Step]:
    """Every step of the atlas of ``model`` (and ``before``), in the order they run: the
    model's own studies, the model before fine-tuning's, their comparison, then the task's
    (with an ABSA ``card``: the model's task, pair order and held-out sentences)."""
    out = [_noop("noop", model, data, max_length), _syntax("syntax", model, data, max_length)]
    if before:
        out += [_noop("noop_before", before, data, max_length),
                _syntax("syntax_before", before, data, max_length)]
    out.append(_aspects([model] + ([before] if before else []), card, data))
    if before:
        out.append(_drift(before, model, data, max_length))
    if card is not None and card.get("task"):
        out += [_importance(model, data, "uniform"), _importance(model, data, "mask"),
                _patching(model, data, contrast)]
    return out
