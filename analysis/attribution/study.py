"""The Attribution study's one interface (:mod:`analysis.core.study`): :data:`STUDY`, one
input's attributions by every method (``python -m analysis attribution --text``, the page's
explanation), and :data:`FAITHFULNESS`, which method to trust over a corpus (``--faithfulness``,
the page's faithfulness). Where they run is the placement's choice."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.attribution.faithfulness import (KS, SEEDS, Faithfulness, FaithfulnessJob,
                                               examples_dataset)
from analysis.attribution.gradients import IG_STEPS
from analysis.attribution.run import MAX_TOKENS, Attribution, attribute, load_for_attribution
from analysis.core.execution.progress import rate_step
from analysis.core.execution.work import Corpus
from analysis.core.study import StudyDef


@dataclass(frozen=True)
class Inputs:
    """One input: the classifier's (or encoder's) spec, the text and its optional pair, the
    methods (None: every one the model allows), integrated gradients' steps and the most
    tokens an input may have."""

    spec: str
    text: str
    pair: str | None = None
    methods: tuple[str, ...] | None = None
    steps: int = IG_STEPS
    max_tokens: int = MAX_TOKENS


def plan(inputs: Inputs, models=None):
    """Light work on one input, bounded by the token cap (``models``: the loaded model, with
    its classification head when it has one; None: loaded by its spec)."""
    models = models if models is not None else load_for_attribution(inputs.spec)

    def work(progress) -> Attribution:
        progress(0.0, "Explaining the input by every method...")
        result = attribute(models, inputs.text, inputs.pair, methods=inputs.methods,
                           steps=inputs.steps, max_tokens=inputs.max_tokens)
        progress(1.0, f"{len(result.methods)} methods, {result.n_tokens} tokens")
        return result

    return work


STUDY = StudyDef(name="attribution", title="Attribution", inputs=Inputs, result=Attribution,
                 plan=plan)


@dataclass(frozen=True)
class FaithfulnessInputs:
    """Faithfulness over the examples ``texts`` (and ``pairs``) of the classifier ``spec``:
    the methods (None: all it allows), the shares of words removed (``ks``, percent), how
    (``removal``), the random rankings (``seeds``), integrated gradients' steps, the most
    tokens an example may have, and the token cap of the model (None: its own)."""

    spec: str
    texts: tuple[str, ...]
    pairs: tuple[str | None, ...] | None = None
    methods: tuple[str, ...] | None = None
    ks: tuple[int, ...] = KS
    removal: str = "drop"
    seeds: int = SEEDS
    steps: int = IG_STEPS
    max_tokens: int = MAX_TOKENS
    max_length: int | None = None


def faithfulness_plan(inputs: FaithfulnessInputs, models=None) -> Corpus:
    """One corpus job over the examples (``models``: the loaded classifier, or None: loaded by
    its spec where the job runs); where the cluster's workers cannot load the model, it runs
    here."""
    n = len(inputs.texts)
    job = FaithfulnessJob(inputs.spec, inputs.methods, inputs.ks, inputs.removal, inputs.seeds,
                          inputs.steps, inputs.max_tokens)
    return Corpus(job, examples_dataset(inputs.texts, inputs.pairs), unit="examples",
                  max_length=inputs.max_length, here_if_unloadable=True, models=models,
                  start=f"Explaining {n} examples and removing their words...",
                  step=lambda progress: rate_step(progress, digits=2))


FAITHFULNESS = StudyDef(name="attribution-faithfulness", title="Attribution: faithfulness",
                        inputs=FaithfulnessInputs, result=Faithfulness, plan=faithfulness_plan)
