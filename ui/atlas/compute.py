"""The Head atlas page's work: the bundled data (read once), the studies' evidence kept on disk
(:mod:`analysis.atlas.steps`) assembled into the atlas when every study is there, the example's
precomputed atlas meanwhile, and the missing studies computed one at a time through the
server-wide queue (:func:`ui.common.jobs.run_job`), each with its progress and an estimate from
the speed this server measured for that study."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from analysis.atlas import precomputed
from analysis.atlas.run import (STUDY, Inputs, assemble, before_of, card_of, plan_steps,
                                run_step)
from analysis.atlas.steps import Models, cached, keep, read_data
from analysis.drift.pair import check_compatible
from analysis.core.errors import InputError
from analysis.core.example import precomputed_path
from analysis.core.execution.estimates import duration_words
from analysis.core.models import DEFAULT_SPEC, EXAMPLE_SPEC, ModelLoadError
from ui.common.frame.resources import check_listed, get_classifier, get_model
from ui.common.jobs import job_queue, run_job
from ui.server.settings import settings
from ui.atlas import state as S

CORPUS_EXAMPLES = 200  # the No-op statistics and Drift pages' default cap


@st.cache_resource(max_entries=2, show_spinner="Reading the bundled data...")
def _data(cap: int):
    return read_data(max_examples=cap)


def data():
    """The studies' bundled data (the corpus capped as the pages cap it)."""
    return _data(settings().cap("max_examples", CORPUS_EXAMPLES))


def before_for(spec: str) -> str | None:
    """The model before fine-tuning the page compares with: the embedded model for the
    example, a checkpoint's base model when its card names the embedded model or a folder
    that is there (outside demo mode), else none."""
    if spec == EXAMPLE_SPEC:
        return DEFAULT_SPEC
    base = (card_of(spec) or {}).get("base_model")
    if base == DEFAULT_SPEC or (base and not settings().demo and Path(base).is_dir()):
        return base
    return None


def inputs(spec: str, before: str | None, thresholds) -> Inputs:
    """The atlas's inputs on this server (demo mode's token cap applied)."""
    return Inputs(model=spec, before=before, max_examples=settings().cap(
        "max_examples", CORPUS_EXAMPLES), max_length=settings().max_tokens,
        thresholds=thresholds)


@st.cache_resource(max_entries=8, show_spinner=False)
def _assembled(keys: tuple, model: str, before: str | None, _evidence: dict, _inputs: Inputs):
    return assemble(_evidence, _inputs, studies={
        k: {"title": e.get("title"), "data": e.get("data") or e.get("description"),
            "seconds": e.get("seconds"), "cached": True} for k, e in _evidence.items()})


def live(inp: Inputs, dat):
    """(the atlas from the studies kept on this server, or None; the steps still missing;
    what it is cached on: its studies' keys)."""
    todo = plan_steps(inp, dat)
    got = {s.name: cached(s) for s in todo}
    missing = [s for s in todo if got[s.name] is None]
    keys = tuple(s.key for s in todo)
    if missing:
        return None, missing, keys
    result = _assembled(keys, inp.model, before_of(inp), got, inp)
    return result.with_thresholds(inp.thresholds), [], keys


@st.cache_resource(max_entries=1, show_spinner=False)
def _precomputed(stamp: float):
    return precomputed.load()


def example_precomputed():
    """(the example's precomputed atlas, its header) or None (missing, or another recipe)."""
    try:
        stamp = precomputed_path(STUDY.name).stat().st_mtime_ns
    except OSError:
        return None
    return _precomputed(stamp)


def estimate(missing, spec: str) -> str:
    """How long the missing studies take here, from the speed this server measured for each
    study (its last runs); for the example, a study not measured here yet by the time it took
    when the precomputed atlas was made (said so); else that it was not measured yet."""
    queue, pre = job_queue(), example_precomputed() if spec == EXAMPLE_SPEC else None
    made = pre[0].studies if pre else {}
    here = there = 0.0
    unknown = []
    for s in missing:
        per = queue.measured(s.kind)
        if per is not None:
            here += per * max(1, s.size)
        elif (made.get(s.name) or {}).get("seconds"):
            there += float(made[s.name]["seconds"])
        else:
            unknown.append(s.title)
    parts = []
    if here:
        parts.append(f"about {duration_words(here)} by the speed measured on this server")
    if there:
        parts.append(f"{duration_words(there)} when the precomputed atlas was made")
    if unknown:
        parts.append("not measured yet: " + ", ".join(unknown))
    return "; ".join(parts) + "."


def models(inp: Inputs) -> Models:
    """The loaded models (the server's shared copies): the model, the model before when it
    can be compared, the classifier with its card when it has one."""
    out = Models(get_model(inp.model))
    before = before_of(inp)
    if before:
        try:
            b = get_model(before)
            check_compatible(b, out.after)
            out.before = b
        except (InputError, ModelLoadError) as exc:
            out.notes.append(f"No model before fine-tuning: {exc}")
    try:
        check_listed(inp.model)
        out.classifier, out.card = get_classifier(inp.model)
    except (InputError, ModelLoadError) as exc:
        out.notes.append(f"The task is not measured: {exc}")
    return out


def compute_missing(inp: Inputs, missing) -> None:
    """Each missing study through the queue, one at a time, kept on disk as it finishes (a
    study that refuses the data keeps its one line)."""
    loaded = models(inp)
    for note in loaded.notes:
        st.caption(note)
    for step in missing:
        def runner(work, step=step):
            return run_job(step.title, work, key=S.job_key(step.name), kind=step.kind,
                           size=step.size, unit=step.unit)

        keep(step, run_step(step, loaded, lambda f, t: None, runner=runner))
