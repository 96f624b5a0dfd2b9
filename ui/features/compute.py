"""The Features page's cached work: the model (a classifier with its task head where there is
one, loaded once per spec and checkpoint), the example's precomputed result and shipped
dictionary, and a live result through the server-wide queue (:func:`ui.common.jobs.run_job`),
kept in the session per model, layer, data and settings."""

from __future__ import annotations

import streamlit as st

from analysis.core.errors import InputError
from analysis.features import precomputed
from analysis.features.data import (EXAMPLE_LAYER, EXAMPLE_SETTINGS, corpus_of, load_models,
                                    shipped_dictionary)
from analysis.features.study import Inputs, Models, plan
from analysis.features.train import TrainSettings
from analysis.core.models import EXAMPLE_SPEC, checkpoint_stamp, load_model
from ui.common.frame.resources import check_listed, token_capped
from ui.common.jobs import run_job
from ui.server.settings import settings
from ui.features import state as S

DEMO_MAX_M = 1536  # demo mode: the largest dictionary a visitor may train
DEMO_MAX_EPOCHS = 30


@st.cache_resource(max_entries=3, show_spinner="Loading the model...")
def _models(spec: str, stamp: str):
    return load_models(spec)


def model(spec: str):
    """(LoadedModel, ABSA card or None), once per spec and checkpoint (demo: listed only)."""
    if spec != EXAMPLE_SPEC:
        check_listed(spec)
    loaded, card = _models(spec, checkpoint_stamp(spec))
    return token_capped(loaded), card


@st.cache_resource(max_entries=2, show_spinner=False)
def _base(spec: str):
    return load_model(spec)


@st.cache_resource(show_spinner=False)
def shipped(version: int | None):
    """(the example's precomputed Result or None, its shipped dictionary or None)."""
    return precomputed.load(), shipped_dictionary()


def is_example_default(spec: str, view: S.View) -> bool:
    s = EXAMPLE_SETTINGS
    return spec == EXAMPLE_SPEC and view.layer == EXAMPLE_LAYER and view.data == "sample" \
        and view.m in (0, s.m) and view.k == s.k and view.epochs == s.epochs \
        and view.seed == s.seed and view.compare


def settings_of(view: S.View) -> TrainSettings:
    return TrainSettings(m=view.m or None, k=view.k, epochs=view.epochs, seed=view.seed)


def check_demo(view: S.View) -> None:
    if settings().demo and (view.m > DEMO_MAX_M or view.epochs > DEMO_MAX_EPOCHS):
        raise InputError(f"This server trains dictionaries of at most {DEMO_MAX_M} features "
                         f"and {DEMO_MAX_EPOCHS} epochs.")


def cached(key: tuple):
    return st.session_state.setdefault(S.RESULTS, {}).get(key)


def compute(spec: str, view: S.View, key: tuple, use_shipped: bool):
    """A live result through the job queue (``use_shipped``: the example's shipped dictionary
    instead of training one), kept in the session under ``key``."""
    check_demo(view)
    loaded, card = model(spec)
    corpus = corpus_of(view.data, card, view.seed)
    annotate = () if view.data == "treebank" else (corpus_of("treebank", None, view.seed),)
    sae = None
    if use_shipped:
        _, sae = shipped(precomputed.recipe_version())
    base = None
    if view.compare:
        base_spec = (card or {}).get("base_model")
        if not base_spec:
            raise InputError("Before and after needs a checkpoint whose card names its base "
                             "model (the example checkpoint, or one fine-tuned on the Aspect "
                             "heads page); switch 'Before and after' off for this model.")
        base = token_capped(_base(base_spec))
    inputs = Inputs(corpus, view.layer, settings_of(view), annotate=annotate, sae=sae,
                    compare=view.compare, spec=spec,
                    base=(card or {}).get("base_model") if view.compare else None)
    what = "Reading the shipped dictionary" if sae is not None else "Training a dictionary"
    result = run_job(f"{what}: {loaded.name}, layer {view.layer}, {len(corpus)} inputs",
                     plan(inputs, Models(loaded, base)), key=S.JOB, kind=S.JOB_KIND,
                     size=len(corpus), unit="inputs")
    results = st.session_state.setdefault(S.RESULTS, {})
    if len(results) >= 3:  # a session keeps its last three live results
        results.pop(next(iter(results)))
    results[key] = result
    return result
