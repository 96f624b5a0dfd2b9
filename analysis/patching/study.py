"""Causal patching as one study (:mod:`analysis.core.study`): its inputs, the result whose JSON
is the one ``python -m analysis patching`` writes (one pair's keys, and the corpus view under
``corpus``), its plan for the job queue and ``STUDY``, which the CLI and the precomputed
example (``python -m analysis precompute patching``) run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples
from analysis.core.errors import InputError
from analysis.core.models import EXAMPLE_SPEC
from analysis.core.study import Field, Schema, StudyDef, StudyResult
from analysis.importance.evalset import absa_eval_set, load_classifier, load_eval_set
from analysis.patching.corpus import CorpusPatching, corpus_patching
from analysis.patching.counterfactuals import opinion_pool, suggest
from analysis.patching.run import PairPatching, default_pair, pair_max_length, patch_pair


@dataclass(frozen=True)
class Inputs:
    """The classifier (a spec), one pair and its counterfactual (or ``opening``: the pair the
    page opens on for an ABSA checkpoint, chosen with the model), the direction, and for the
    corpus view its ABSA data (``sample``: the checkpoint's held-out sentences)."""

    model: str = EXAMPLE_SPEC
    text: str | None = None
    pair: str | None = None
    counter_text: str | None = None
    counter_pair: str | None = None
    direction: str = "noising"
    data: str | None = None
    contrast: str = "aspect"
    max_examples: int | None = None
    importance: bool = True
    # the page's opening pair: the first held-out review whose opposite-opinion counterfactual
    # changes the answer (analysis.patching.run.default_pair), and its first such
    # counterfactual, instead of text and counter_text
    opening: bool = False


# one pair's keys (README "Causal patching"), absent when only the corpus view was asked for
PAIR_FIELDS = (
    Field("tokens", "the input's tokens", True),
    Field("counter_tokens", "the counterfactual's tokens", True),
    Field("classes", "the two classes compared: the input's answer, the counterfactual's", True),
    Field("predictions", "clean, counter: each input's predicted class", True),
    Field("clean", "the logit difference of the two classes on the input", True),
    Field("counter", "the logit difference on the counterfactual", True),
    Field("direction", "noising or denoising", True),
    Field("heads", "layers x heads (0-indexed): the share of the change each head's output "
                   "carries (0: none, 1: all)", True),
    Field("heads_probability", "layers x heads: the change of P(the input's answer)", True),
    Field("residual", "layers x tokens: the share carried by the residual stream at one "
                      "position", True),
    Field("attention", "layers x tokens: the same for the attention output", True),
    Field("mlp", "layers x tokens: the same for the MLP output", True),
    Field("differs", "the positions whose token differs between the two inputs", True),
    Field("notes", "notes on the inputs (truncation, a weak contrast)", True),
)


@dataclass
class PatchingResult(StudyResult):
    """One pair's patching and/or the corpus view over held-out ABSA pairs."""

    SCHEMA: ClassVar[Schema] = Schema(PAIR_FIELDS + (
        Field("corpus", "the per-head map averaged over the held-out pairs, with bootstrap "
                        "95% intervals, Head importance's drops and their Spearman", True),))

    pair: PairPatching | None = None
    corpus: CorpusPatching | None = None

    def json_fields(self) -> dict:
        out = dict(self.pair.to_json()) if self.pair is not None else {}
        if self.corpus is not None:
            out["corpus"] = self.corpus.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict) -> PatchingResult:
        cls.SCHEMA.check(data)
        return cls(PairPatching.from_json(data) if "tokens" in data else None,
                   CorpusPatching.from_json(data["corpus"]) if "corpus" in data else None)

    def said(self) -> list[str]:
        """What the command line says of it."""
        out = []
        if self.pair is not None:
            a, b = self.pair.classes
            out.append(f"{len(self.pair.tokens)} tokens, '{a}' vs '{b}', "
                       f"{self.pair.seconds:.1f}s")
        if self.corpus is not None:
            out.append(f"corpus: {self.corpus.n_pairs} pairs, {self.corpus.seconds:.0f}s")
        return out


def opening_pair(loaded, ev, max_length: int) -> tuple[str, str, str, str]:
    """(text, pair, counter text, counter pair) the page opens on: the review and aspect of
    :func:`analysis.patching.run.default_pair` and its first opposite-opinion counterfactual
    (another aspect when it has none)."""
    i, category = default_pair(loaded, ev, max_length)
    row = ev.sentences[i]
    ex = next(e for e in build_examples(ev.sentences.select([i]), ev.task, ev.pair_order)
              if e.category == category)
    found = suggest(loaded.tokenizer, row, ex, ev.task, opinion_pool(ev.sentences), max_length)
    s = (found.get("opinion") or found.get("aspect") or [None])[0]
    if s is None:
        raise InputError("The opening review has no counterfactual of the same length.")
    return ex.text_a, ex.text_b, s.text, s.pair


def plan(inputs: Inputs, models=None):
    """One pair patched head by head and position by position, and/or the corpus view: light
    work in one process, ``fn(progress)``. ``models``: the classifier and its card already
    loaded, else loaded by the spec."""
    if inputs.data is None and inputs.text is None and not inputs.opening:
        raise InputError("Give --text and --counter-text (one pair), or --data (the corpus "
                         "view).")
    if inputs.text is not None and inputs.counter_text is None:
        raise InputError("--counter-text is missing: patching needs a counterfactual.")
    if (inputs.pair is None) != (inputs.counter_pair is None):
        raise InputError("Give --pair and --counter-pair together (or neither).")
    loaded, card = models if models is not None else load_classifier(inputs.model)
    max_length = pair_max_length(loaded, card)
    texts = (inputs.text, inputs.pair, inputs.counter_text, inputs.counter_pair)
    if inputs.opening:
        if card is None:
            raise InputError("The opening pair needs an ABSA checkpoint of this dashboard.")
        texts = opening_pair(loaded, absa_eval_set(loaded, card, load_sample()), max_length)

    def work(progress):
        pair = corpus = None
        both = inputs.data is not None and texts[0] is not None
        first = 0.2 if both else 1.0  # the pair's share of the bar (the corpus: the rest)
        if texts[0] is not None:
            pair = patch_pair(loaded, *texts, direction=inputs.direction,
                              max_length=max_length,
                              progress=lambda f, t: progress(first * f, t))
        if inputs.data is not None:
            ev = load_eval_set(loaded, card, inputs.data, max_examples=inputs.max_examples)
            corpus = corpus_patching(loaded, ev, contrast=inputs.contrast,
                                     direction=inputs.direction, max_length=max_length,
                                     importance=inputs.importance,
                                     progress=lambda f, t: progress(
                                         first + (1 - first) * f if both else f, t))
        return PatchingResult(pair, corpus)

    return work


def example() -> Inputs:
    """The page's first view: the example checkpoint's opening pair, noising, and its corpus
    view (every held-out pair against another aspect), which the page offers on request."""
    return Inputs(opening=True, data="sample")


STUDY = StudyDef(name="patching", title="Causal patching", inputs=Inputs,
                 result=PatchingResult, plan=plan, example=example)
