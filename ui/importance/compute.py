"""The Head importance page's cached work: the classifier (loaded once per spec and checkpoint
stamp), its labelled examples (encoded once per data), and the study through the server-wide
queue (:func:`ui.common.jobs.run_job`), cached per model, data and settings so a first visit of
the example is computed once for every visitor."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from dataclasses import dataclass

import streamlit as st

from analysis.importance import importance_study
from analysis.importance.evalset import load_eval_set
from analysis.importance.links import aspect_heads, sep_heads
from analysis.core.models import checkpoint_stamp
from ui.common.errors import plain
from ui.common.jobs import (BackgroundJob, Study, background_words, measured_words, run_job,
                            start_background_job)
from ui.common.jobs.kept import job_cached
from ui.common.frame.resources import offered_classifier, token_capped
from ui.server.settings import settings
from ui.importance import state as S
from analysis.core.errors import InputError


@dataclass
class Marks:
    """The other pages' heads (0-indexed): Aspect heads' top heads, No-op's [SEP] heads."""

    aspect: list
    sep: list


def classifier(spec: str):
    """(LoadedModel with its task head, ABSA card or None), once per spec and checkpoint;
    demo mode: listed models only, and at most :data:`S.DEMO_MAX_HEADS` heads."""
    loaded, card = offered_classifier(spec)
    if settings().demo and loaded.n_layers * loaded.n_heads > S.DEMO_MAX_HEADS:
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


def _work(loaded, ev, method: str, metric: str | None, run=None):
    """The study as a job ``fn(progress) -> (ImportanceResult, Marks)``; ``run``: how its
    ablation jobs run (``importance_study``'s: in this process by default)."""
    def job(progress):
        result = importance_study(loaded, ev, method=method, metric=metric, prune=True,
                                  progress=lambda f, t: progress(0.9 * f, t), run=run)
        progress(0.92, "marking the aspect heads and the [SEP] heads")
        marks = Marks(aspect_heads(loaded, ev), sep_heads(loaded, ev))
        progress(1.0, "done")
        return result, marks

    return job


def _described(loaded, ev, method: str, metric: str | None) -> Study:
    """The study as one description: its ablations and pruning masks are corpus jobs
    (:class:`analysis.importance.job.AblationJob`), run in this process or, with
    ``DASHBOARD_RAY_ADDRESS``, on the cluster (the workers loading the classifier by its spec;
    here when they cannot); the metrics, intervals and marks are computed here."""
    return Study(lambda progress, run: _work(loaded, ev, method, metric, run)(progress),
                 loaded.spec, ev.n_examples, here_if_unloadable=True)


@job_cached(max_entries=8, copy=True)
def _study(key: tuple, _loaded, _ev, method: str, metric: str | None):
    return run_job("Head importance", _described(_loaded, _ev, method, metric),
                   key=S.job_key(key), kind=S.KIND, size=_ev.n_examples, unit="examples")


# The first visit's view (the example on its held-out sentences, default settings) is computed
# once per server in the background and shared by every visitor: no page waits with its script
# running for it (minutes on 2 cores), the page shows the job's progress and fills in by
# itself. It runs in the queue's background lane: no visitor's job waits behind it. Any other
# view goes through run_job (the visitor's own job, counted per visitor).
# With DASHBOARD_RAY_ADDRESS both go to the Ray cluster (the background job takes a cluster
# ticket), or stay here when its workers cannot load the classifier.
_BACKGROUND: dict[tuple, BackgroundJob] = {}
_BACKGROUND_LOCK = threading.Lock()


def first_visit_study(view: S.View, spec: str, loaded, ev):
    """``(result, marks)`` of the first visit's view once its background job is done, else
    ``(None, job)`` while it waits or runs; a failed job raises its error once (the next visit
    starts it again)."""
    key = result_key(view, spec)
    with _BACKGROUND_LOCK:
        job = _BACKGROUND.get(key)
        if job is None:
            job = start_background_job(
                "Head importance", _described(loaded, ev, view.method, view.metric),
                key=S.job_key(key), kind=S.KIND, size=ev.n_examples, unit="examples")
            _BACKGROUND[key] = job
    if not job.done.is_set():
        return None, job
    if job.error is not None:
        with _BACKGROUND_LOCK:
            _BACKGROUND.pop(key, None)
        raise job.error
    return job.result, job


@st.fragment(run_every=2.0)
def watch(job: BackgroundJob) -> None:
    """The background job's progress, every 2 s; the whole page reruns once it is done."""
    if job.done.is_set():
        st.rerun(scope="app")
    st.progress(job.fraction, text=plain(background_words(job)))


def expected(ev) -> str:
    """How long the study of ``ev`` takes on this server, measured on its last runs (or that it
    was not measured yet): never a constant."""
    return measured_words(S.KIND, size=ev.n_examples)


def result_key(view: S.View, spec: str) -> tuple:
    """What a result (and the charts drawn from it) is cached on."""
    return view.cache_key(spec, checkpoint_stamp(spec), data_key(view))


# Results computed on this server, by their key (the newest few): the reading compares a view's
# result with the other way of switching heads off when that one is at hand (never computed
# just for the comparison).
_DONE: dict[tuple, object] = {}
_DONE_MAX = 8


def remember(view: S.View, spec: str, result) -> None:
    """Keep ``result`` as the view's (the oldest dropped beyond :data:`_DONE_MAX`)."""
    with _BACKGROUND_LOCK:
        key = result_key(view, spec)
        _DONE.pop(key, None)
        _DONE[key] = result
        while len(_DONE) > _DONE_MAX:
            _DONE.pop(next(iter(_DONE)))


def other_method(view: S.View, spec: str):
    """The same view's result with the other way of switching heads off, if computed on this
    server; else None."""
    other = dataclasses.replace(view, method=next(m for m in S.METHODS if m != view.method))
    with _BACKGROUND_LOCK:
        return _DONE.get(result_key(other, spec))


def whole_at_hand(spec: str, method: str):
    """A whole-set result of the classifier ``spec`` (this checkpoint) with ``method``
    computed on this server (the newest), for the per-example reading; else None (never
    computed just for the comparison)."""
    stamp = checkpoint_stamp(spec)
    with _BACKGROUND_LOCK:
        done = [r for k, r in _DONE.items() if k[1] == spec and k[2] == stamp
                and getattr(r, "method", None) == method]
    return done[-1] if done else None


def study(view: S.View, spec: str, loaded, ev):
    """(ImportanceResult with pruning curves, Marks) for the view, through the queue, cached
    (the CLI's ``--prune`` gives the same numbers)."""
    return _study(result_key(view, spec), loaded, ev, view.method, view.metric)


def max_examples_cap() -> int:
    """The largest examples setting (ABSA: sentences of 5 pairs): demo mode's ``max_examples``
    pairs, else 2000."""
    return max(1, settings().cap("max_examples", 10000) // 5)
