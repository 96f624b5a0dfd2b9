"""A corpus, layer by layer: word vectors of N sentences for one or two models, per-layer
probes against the majority baseline, anisotropy and self-similarity, and a 2-D projection of
a sample of the words (docs/METHODS.md section 13).

Data: a treebank (``analysis.syntax.treebank`` Dataset: UPOS colours and the ``upos`` probe),
ABSA data (``analysis.aspects`` Dataset: role colours and the ``aspect`` probe) or a labelled
corpus (``analysis.core.corpus`` Dataset with a ``label`` column: label colours and the ``label``
probe). The word rows come from :class:`analysis.representations.job.RepresentationsJob`
(map/merge), so the CLI can shard them over a Ray cluster; :mod:`analysis.representations.run`
builds that job and runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.core.errors import DataError, InputError
from analysis.core.study import Field, Schema, StudyResult
from analysis.representations.geometry import MIN_CONTEXTS, N_PAIRS, layer_geometry
from analysis.representations.probes import FOLDS, ProbeCurve, probe_layers
from analysis.representations.projection import project_layers
from analysis.representations.labelled import (NO_LABEL, OTHER, capped_labels, has_labels,
                                               label_legend)
from analysis.representations.states import WordCorpus, pairs_note

KINDS = ("treebank", "absa", "labelled")
PROBES = {"upos": "treebank", "aspect": "absa", "label": "labelled"}
PROBE_NAMES = {"upos": "part of speech (UPOS)", "aspect": "aspect term of the asked category",
               "label": "sentence's label"}
NEEDS = {"treebank": "a treebank (CoNLL-U)", "absa": "ABSA data",
         "labelled": "a labelled corpus (a .csv or .jsonl file with a 'label' column)"}
COLOUR = {"treebank": "upos", "absa": "role", "labelled": "label"}
MAX_POINTS = 1500
NO_UPOS = ("The treebank has no UPOS column (every word's UPOS is '_'), so its words cannot be "
           "coloured or probed by part of speech.")


def corpus_kind(dataset) -> str:
    """``treebank`` or ``absa`` from the Dataset's columns."""
    cols = set(getattr(dataset, "column_names", None) or ())
    if "terms" in cols:
        return "absa"
    if {"words", "upos"} <= cols:
        return "treebank"
    if "text" in cols:
        if not has_labels(dataset):
            raise DataError(NO_LABEL)
        return "labelled"
    raise DataError("The data is neither a treebank (CoNLL-U) nor ABSA data (SemEval XML, "
                    "ASTE or this project's JSON).")


def has_upos(dataset) -> bool:
    return any(t not in ("_", "") for tags in dataset["upos"] for t in tags)


def check_probes(dataset, probes: Sequence[str] | None = None) -> tuple[str, ...]:
    """The probes to run (None: the data's own, ``upos`` only where UPOS tags exist); raises
    InputError / DataError for a probe the data cannot feed (one line)."""
    kind = corpus_kind(dataset)
    if probes is None:
        return tuple(p for p, k in PROBES.items()
                     if k == kind and (p != "upos" or has_upos(dataset)))
    for p in probes:
        if p not in PROBES:
            raise InputError(f"Unknown probe {p!r}; choose one of {', '.join(PROBES)}.")
        if PROBES[p] != kind:
            given = {"treebank": "a treebank", "absa": "ABSA data",
                     "labelled": "a labelled corpus"}[kind]
            raise InputError(f"The {p} probe needs {NEEDS[PROBES[p]]}; the data given is "
                             f"{given}.")
        if p == "upos" and not has_upos(dataset):
            raise DataError(NO_UPOS)
    return tuple(probes)


@dataclass
class ModelSide:
    """One model's numbers over the corpus (every list has L + 1 entries)."""

    name: str
    probes: dict[str, ProbeCurve]
    anisotropy: list[float | None]
    self_similarity: list[float | None]
    n_self_words: int = 0

    def to_json(self) -> dict:
        return {"probes": {k: v.to_json() for k, v in self.probes.items()},
                "anisotropy": list(self.anisotropy), "self_similarity": list(self.self_similarity)}

    @classmethod
    def from_json(cls, data: dict, name: str = "") -> "ModelSide":
        probes = {k: ProbeCurve(k, list(v["layers"]), v["majority"], [], {})
                  for k, v in data["probes"].items()}
        return cls(name, probes, list(data["anisotropy"]), list(data["self_similarity"]))


@dataclass
class Scatter:
    """2-D points of a sample of the corpus's words at every layer, for both models."""

    method: str
    points: list[np.ndarray]
    compare_points: list[np.ndarray] | None
    forms: list[str]
    colours: list[str]
    contexts: list[str]
    colour_by: str
    legend: list[str] | None = None  # the colour order (labels: capped, stable)


