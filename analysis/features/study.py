"""The features study's one typed call (the study interface): :class:`Inputs` in, a
:class:`Result` out, :func:`plan` the description of the work the job queue runs, and
:func:`run` the whole computation in this process (the CLI and the tests). The page, the CLI
and the report use the same call, so the numbers are the same.

The work: the corpus's activations at the layer (:mod:`.activations`), a dictionary trained on
the training inputs (:mod:`.train`) or one given, its quality on the held-out inputs
(:mod:`.quality`), every feature's summary and label and the dashboards of the most frequent
ones (:mod:`.browser`), their class effects (:mod:`.effects`), and with a base model the
crosscoder (:mod:`.diff`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from analysis.core.errors import InputError
from analysis.features import browser
from analysis.features import cache as dcache
from analysis.core.execution.corpus import run_local
from analysis.core.execution.work import Study
from analysis.features.activations import Activations, encode_corpus
from analysis.features.corpus import FeatureCorpus
from analysis.features.effects import class_effects, unavailable
from analysis.features.job import UNIT, collect_on
from analysis.features.quality import firing_counts, reconstruction_scores, splice_fidelity
from analysis.core.study import Field, Schema, StudyDef, StudyResult
from analysis.features.sae import SAE
from analysis.features.train import TrainSettings, train_sae

Progress = Callable[[float, str], None]
NAME = "features"
TITLE = "Features"


@dataclass(frozen=True)
class Inputs:
    """Everything the computation needs besides the loaded models."""

    corpus: FeatureCorpus
    layer: int
    settings: TrainSettings = TrainSettings()
    annotate: tuple = ()  # extra FeatureCorpus objects read only for the alignment (UPOS...)
    dashboards: int = 48  # features with a full dashboard (the most frequent)
    effects: int = 24  # of them, with class effects (the most frequent)
    sae: SAE | None = None  # a dictionary already trained for this layer (None: train one)
    compare: bool = False  # train a crosscoder against the base model (Models.base)
    batch_size: int = 32
    spec: str = "example"  # the model a plan given no models loads (a classifier with its head)
    base: str | None = "default"  # ... and its base model, for the crosscoder
    cache: bool = False  # read and keep the trained dictionaries on disk (analysis.features.cache)


@dataclass
class Models:
    """The model read (a classifier where there is one) and, for the crosscoder, its base."""

    loaded: Any
    base: Any = None


SCHEMA = Schema((
    Field("model", "the model's name"),
    Field("layer", "the layer (hidden_states index: 0 = the embeddings)"),
    Field("corpus", "{name, inputs, tokens, heldout_inputs, heldout_tokens, labels (the "
                    "corpus's own annotation names), annotations (every name the browser "
                    "reads, the extra corpora's included; [] for a plain text corpus)}"),
    Field("settings", "the training settings (m, k, epochs, batch_size, seed, lr, aux_k, "
                      "activation) and the model's n_layers"),
    Field("quality", "{fve, nmse, l0, dead (shares), agreement, loss_recovered, "
                     "agreement_kind ('classifier' or 'cosine'), losses, heldout_tokens, "
                     "splice_inputs}"),
    Field("card", "the dictionary's card.json (format, layer, k, m, d, activation, pre_bias, "
                  "scale, quality, corpus, seed, model, training)"),
    Field("features", "per feature, lists of m: freq (share of tokens), mean, max, "
                      "top_tokens, label, align (its best annotation or null)"),
    Field("dashboards", "{feature (0-based): {feature, contexts, histogram, alignment}} of "
                        "the most frequent features"),
    Field("effects", "{feature: {n, mean, low, high}}: each class's probability change when "
                     "it is switched off, with bootstrap 95% intervals (lists of classes)"),
    Field("class_names", "the classifier's classes (empty without class effects)"),
    Field("crosscoder", "the before/after crosscoder's summary (analysis.features.diff), "
                        "or null"),
    Field("notes", "what the reader should know (skipped inputs, cut inputs, ...)"),
    Field("seconds", "the run's wall time per stage"),
))


@dataclass
class Result(StudyResult):
    """The study's result (its JSON: :data:`SCHEMA`); ``live`` holds the objects a page keeps
    beside a live result (never in the JSON)."""

    SCHEMA = SCHEMA

    model: str
    layer: int
    corpus: dict
    settings: dict
    quality: dict
    card: dict
    features: dict
    dashboards: dict
    effects: dict
    class_names: list
    crosscoder: dict | None
    notes: list
    seconds: dict
    live: Any = field(default=None, repr=False, compare=False)

    def json_fields(self) -> dict:
        return {key: getattr(self, key) for key in SCHEMA.names}

    @classmethod
    def from_json(cls, data: dict) -> "Result":
        try:
            cls.SCHEMA.check(data)
        except ValueError as exc:
            raise InputError(f"This is not a features result: {exc}") from None
        kw = {key: data[key] for key in SCHEMA.names}
        kw["dashboards"] = {int(k): v for k, v in (data["dashboards"] or {}).items()}
        kw["effects"] = {int(k): v for k, v in (data["effects"] or {}).items()}
        return cls(**kw)


@dataclass
class Live:
    """What the page keeps beside a live result: the dictionary, the activations and codes
    (any feature's dashboard in well under a second), the annotation codes."""

    sae: SAE
    acts: Activations
    codes: browser.Codes
    labels: dict
    fires_labelled: np.ndarray
    crosscoder: Any = None
    loaded: Any = None  # the model read (class effects of any feature on demand)
    corpus: FeatureCorpus | None = None


def effect(result: "Result", feature: int) -> dict | None:
    """Feature ``feature``'s class effects measured now from a live result (kept in
    ``result.effects``); None where the model has no classes or the layer is the embeddings."""
    live = result.live
    if feature in result.effects or live is None or live.loaded is None:
        return result.effects.get(feature)
    if unavailable(live.loaded, live.sae) is not None:
        return None
    tok = live.acts.tokens
    units = {i: live.corpus.source[i] for i in tok.inputs}
    out = class_effects(live.loaded, live.sae, live.acts.x[live.sae.layer], live.codes,
                        [int(feature)], units, only=live.corpus.scored())
    result.effects[int(feature)] = out[int(feature)]
    if not result.class_names:
        result.class_names = list(live.corpus.class_names)
    return result.effects[int(feature)]


def _stage(progress: Progress | None, start: float, width: float, text: str):
    if progress is None:
        return None
    return lambda d, t: progress(start + width * d / max(1, t), f"{text} {d}/{t}")


def dashboard(live: Live, feature: int) -> dict:
    """Feature ``feature``'s dashboard from a live result."""
    if not 0 <= int(feature) < live.sae.m:
        raise InputError(f"The feature must be from 0 to {live.sae.m - 1}, not {feature}.")
    return browser.dashboard(live.codes, int(feature), live.labels,
                             live.fires_labelled[:, int(feature)])


def cache_name(inputs: Inputs, loaded, kind: str = "sae", base=None) -> str:
    """The disk cache's name of the dictionary ``inputs`` train (:mod:`.cache`): the weights
    (and the base model's, for a crosscoder), the corpus, its token cap, layer and settings."""
    corpus = inputs.corpus
    models = [dcache.weights_id(loaded)] + ([dcache.weights_id(base)] if base else [])
    cap = min(int(corpus.max_length or 512), int(loaded.max_length))
    return dcache.key(kind, models, corpus.fingerprint(), cap, inputs.layer, inputs.settings)


def is_kept(inputs: Inputs, loaded, base=None) -> bool:
    """Whether the disk cache holds the dictionary ``inputs`` would train for ``loaded`` (with
    ``base``: the crosscoder against it)."""
    if base is not None:
        return dcache.load_crosscoder(cache_name(inputs, loaded, "crosscoder", base)) is not None
    return dcache.load_sae(cache_name(inputs, loaded)) is not None


def _dictionary(inputs: Inputs, loaded, x: np.ndarray, train: np.ndarray,
                progress: Progress | None, stop) -> tuple[SAE, str | None, bool]:
    """(the SAE, its cache name or None, whether it was read from the cache): the one given,
    the one kept on disk for these weights, corpus and settings, or one trained now."""
    if inputs.sae is not None:
        sae = inputs.sae
        if sae.layer != inputs.layer or sae.d != x.shape[1]:
            raise InputError(f"The dictionary was trained at layer {sae.layer} of a {sae.d}-wide "
                             f"model, not layer {inputs.layer} of a {x.shape[1]}-wide one.")
        return sae, None, False
    name = cache_name(inputs, loaded) if inputs.cache else None
    sae = dcache.load_sae(name) if name else None
    if sae is not None:
        return sae, name, True
    sae = train_sae(x[train], inputs.layer, inputs.settings,
                    _stage(progress, 0.25, 0.4, "training step"), stop)
    return sae, (None if stop is not None and stop() else name), False


def features_study(inputs: Inputs, models: Models, progress: Progress | None = None,
                   stop: Callable[[], bool] | None = None, run=None) -> Result:
    """The whole study (module docstring); ``run(job, models, dataset, progress)``: where the
    activations' forward passes go (:mod:`.job`: the placement's runner, a Ray cluster's
    included); None: in this process. Everything else runs here."""
    loaded, corpus, t0 = models.loaded, inputs.corpus, time.perf_counter()
    seconds = {}
    say = progress or (lambda f, t: None)
    say(0.0, "reading the corpus")
    cap = min(int(corpus.max_length or 512), loaded.max_length)
    encs = encode_corpus(loaded.tokenizer, corpus, cap)
    acts = collect_on(run, loaded, corpus, [inputs.layer], inputs.batch_size,
                      _stage(progress, 0.0, 0.25, "activations"), encodings=encs, max_length=cap)
    x, tok = acts.x[inputs.layer], acts.tokens
    seconds["activations"] = time.perf_counter() - t0
    train = ~tok.heldout
    if not train.any() or not tok.heldout.any():
        raise InputError("The corpus needs inputs both to train on and to hold out.")
    t = time.perf_counter()
    sae, kept_as, kept = _dictionary(inputs, loaded, x, train, progress, stop)
    seconds["training"] = time.perf_counter() - t
    t = time.perf_counter()
    say(0.65, "measuring quality")
    counts = firing_counts(sae, x)
    quality = reconstruction_scores(sae, x[tok.heldout], x[train].mean(0))
    quality["dead"] = float((counts == 0).mean())
    scored = corpus.scored()
    held_encs = [e for e, i in zip(tok.encodings, tok.inputs) if scored[i]]
    classes = None
    if corpus.classes is not None:
        classes = np.asarray([corpus.classes[i] for i in tok.inputs if scored[i]])
    quality.update(splice_fidelity(loaded, sae, held_encs, classes, inputs.batch_size,
                                   _stage(progress, 0.65, 0.1, "splicing")))
    quality["heldout_tokens"] = int(tok.heldout.sum())
    seconds["quality"] = time.perf_counter() - t
    t = time.perf_counter()
    say(0.75, "reading the features")
    codes = browser.codes(sae, x, tok)
    labels, fires_labelled = dict(tok.labels), codes.fires
    for extra in inputs.annotate:
        more = collect_on(run, loaded, extra, [inputs.layer], inputs.batch_size)
        z = browser.codes(sae, more.x[inputs.layer], more.tokens).fires
        n_old = len(fires_labelled)
        for name, values in more.tokens.labels.items():
            labels[name] = list(labels.get(name, [browser.NONE] * n_old)) + list(values)
        for name in labels:
            if len(labels[name]) < n_old + len(z):
                labels[name] = list(labels[name]) + [browser.NONE] * len(z)
        fires_labelled = np.concatenate([fires_labelled, z])
    summ = browser.summary(codes)
    aligned = browser.alignment_all(fires_labelled, labels, top=3)
    summ["label"] = [browser.label(summ["top_tokens"][f], aligned[f]) for f in range(sae.m)]
    summ["align"] = [a[0] if a else None for a in aligned]
    order = np.argsort(-np.asarray(summ["freq"]), kind="stable")
    chosen = [int(f) for f in order[:inputs.dashboards] if summ["freq"][f] > 0]
    live = Live(sae, acts, codes, labels, fires_labelled, loaded=loaded, corpus=corpus)
    dashboards = {f: dashboard(live, f) for f in chosen}
    seconds["browser"] = time.perf_counter() - t
    t = time.perf_counter()
    notes = list(acts.notes)
    if kept:
        notes.append("The dictionary was read from the disk cache: trained before on the same "
                     "model weights, corpus, layer and settings.")
    effects: dict = {}
    why = unavailable(loaded, sae)
    if why:
        notes.append(why)
    elif inputs.effects:
        units = {i: corpus.source[i] for i in tok.inputs}
        effects = class_effects(loaded, sae, x, codes, chosen[:inputs.effects], units,
                                _stage(progress, 0.8, 0.1, "class effects"), stop,
                                only=scored)
    seconds["effects"] = time.perf_counter() - t
    card = {**sae.card, "corpus": corpus.name, "model": loaded.name, "spec": loaded.spec,
            "seed": inputs.settings.seed, **{k: quality[k] for k in (
                "fve", "nmse", "l0", "dead", "agreement", "loss_recovered", "agreement_kind")}}
    sae.card = card
    if kept_as and not kept:
        dcache.store_sae(kept_as, sae)
    crosscoder = None
    if inputs.compare and models.base is not None:
        # lazy: the crosscoder's own module is only needed before/after
        from analysis.features.diff import diff

        cc_name = cache_name(inputs, loaded, "crosscoder", models.base) if inputs.cache \
            else None
        crosscoder, live.crosscoder = diff(models.base, loaded, corpus, inputs.layer,
                                           inputs.settings, x, encs, _stage(
                                               progress, 0.9, 0.1, "crosscoder"), stop,
                                           cache=cc_name, run=run, max_length=cap)
    seconds["total"] = time.perf_counter() - t0
    say(1.0, "done")
    n_held = int(sum(corpus.heldout[i] for i in tok.inputs))
    return Result(
        model=loaded.name, layer=int(inputs.layer),
        corpus={"name": corpus.name, "inputs": len(tok.inputs), "tokens": len(tok),
                "heldout_inputs": n_held, "heldout_tokens": int(tok.heldout.sum()),
                "labels": list(corpus.label_names), "annotations": sorted(labels)},
        settings={**inputs.settings.to_json(), "m": sae.m, "n_layers": int(loaded.n_layers)},
        quality=quality,
        card=sae.card_json(), features=summ, dashboards=dashboards, effects=effects,
        class_names=list(corpus.class_names) if effects else [], crosscoder=crosscoder,
        notes=notes, seconds=seconds, live=live)


def load(inputs: Inputs) -> Models:
    """The models of ``inputs`` by their specs (a plan given no models)."""
    # lazy: the data module loads models by name
    from analysis.core.models import load_model
    from analysis.features.data import load_models

    base = load_model(inputs.base) if inputs.compare and inputs.base else None
    return Models(load_models(inputs.spec)[0], base)


def plan(inputs: Inputs, models: Models | None = None) -> Study:
    """ONE description of the work: a :class:`Study` whose corpus jobs (the activations'
    forward passes: :mod:`.job`) run where the placement puts them, in this process or over
    shards on a Ray cluster, while the dictionary trains in the worker thread (docs/METHODS.md
    section 19, "Where it runs"); a model the cluster's workers cannot load runs here. Without
    ``models`` they are loaded by the inputs' specs."""
    def study(progress, run):
        return features_study(inputs, models if models is not None else load(inputs), progress,
                              run=None if run is run_local else run)

    return Study(study, inputs.spec, size=len(inputs.corpus), unit=UNIT,
                 here_if_unloadable=True)


def example_inputs() -> Inputs:
    """The inputs the page opens on (the precomputed result): the example checkpoint's own
    pairs of the bundled sample at :data:`EXAMPLE_LAYER` with :data:`EXAMPLE_SETTINGS`, the
    treebank sample for the alignment, the crosscoder against the embedded model (the models:
    :func:`example_models`)."""
    # lazy: the data module reads the bundled samples
    from analysis.features.data import (EXAMPLE_LAYER, EXAMPLE_SETTINGS, corpus_of,
                                        load_models)

    _, card = load_models("example")
    corpus = corpus_of("sample", card, EXAMPLE_SETTINGS.seed)
    treebank = corpus_of("treebank", None, EXAMPLE_SETTINGS.seed)
    return Inputs(corpus, EXAMPLE_LAYER, EXAMPLE_SETTINGS, annotate=(treebank,), compare=True)


def example_models() -> Models:
    return load(example_inputs())


STUDY = StudyDef(name=NAME, title=TITLE, inputs=Inputs, result=Result, plan=plan,
                 example=example_inputs)


def run(inputs: Inputs, models: Models, progress: Progress | None = None) -> Result:
    """The study run in this process (:meth:`StudyDef.run`: the CLI, the tests)."""
    return STUDY.run(inputs, models, progress=progress)
