"""The Predictions page's cached work: the classifiers (once per spec and checkpoint stamp), the
rows (read and encoded once per data), the study through the server-wide queue
(:func:`ui.common.jobs.run_job`), cached on the models' weights and the data's fingerprint, so
that filtering, sorting and selecting rows never answers again; the example's view opens on
its shipped result while its live run waits in the background lane; an edit through the
one-input lane."""

from __future__ import annotations

import hashlib
import threading

import streamlit as st

from analysis.absa.pipeline import load_checkpoint_zip
from analysis.core.errors import DataError, InputError
from analysis.core.execution.estimates import duration_words
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError, checkpoint_stamp
from analysis.core.sizes import ModelCost
from analysis.predictions.data import hf_labelled, load_labelled
from analysis.predictions.edit import compare_edit
from analysis.core.example import precomputed, precomputed_label, precomputed_path
from analysis.predictions.result import Result
from analysis.predictions.run import STUDY, Inputs, Models, plan
from analysis.predictions.table import frame
from ui.common.errors import plain
from ui.common.frame.corpus import upload_name
from ui.common.frame.resources import offered_classifier, token_capped
from ui.common.jobs import SHORT, BackgroundJob, run_job, start_background_job
from ui.common.jobs.kept import job_cached
from ui.predictions import state as S
from ui.server.memory import admit_model, hold_model, model_cost, upload_param_cap
from ui.server.settings import SERVER_UPLOAD_MB, settings


classifier = offered_classifier  # (LoadedModel with its task head, ABSA card or None)


def model_key(spec: str) -> str:
    return f"{spec}@{checkpoint_stamp(spec)}"


def data_key(view: S.View, hf: tuple | None) -> str:
    """The data's identity: ``sample``, the upload's name and content hash, or the dataset."""
    if view.data == S.SAMPLE:
        return "sample"
    if view.data == S.HUB:
        return "" if hf is None or not hf[0] else "hf:" + "\x1f".join(str(x) for x in hf)
    up = S.upload()
    if up is None:
        return ""
    return f"{up.name}:{hashlib.sha256(up.getvalue()).hexdigest()[:16]}"


def max_examples_cap() -> int:
    """The largest examples setting: the server's ``max_examples`` (demo mode), else 10,000."""
    return max(1, settings().cap("max_examples", 10_000))


@st.cache_resource(max_entries=4, show_spinner="Reading and encoding the examples...")
def _rows(model: str, key: str, max_examples: int, _loaded, _card, _source, _name, _hf):
    conf = settings()
    if _hf is not None:
        name, split, text, pair, label = _hf
        return hf_labelled(_loaded, name, split, text, pair or None, label, max_examples,
                           conf.max_line_chars, local_ok=not conf.demo)
    return load_labelled(_loaded, _card, _source, max_examples=max_examples, name=_name,
                         max_bytes=conf.max_upload_bytes)


def rows(view: S.View, spec: str, loaded, card, hf: tuple | None):
    """The rows of the chosen data (None while nothing is uploaded or named)."""
    key = data_key(view, hf)
    if not key:
        return None
    source, name = "sample", None
    if view.data == S.UPLOADED:
        up = S.upload()
        source, name = up.getvalue(), upload_name(up.name)
    return _rows(model_key(spec), key, view.max_examples, token_capped(loaded), card, source,
                 name, hf if view.data == S.HUB else None)


