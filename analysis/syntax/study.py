"""The Syntax study's one interface (:mod:`analysis.core.study`): :data:`STUDY`, the accuracy of
every head at finding each relation's dependency heads over a treebank (the ``syntax`` command,
the page's heads), and :data:`PROBES`, the structural probes of every layer (the ``probe``
command, the page's probes tab). Where they run is the placement's choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.core.execution.work import Corpus
from analysis.core.models import DEFAULT_SPEC, load_model
from analysis.core.study import StudyDef
from analysis.syntax.heads import SyntaxResult
from analysis.syntax.job import HeadsJob
from analysis.syntax.probes import ProbeResult, probe_layers
from analysis.syntax.treebank import sample_treebank

UNIT = "sentences"


@dataclass(frozen=True)
class Inputs:
    """The heads' inputs: the model's spec, the treebank (a Dataset with CoNLL-U columns), the
    sentences per forward and the token cap (None: the model's own)."""

    spec: str
    treebank: Any
    batch_size: int = 32
    max_length: int | None = None


def _sentences(progress):
    return lambda done, total: progress(done / max(total, 1), f"{done} / {total} {UNIT}")


def plan(inputs: Inputs, models=None) -> Corpus:
    """One corpus job (``models``: the loaded model, or None: loaded by its spec where the
    job runs)."""
    return Corpus(HeadsJob(inputs.spec, inputs.batch_size), inputs.treebank, unit=UNIT,
                  max_length=inputs.max_length, models=models, step=_sentences)


def example() -> Inputs:
    """The page's first view: the default model's heads over the bundled sample treebank (its
    104 sentences; the page's cap is 500)."""
    return Inputs(DEFAULT_SPEC, sample_treebank(max_sentences=500))


STUDY = StudyDef(name="syntax", title="Syntax", inputs=Inputs, result=SyntaxResult, plan=plan,
                 example=example)


@dataclass(frozen=True)
class ProbeInputs:
    """The probes' inputs: trained on ``train``, evaluated on ``eval`` (None: the last
    ``eval_share`` of ``train`` is held out), of rank ``rank``, with ``seed``."""

    spec: str
    train: Any
    eval: Any = None
    rank: int = 64
    seed: int = 0
    batch_size: int = 32
    eval_share: float = 0.25


def probes_plan(inputs: ProbeInputs, models=None):
    """The word vectors of both sets and the probes of every layer, in the worker thread
    (``models``: the loaded model, or None: loaded by its spec)."""
    models = models if models is not None else load_model(inputs.spec)

    def work(progress) -> ProbeResult:
        return probe_layers(models, inputs.train, inputs.eval, rank=inputs.rank,
                            seed=inputs.seed, batch_size=inputs.batch_size,
                            eval_share=inputs.eval_share,
                            progress=lambda d, t: progress(d / max(t, 1), f"Probes: {d} / {t}"))

    return work


PROBES = StudyDef(name="probe", title="Syntax: structural probes", inputs=ProbeInputs,
                  result=ProbeResult, plan=probes_plan)
