"""The Causal patching page's cached work: the classifier (once per spec and checkpoint
stamp), the example's held-out ABSA sentences, one pair's patching through the queue's short
lane and the corpus view through its corpus lane (:func:`ui.common.jobs.run_job`), each cached
on what it depends on, so the page shows the numbers the CLI writes."""

from __future__ import annotations

import streamlit as st

from analysis.core.errors import InputError
from analysis.importance.evalset import absa_eval_set
from analysis.core.models import checkpoint_stamp
from analysis.patching import patch_pair
from analysis.patching.corpus import corpus_patching
from analysis.patching.counterfactuals import opinion_pool, suggest
from analysis.patching.run import default_pair as first_pair, pair_max_length
from ui.common.jobs import SHORT, run_job
from ui.common.frame.resources import offered_classifier
from ui.patching import state as S
from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples


classifier = offered_classifier  # (LoadedModel with its task head, ABSA card or None)


@st.cache_resource(max_entries=3, show_spinner="Reading the held-out sentences...")
def _heldout(spec: str, stamp: str, _loaded, _card):
    return absa_eval_set(_loaded, _card, load_sample())


def heldout(spec: str, loaded, card):
    """The ABSA EvalSet of the checkpoint's held-out sentences of the bundled sample (None
    without an ABSA card)."""
    if card is None:
        return None
    return _heldout(spec, checkpoint_stamp(spec), loaded, card)


def pairs_of(ev, i: int):
    """The sentence row ``i`` of ``ev`` and its pairs (one per category, in order)."""
    rows = ev.sentences.select([i])
    return ev.sentences[i], build_examples(rows, ev.task, ev.pair_order)


@st.cache_data(max_entries=64, show_spinner=False)
def suggestions(spec: str, stamp: str, i: int, category: str, _loaded, _ev, max_length: int):
    """Kind -> [(note, text, pair)] for sentence ``i`` asked about ``category``."""
    row, examples = pairs_of(_ev, i)
    ex = next(e for e in examples if e.category == category)
    found = suggest(_loaded.tokenizer, row, ex, _ev.task, opinion_pool(_ev.sentences),
                    max_length)
    return {k: [(s.note, s.text, s.pair) for s in v] for k, v in found.items()}, \
        (ex.text_a, ex.text_b)


@st.cache_data(max_entries=8, show_spinner=False)
def _default_pair(spec: str, stamp: str, _loaded, _ev, max_length: int) -> tuple[int, str]:
    return first_pair(_loaded, _ev, max_length)


def default_pair(spec: str, loaded, ev, max_length: int) -> tuple[int, str]:
    """The pair the page opens on (:func:`analysis.patching.run.default_pair`)."""
    return _default_pair(spec, checkpoint_stamp(spec), loaded, ev, max_length)


@st.cache_data(max_entries=32, show_spinner=False)
def _pair(spec: str, stamp: str, text, pair, ctext, cpair, direction: str, max_length: int,
          _loaded):
    def job(progress):
        return patch_pair(_loaded, text, pair, ctext, cpair, direction=direction,
                          max_length=max_length, progress=progress)

    return run_job("Patching every head and position", job, key=S.JOB_PAIR, lane=SHORT,
                   kind=S.KIND_PAIR)


def pair_result(spec: str, loaded, card, text, pair, ctext, cpair, direction: str):
    """:class:`analysis.patching.run.PairPatching` (InputError for bad input)."""
    if not (ctext or "").strip():
        raise InputError("The counterfactual is empty: type one or pick a suggestion.")
    return _pair(spec, checkpoint_stamp(spec), text, pair, ctext, cpair, direction,
                 pair_max_length(loaded, card), loaded)


@st.cache_data(max_entries=8, show_spinner=False)
def _corpus(spec: str, stamp: str, contrast: str, direction: str, max_length: int, _loaded,
            _ev):
    def job(progress):
        return corpus_patching(_loaded, _ev, contrast=contrast, direction=direction,
                               max_length=max_length, progress=progress)

    return run_job(f"Patching the {_ev.n_examples} held-out pairs", job, key=S.JOB_CORPUS,
                   kind=S.KIND_CORPUS, size=_ev.n_examples, unit="pairs")


def corpus_result(spec: str, loaded, card, ev, contrast: str, direction: str):
    """:class:`analysis.patching.corpus.CorpusPatching` of the held-out pairs (the CLI's
    ``--data sample`` gives the same numbers)."""
    return _corpus(spec, checkpoint_stamp(spec), contrast, direction,
                   pair_max_length(loaded, card), loaded, ev)
