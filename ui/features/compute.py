"""The Features page's cached work: the model (a classifier with its task head where there is
one, loaded once per spec and checkpoint), the example's precomputed result and shipped
dictionary, the visitor's own corpus (the shared corpus picker, :func:`picked_corpus`), and a
live result through the server-wide queue (:func:`ui.common.jobs.run_job`; its dictionary read
from or kept in the disk cache, :mod:`analysis.features.cache`), kept in the session per model,
layer, data and settings; a job whose estimate passes the host's ``max_job_seconds`` is refused
up front (:mod:`analysis.features.budget`)."""

from __future__ import annotations

import streamlit as st

from analysis.core.errors import InputError
from analysis.features import budget, precomputed
from analysis.features.corpus import feature_corpus
from analysis.features.data import (EXAMPLE_LAYER, EXAMPLE_SETTINGS, corpus_of, load_models,
                                    shipped_dictionary)
from analysis.features.study import Inputs, Models, is_kept, plan
from analysis.features.train import TrainSettings
from analysis.core.models import EXAMPLE_SPEC, checkpoint_stamp, load_model
from analysis.search.corpus import TABLE_SUFFIXES, read_data, with_lines
from analysis.search.job import corpus_fingerprint
from ui.common.errors import plain
from ui.common.frame.corpus import UploadReader, corpus_name, corpus_picker, fingerprint
from ui.common.frame.resources import check_listed, token_capped
from ui.common.jobs import run_job
from ui.server.settings import settings
from ui.features import state as S

DEMO_MAX_M = 1536  # demo mode: the largest dictionary a visitor may train
DEMO_MAX_EPOCHS = 30


def _read_upload(data: bytes, name: str, cap: int, max_bytes: int | None,
                 max_chars: int | None):
    """An upload read as ``python -m analysis features train --data FILE`` reads the file: a
    .conllu treebank with its UPOS and relations, ABSA data with its aspect roles, a .txt file
    by its lines; None for a .csv or .jsonl file (the picker's reader, with its column choice
    and its 'label' column)."""
    if name.lower().endswith(TABLE_SUFFIXES):
        return None
    return with_lines(*read_data(data, name=name, max_examples=cap, max_bytes=max_bytes,
                                 max_chars=max_chars))


UPLOADS = UploadReader(_read_upload, ("conllu",),
                       "A text corpus: .txt (one sentence per line, tab for pairs), .jsonl "
                       "(text, text_pair) or .csv; a CoNLL-U treebank (.conllu) or ABSA data "
                       "(SemEval .xml, .json) with their annotations")


def picked_corpus() -> tuple[object | None, str]:
    """The shared corpus picker (the sample corpus, pasted lines, an upload, a Hugging Face
    dataset: the demo's caps on examples, characters and bytes) -> (the Dataset or None while
    there is none yet, its fingerprint)."""
    dataset = corpus_picker(S.TEXT_CORPUS, default_cap=300, labels=True, reader=UPLOADS,
                            cap_help="The dictionary is trained on the first N examples; more "
                                     "takes longer.")
    return dataset, "" if dataset is None else fingerprint(dataset, corpus_fingerprint)


def training_corpus(view: S.View, card, dataset=None):
    """The :class:`FeatureCorpus` the view trains on: a bundled sample, or the picked one
    (named as the picker names it: never a path)."""
    if view.data != "corpus":
        return corpus_of(view.data, card, view.seed)
    if dataset is None:
        raise InputError("Pick a corpus to train on first.")
    name = corpus_name(S.TEXT_CORPUS, dataset)
    return feature_corpus(dataset, name, card, view.seed)


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


def compute(spec: str, view: S.View, key: tuple, use_shipped: bool, dataset=None):
    """A live result through the job queue (``use_shipped``: the example's shipped dictionary
    instead of training one; ``dataset``: the picked corpus of data "corpus"), kept in the
    session under ``key``."""
    check_demo(view)
    loaded, card = model(spec)
    corpus = training_corpus(view, card, dataset)
    # read against the treebank sample's UPOS and relations unless the corpus has its own
    annotate = () if "upos" in corpus.label_names else (corpus_of("treebank", None, view.seed),)
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
                    base=(card or {}).get("base_model") if view.compare else None,
                    cache=True)  # trained dictionaries read from and kept on disk
    # what the disk cache holds is read, not trained
    kept = sae is None and is_kept(inputs, loaded)
    cc_kept = base is not None and is_kept(inputs, loaded, base)
    estimate = budget.check(loaded, inputs, base, settings().max_job_seconds, kept, cc_kept)
    note = st.empty()
    note.caption(plain(budget.words(estimate)))
    what = "Reading the shipped dictionary" if sae is not None else "Training a dictionary"
    try:
        result = run_job(f"{what}: {loaded.name}, layer {view.layer}, {len(corpus)} inputs",
                         plan(inputs, Models(loaded, base)), key=S.JOB, kind=S.JOB_KIND,
                         size=len(corpus), unit="inputs")
    finally:
        note.empty()
    results = st.session_state.setdefault(S.RESULTS, {})
    if len(results) >= 3:  # a session keeps its last three live results
        results.pop(next(iter(results)))
    results[key] = result
    return result