def compare_upload(up):
    """(LoadedModel, card) of an uploaded checkpoint .zip, kept in the session by the file's
    name and hash; its size is checked before it loads (the Aspect heads page's caps)."""
    data = up.getvalue()
    ident = f"{up.name}:{hashlib.sha256(data).hexdigest()[:16]}"
    kept = S.compare_model()
    if kept is not None and kept[0] == ident:
        return kept[1], kept[2], ident
    admit_model(ModelCost.of(None, len(data) // 4, 0))  # a lower bound: refused early
    loaded, card = run_job("Loading the uploaded checkpoint", lambda progress: (
        load_checkpoint_zip(data, name=f"uploaded {upload_name(up.name)}",
                            max_bytes=SERVER_UPLOAD_MB * 2**20, max_params=upload_param_cap())),
        key=S.JOB_UPLOAD, lane=SHORT, kind="Loading an uploaded checkpoint")
    cost = model_cost(loaded)
    admit_model(cost)
    hold_model(loaded.model, cost)
    S.set_compare_model((ident, loaded, card))
    return loaded, card, ident


def second_model(choice: str, spec: str, sidebar_spec: str):
    """(LoadedModel, card, its identity) of the second model, or None (none asked, or the
    model before fine-tuning, which has no classifier); InputError / ModelLoadError / DataError
    for a model that cannot answer (one line)."""
    if choice in (S.BEFORE, S.NO_COMPARE):
        return None
    if choice == S.OTHER_UPLOAD:
        up = st.session_state.get(S.COMPARE_UPLOAD)
        return None if up is None else compare_upload(up)
    other = EXAMPLE_SPEC if choice == S.OTHER_EXAMPLE else sidebar_spec
    if other == spec:
        raise InputError("The second model is the first one: pick another checkpoint.")
    loaded, card = classifier(other)
    return loaded, card, model_key(other)


@job_cached(max_entries=4)
def _study(key: tuple, _models: Models, _data):
    return run_job("Predictions", plan(Inputs(_data), _models), key=S.job_key(key),
                   kind=S.KIND_JOB, size=_data.n, unit="examples")


def study(key: tuple, models: Models, data):
    """The result for the models and rows (the CLI gives the same numbers), through the queue,
    cached on ``key`` (the models' weights stamps and the data's identity)."""
    return _study(key, models, data)


# The first view (the example on its held-out sentences, no second model) opens on the shipped
# result at once; its live run waits in the queue's background lane, once per server, and
# replaces it when done.
_BACKGROUND: dict[tuple, BackgroundJob] = {}
_LOCK = threading.Lock()


@st.cache_resource(max_entries=2, show_spinner=False)
def _shipped(stamp: int):
    record = precomputed(STUDY.name)
    return None if record is None else (Result.from_json(record["result"]),
                                        precomputed_label(record))


def shipped():
    """(the shipped result of the example, its label), or None when absent or of another
    recipe (analysis.core.example.precomputed)."""
    p = precomputed_path(STUDY.name)
    return _shipped(p.stat().st_mtime_ns if p.is_file() else 0)


def first_view(key: tuple, models: Models, data):
    """(live result or None, the background job): the live result once its job is done."""
    with _LOCK:
        job = _BACKGROUND.get(key)
        if job is None:
            job = start_background_job("Predictions on the example's held-out sentences",
                                       plan(Inputs(data), models), key=S.job_key(key),
                                       kind=S.KIND_JOB, size=data.n, unit="examples")
            _BACKGROUND[key] = job
    if not job.done.is_set():
        return None, job
    if job.error is not None:
        with _LOCK:
            _BACKGROUND.pop(key, None)
        raise job.error
    return job.result, job


@st.fragment(run_every=2.0)
def watch(job: BackgroundJob) -> None:
    """The background job's progress; the whole page reruns once it is done."""
    if job.done.is_set():
        st.rerun(scope="app")
    left = job.left_s()
    text = job.text or "Waiting for a free slot in the queue..."
    if left is not None:
        text += f" ({duration_words(left)} left, measured on this server)"
    st.progress(job.fraction, text=plain(text))


@st.cache_resource(max_entries=8, show_spinner=False)
def table(_result, key: tuple):
    """The result's table (:func:`analysis.predictions.table.frame`), built once per result."""
    return frame(_result)


@st.cache_data(max_entries=16, show_spinner=False)
def _edit(model: str, text, pair, new_text, new_pair, method: str, _loaded, _data):
    def job(progress):
        return compare_edit(_loaded, _data, text, pair, new_text, new_pair, method)

    return run_job("Answering and attributing the edit", job, key=S.JOB_EDIT, lane=SHORT,
                   kind="Predictions: one edit")


def edit(spec: str, loaded, data, text, pair, new_text, new_pair, method: str):
    """:class:`analysis.predictions.edit.Edit` of a row and its edited copy."""
    return _edit(model_key(spec), text, pair, new_text, new_pair, method, loaded, data)


ERRORS = (ModelLoadError, InputError, DataError)  # what a page shows in one line
