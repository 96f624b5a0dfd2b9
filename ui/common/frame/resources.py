"""Cached, shared models. Models are loaded once per spec and shared by every page and
session: treat them as read-only (train a deep copy). In demo mode only the host's listed
models load (``ui.server.settings``): any other spec is refused before anything looks at the
disk. What the server governs besides (upload caps, each visitor's memory, the heap) is
:mod:`ui.server`."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from analysis.core.models import (DEFAULT_SPEC, EXAMPLE_SPEC, LoadedModel, ModelLoadError,
                                  checkpoint_stamp, load_model, normalise_spec)
from analysis.importance.evalset import load_headed, require_classifier
from ui.server.housekeeping import clean_leftovers
from ui.server.settings import settings
from ui.server.uploads import note_visitor, session_upload_cap

NOT_OFFERED = "This model is not offered here."


@st.cache_resource(show_spinner="Loading model...", max_entries=4)
def _load(spec: str, stamp: str) -> LoadedModel:
    return load_model(spec)


@st.cache_resource(show_spinner="Loading the model with its task head...", max_entries=3)
def _headed(spec: str, stamp: str):
    return load_headed(spec)


def get_headed(spec: str):
    """(LoadedModel with its task head, ABSA card or None) of ``spec``, or None when its config
    names no task head (:func:`analysis.importance.evalset.load_headed`), loaded once per spec
    and checkpoint stamp for every page: Aspect heads, Attribution, Drift's after-model, Head
    importance, Causal patching, Predictions and the Head atlas each held a copy of the example
    checkpoint in a cache of their own (issue 50: the server's memory after a visitor opened
    one more page), and a visitor's own classifier was loaded once by Attribution, once by
    Drift and once by the classifier pages. The caller checks that a demo lists it
    (:func:`check_listed`)."""
    spec = normalise_spec(spec)
    return _headed(spec, checkpoint_stamp(spec))


def get_classifier(spec: str):
    """:func:`get_headed` for the pages that need a single-label classifier: InputError (one
    line) for a model without one."""
    return require_classifier(get_headed(spec), spec)


def offered_classifier(spec: str):
    """:func:`get_classifier` of a model the classifier pages (Head importance, Causal
    patching, Predictions) open: in demo mode one of the host's models (:func:`check_listed`)
    or the example checkpoint, which they always offer."""
    if spec != EXAMPLE_SPEC:
        check_listed(spec)
    return get_classifier(spec)


def check_listed(spec: str) -> None:
    """Demo mode: ModelLoadError unless ``spec`` is one of the host's models (a string
    comparison; nothing on the disk is looked at)."""
    conf = settings()
    if conf.demo and conf.model_name(spec) is None:
        raise ModelLoadError(NOT_OFFERED)


def get_model(spec: str) -> LoadedModel:
    """Load (once per spec) the tokenizer + encoder; raises ModelLoadError on failure. A local
    folder written again (a new checkpoint in the same place) is loaded anew."""
    clean_leftovers()
    session_upload_cap()
    note_visitor()
    check_listed(spec)
    return _load(spec, checkpoint_stamp(spec))


def embedded_model() -> LoadedModel:
    """The embedded default model (the last resort when nothing else loads, listed or not)."""
    return _load(DEFAULT_SPEC, "")


def token_capped(loaded: LoadedModel) -> LoadedModel:
    """The model with at most the server's tokens per input (demo mode: ``max_tokens``) as its
    ``max_length``; the same weights and tokenizer (a shallow copy)."""
    cap = settings().cap("max_tokens", loaded.max_length)
    return loaded if cap == loaded.max_length else replace(loaded, max_length=cap)
