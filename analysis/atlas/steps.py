"""The atlas's work: each study's own library call, on the data its page opens on, as one
step (docs/METHODS.md section 17, "What it computes").

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
from pathlib import Path
from typing import Any, Callable

from analysis.aspects.heads import discover, to_json as aspects_json
from analysis.absa.readers import load_sample
from analysis.absa.tasks import default_pair_order
from analysis.core.corpus import corpus_fingerprint, read_corpus, sample_corpus
from analysis.drift.job import DriftJob, has_labels, models_of
from analysis.core.example import cache_root
from analysis.core.execution.work import Corpus, Study
from analysis.importance import importance_study
from analysis.importance.evalset import absa_eval_set
from analysis.importance.scoring import LOSS, METRIC_LABELS, higher_is_better
from analysis.core.measures import CLI_METRICS
from analysis.core.models import checkpoint_stamp
from analysis.noop.corpus import NoopJob
from analysis.patching.corpus import corpus_patching
from analysis.patching.run import pair_max_length
from analysis.syntax.job import HeadsJob
from analysis.syntax.treebank import read_conllu, sample_treebank, treebank_fingerprint

VERSION = 1  # of the evidence's form: a cache written by another version is not read
CACHE_DIR = "atlas"
NOOP_BATCH = 64  # the No-op statistics page's and command's default
SYNTAX_BATCH = 32  # the Syntax page's and command's
DRIFT_BATCH = 32  # the Drift page's and command's
ASPECT_SENTENCES = 60  # the Aspect heads page's default: the sentences heads are ranked on
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


@dataclass
class Data:
    """The data of the steps: ``corpus`` (No-op statistics and Drift), ``treebank``
    (Syntax), ``absa`` (the bundled ABSA sample: Aspect heads, Head importance, patching)."""

    corpus: Any
    corpus_name: str
    treebank: Any
    treebank_name: str
    absa: Any


def read_data(corpus: str | None = None, max_examples: int = 200, treebank: str | None = None,
              max_sentences: int | None = 500) -> Data:
    """The steps' data: ``corpus`` (a corpus file; None: the bundled sample corpus), at most
    ``max_examples``; ``treebank`` (a CoNLL-U file; None: the bundled treebank)."""
    ds = sample_corpus(max_examples) if corpus is None else read_corpus(
        corpus, max_examples=max_examples)
    tb = sample_treebank(max_sentences) if treebank is None else read_conllu(
        treebank, max_sentences=max_sentences)
    return Data(ds, "the bundled sample corpus" if corpus is None else Path(corpus).name,
                tb, "the bundled sample treebank" if treebank is None else Path(treebank).name,
                load_sample())


@dataclass
class Step:
    """One study's call: ``name`` (its evidence's key), ``title`` (the page's words),
    ``kind``/``size``/``unit`` (the queue's: its measured speed), ``key`` (the evidence's
    cache key), ``describe()`` (the work for the queue) and ``evidence(result)``."""

    name: str
    title: str
    kind: str
    size: int
    unit: str
    key: str
    describe: Callable[[], Any]
    evidence: Callable[[Any], dict]


def _key(*parts) -> str:
    text = json.dumps([VERSION, *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _model_id(loaded) -> list:
    return [loaded.spec, checkpoint_stamp(loaded.spec), loaded.max_length]


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


# ---------------------------------------------------------------------------------------------
# The steps


def _noop(name: str, loaded, data: Data, max_length: int | None) -> Step:
    job = NoopJob(loaded.spec, NOOP_BATCH, norms=False)

    def evidence(stats) -> dict:  # = analysis noop's JSON
        return {**stats.to_json_dict(CLI_METRICS), "data": data.corpus_name,
                "seconds": stats.seconds}

    return Step(name, f"No-op statistics ({loaded.name})", "No-op statistics",
                len(data.corpus), "examples",
                _key(name, _model_id(loaded), corpus_fingerprint(data.corpus), max_length),
                lambda: Corpus(job, data.corpus, models=loaded, max_length=max_length),
                evidence)


def _syntax(name: str, loaded, data: Data, max_length: int | None) -> Step:
    def evidence(result) -> dict:  # = analysis syntax's JSON
        return {**result.to_json(), "data": data.treebank_name, "seconds": result.seconds}

    return Step(name, f"Syntax heads ({loaded.name})", "Syntax heads", len(data.treebank),
                "sentences", _key(name, _model_id(loaded), treebank_fingerprint(data.treebank),
                                  max_length),
                lambda: Corpus(HeadsJob(loaded.spec, SYNTAX_BATCH), data.treebank,
                               unit="sentences", models=loaded, max_length=max_length),
                evidence)


def task_of(card: dict | None) -> tuple[str, str]:
    """(task, pair order) the heads are scored with: the card's, else QA-M (as ``analysis
    aspects heads`` does)."""
    task = (card or {}).get("task") or "qa_m"
    return task, (card or {}).get("pair_order") or default_pair_order(task)


def _aspects(models: Models, data: Data) -> Step:
    task, order = task_of(models.card)
    named = [("after", models.after)] + ([("before", models.before)] if models.before else [])

    def work(progress):
        out = {}
        for n, (which, loaded) in enumerate(named):
            disc = discover(loaded, data.absa, task, order, max_sentences=ASPECT_SENTENCES,
                            progress=lambda d, t, n=n: progress(
                                (n + d / t) / len(named), f"{which}: {d}/{t} pairs"))
            out[which] = aspects_json(disc)
        return out

    def evidence(out) -> dict:
        return {**out, "task": task, "pair_order": order,
                "data": f"the first {ASPECT_SENTENCES} sentences of the bundled ABSA sample"}

    kind = "Aspect heads" + (", before and after fine-tuning" if models.before else "")
    key = _key("aspects", [_model_id(m) for _, m in named], task, order, ASPECT_SENTENCES)
    return Step("aspects", "Aspect heads", kind, ASPECT_SENTENCES, "sentences", key,
                lambda: work, evidence)


def _drift(models: Models, data: Data, max_length: int | None) -> Step:
    before, after = models.before, models.classifier or models.after
    job = DriftJob(before.spec, after.spec, DRIFT_BATCH, has_labels(data.corpus))

    def evidence(result) -> dict:  # = analysis drift's JSON
        return {**result.to_json(), "data": data.corpus_name}

    return Step("drift", "Fine-tuning drift", "Fine-tuning drift", len(data.corpus), "examples",
                _key("drift", _model_id(before), _model_id(after),
                     corpus_fingerprint(data.corpus), max_length),
                lambda: Corpus(job, data.corpus, models=models_of(before, after),
                               max_length=max_length), evidence)


def eval_set(models: Models, data: Data):
    """Head importance's and patching's examples: the checkpoint's held-out sentences of the
    bundled ABSA sample (at most :data:`TASK_SENTENCES`)."""
    return absa_eval_set(models.classifier, models.card, data.absa,
                         max_sentences=TASK_SENTENCES)


def importance_evidence(result) -> dict:
    """Head importance's JSON (``analysis importance``'s, the chosen metric) with every metric's
    changes and intervals beside it (the loss too), whether higher is better, and the pruning
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


