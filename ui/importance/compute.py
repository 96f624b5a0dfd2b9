"""The Head importance page's cached work: the classifier (loaded once per spec and checkpoint
stamp), its labelled examples (encoded once per data), and the study through the server-wide
queue (:func:`ui.common.jobs.run_job`), cached per model, data and settings so a first visit of
the example is computed once for every visitor."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import streamlit as st

from analysis.importance import importance_study
from analysis.importance.evalset import load_classifier, load_eval_set
from analysis.importance.links import aspect_heads, sep_heads
from analysis.models import EXAMPLE_SPEC, checkpoint_stamp
from ui.common.jobs import run_job
from ui.common.resources import check_listed, token_capped
from ui.common.settings import settings
from ui.importance import state as S


@dataclass
class Marks:
    """The other pages' heads (0-indexed): Aspect heads' top heads, No-op's [SEP] heads."""

    aspect: list
    sep: list


@st.cache_resource(max_entries=3, show_spinner="Loading the classifier...")
def _classifier(spec: str, stamp: str):
    return load_classifier(spec)


def classifier(spec: str):
    """(LoadedModel with its task head, ABSA card or None), once per spec and checkpoint;
    demo mode: listed models only, and at most :data:`S.DEMO_MAX_HEADS` heads."""
    if spec != EXAMPLE_SPEC:
        check_listed(spec)
    loaded, card = _classifier(spec, checkpoint_stamp(spec))
    if settings().demo and loaded.n_layers * loaded.n_heads > S.DEMO_MAX_HEADS:
        from analysis.errors import InputError

        raise InputError(f"This server disables at most {S.DEMO_MAX_HEADS} heads per model; "
                         f"{loaded.name} has {loaded.n_layers * loaded.n_heads}.")
    return loaded, card


def data_key(view: S.View) -> str:
    """The data's identity: ``sample``, or the upload's name and content hash."""
    if view.data == S.SAMPLE:
        return "sample"
    up = S.upload()
    if up is None:
        return ""
    return f"{up.name}:{hashlib.sha256(up.getvalue()).hexdigest()[:16]}"


@st.cache_resource(max_entries=4, show_spinner="Reading and encoding the examples...")
def _eval_set(spec: str, stamp: str, key: str, max_examples: int, _loaded, _card, _source,
              _name):
    return load_eval_set(_loaded, _card, _source, max_examples=max_examples, name=_name,
                         max_bytes=settings().max_upload_bytes)


def eval_set(view: S.View, spec: str, loaded, card):
    """The examples of the chosen data (None while no file is uploaded)."""
    key = data_key(view)
    if not key:
        return None
    if key == "sample":
        source, name = "sample", None
    else:
        up = S.upload()
        source, name = up.getvalue(), up.name
    return _eval_set(spec, checkpoint_stamp(spec), key, view.max_examples,
                     token_capped(loaded), card, source, name)


@st.cache_data(max_entries=8, show_spinner=False)
def _study(key: tuple, _loaded, _ev, method: str, metric: str | None):
    def job(progress):
        result = importance_study(_loaded, _ev, method=method, metric=metric, prune=True,
                                  progress=lambda f, t: progress(0.9 * f, t))
        progress(0.92, "marking the aspect heads and the [SEP] heads")
        marks = Marks(aspect_heads(_loaded, _ev), sep_heads(_loaded, _ev))
        progress(1.0, "done")
        return result, marks

    return run_job("Head importance", job, key=f"{S.JOB}-{abs(hash(key)) % 10 ** 8}")


def result_key(view: S.View, spec: str) -> tuple:
    """What a result (and the charts drawn from it) is cached on."""
    return view.cache_key(spec, checkpoint_stamp(spec), data_key(view))


def study(view: S.View, spec: str, loaded, ev):
    """(ImportanceResult with pruning curves, Marks) for the view, through the queue, cached
    (the CLI's ``--prune`` gives the same numbers)."""
    return _study(result_key(view, spec), loaded, ev, view.method, view.metric)


def max_examples_cap() -> int:
    """The largest examples setting (ABSA: sentences of 5 pairs): demo mode's ``max_examples``
    pairs, else 2000."""
    return max(1, settings().cap("max_examples", 10000) // 5)