@dataclass
class CorpusResult(StudyResult):
    """The corpus part's numbers for one or two models; its JSON (the command's with
    ``--data``): :data:`SCHEMA`, the first model's numbers and ``compare``."""

    SCHEMA = Schema((
        Field("probes", "probe -> {layers: per layer (0 = the embeddings) cross-validated "
                        "accuracy, majority: the majority baseline's, layers_ci: per layer "
                        "[low, high] bootstrap 95% interval over sentences}"),
        Field("anisotropy", "per layer: two random words' mean cosine (null: too few words)"),
        Field("self_similarity", "per layer: a word's mean cosine with itself in other "
                                 "sentences (null: no word seen in several)"),
        Field("compare", "the second model's probes, anisotropy and self_similarity (null "
                         "without one)"),
    ))

    kind: str
    model: ModelSide
    compare: ModelSide | None
    scatter: Scatter | None
    n_sentences: int
    n_words: int
    notes: list[str] = field(default_factory=list)

    @property
    def n_layers(self) -> int:
        return len(self.model.anisotropy)

    def json_fields(self) -> dict:
        return {**self.model.to_json(),
                "compare": self.compare.to_json() if self.compare is not None else None}

    @classmethod
    def from_json(cls, data: dict) -> "CorpusResult":
        """The numbers back from their JSON (no scatter, no per-sentence counts: the
        intervals are not kept; the data's kind and sizes are unknown)."""
        cls.SCHEMA.check(data)
        compare = data.get("compare")
        return cls("", ModelSide.from_json(data), ModelSide.from_json(compare)
                   if compare is not None else None, None, 0, 0)


def _labels_for_probe(words: WordCorpus, probe: str):
    """(row mask, labels) of the words the probe learns from (UPOS '_' left out)."""
    labels = np.asarray(words.labels[probe])
    keep = labels != "_"
    return keep, labels[keep]


def model_side(loaded, words: WordCorpus, probes: Sequence[str], folds: int = FOLDS,
               seed: int = 0, n_pairs: int = N_PAIRS, min_contexts: int = MIN_CONTEXTS,
               progress: Callable[[int, int], None] | None = None) -> ModelSide:
    """Probes and geometry of one model's word vectors (``loaded``: the model or its name)."""
    curves = {}
    for k, p in enumerate(probes):
        keep, labels = _labels_for_probe(words, p)
        curves[p] = probe_layers([x[keep] for x in words.layers], labels, words.groups[keep],
                                 name=p, folds=folds, seed=seed)
        if progress is not None:
            progress(k + 1, len(probes) + 1)
    aniso, selfsim, n_self = layer_geometry(words.layers, words.forms, words.groups, n_pairs,
                                            min_contexts, seed=seed)
    if progress is not None:
        progress(len(probes) + 1, len(probes) + 1)
    return ModelSide(getattr(loaded, "name", loaded), curves, aniso, selfsim, n_self)


def scatter_of(a: WordCorpus, b: WordCorpus | None, method: str = "pca",
               max_points: int = MAX_POINTS, seed: int = 0) -> tuple[Scatter, list[str]]:
    """The projection of up to ``max_points`` words (sampled with the seed), both models."""
    notes = []
    if b is not None and b.forms != a.forms:
        notes.append("The two models read the words differently, so the second model's "
                     "scatter is left out.")
        b = None
    n = len(a.forms)
    rows = np.arange(n)
    if n > max_points:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))
        notes.append(f"The scatter shows {max_points} of the {n} words, sampled at random "
                     f"(seed {seed}).")
    colour = COLOUR[a.kind]
    pa, pb = project_layers([x[rows] for x in a.layers],
                            [x[rows] for x in b.layers] if b is not None else None, method, seed)
    colours = [str(a.labels[colour][i]) for i in rows]
    legend = None
    if colour == "label":
        legend = label_legend(a.sentence_labels or a.labels["label"])
        colours = capped_labels(colours, legend)
        if OTHER in legend:
            notes.append(f"The scatter colours the {len(legend) - 1} most frequent labels; "
                         f"every other label is '{OTHER}'.")
    return Scatter(method, pa, pb, [a.forms[i] for i in rows], colours,
                   [a.context(i) for i in rows], colour, legend), notes


def result_of(words: Sequence[WordCorpus], probes: Sequence[str], method: str = "pca",
              max_points: int = MAX_POINTS, folds: int = FOLDS, seed: int = 0,
              scatter: bool = True, progress: Callable[[int, int], None] | None = None,
              names: Sequence[str] = ()) -> CorpusResult:
    """The corpus result from each model's word rows (the merge step of the corpus job);
    ``progress(done, total)`` over the probes and curves."""
    n = len(words)

    def stage(k):
        if progress is None:
            return None
        return lambda done, total: progress(k * total + done, n * total)

    sides = [model_side(names[k] if k < len(names) else "", w, probes, folds, seed,
                        progress=stage(k)) for k, w in enumerate(words)]
    kind = words[0].kind
    notes = list(words[0].notes) + pairs_note(words[0])
    if not probes and kind == "treebank":
        notes.append(NO_UPOS.replace("cannot be coloured or", "are not"))
    sc = None
    if scatter:
        sc, more = scatter_of(words[0], words[1] if n > 1 else None, method, max_points, seed)
        notes += more
    return CorpusResult(kind, sides[0], sides[1] if n > 1 else None, sc,
                        words[0].n_sentences, len(words[0].forms), notes)