def _importance(models: Models, ev, method: str) -> Step:
    prune = method == "uniform"  # the pruning curve of the page's default way

    def study(progress, run):
        return importance_study(models.classifier, ev, method=method, prune=prune,
                                progress=progress, run=run)

    return Step(f"importance_{method}", f"Head importance ({METHOD_TITLES[method]})",
                "Head importance", ev.n_examples, "examples",
                _key("importance", _model_id(models.classifier), method, prune,
                     ev.description, ev.texts),
                lambda: Study(study, models.classifier.spec, ev.n_examples,
                              here_if_unloadable=True), importance_evidence)


METHOD_TITLES = {"uniform": "attention spread evenly", "mask": "output zeroed"}


def _patching(models: Models, ev, contrast: str) -> Step:
    cls = models.classifier

    def work(progress):
        return corpus_patching(cls, ev, contrast=contrast,
                               max_length=pair_max_length(cls, models.card), importance=False,
                               marks=False, progress=progress)

    def evidence(cr) -> dict:  # = analysis patching --data's "corpus" (without importance)
        return {**cr.to_json(), "seconds": cr.seconds}

    return Step("patching", "Causal patching (held-out pairs)", "Patching the held-out pairs",
                ev.n_examples, "pairs",
                _key("patching", _model_id(cls), contrast, ev.description, ev.texts),
                lambda: work, evidence)


def steps(models: Models, data: Data, *, contrast: str = "aspect",
          max_length: int | None = None) -> list[Step]:
    """Every step of the atlas of ``models``, in the order they run: the model's own studies,
    the model before fine-tuning's, their comparison, then the task's (only with a task head
    and an ABSA card)."""
    out = [_noop("noop", models.after, data, max_length),
           _syntax("syntax", models.after, data, max_length)]
    if models.before is not None:
        out += [_noop("noop_before", models.before, data, max_length),
                _syntax("syntax_before", models.before, data, max_length)]
    out.append(_aspects(models, data))
    if models.before is not None:
        out.append(_drift(models, data, max_length))
    if models.classifier is not None and models.card is not None:
        ev = eval_set(models, data)
        out += [_importance(models, ev, "uniform"), _importance(models, ev, "mask"),
                _patching(models, ev, contrast)]
    return out
