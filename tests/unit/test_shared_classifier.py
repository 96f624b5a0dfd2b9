"""Every page that shows the example checkpoint with its head shares ONE loaded copy
(ui.common.frame.resources.get_classifier; issue 50: Aspect heads, Attribution, Drift, Head
importance, Causal patching, Predictions and the Head atlas each held their own, and the server
kept another ~0.25 GB once a visitor opened one more page). The loader is replaced by one that
counts its calls: the pages must all hand back the object it made, made once."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import streamlit as st

from analysis.core.models import EXAMPLE_SPEC
from ui.common.frame import resources


@pytest.fixture()
def counted(monkeypatch):
    calls = []
    card = {"task": "QA_M", "pair_order": "sentence_first"}

    def load(spec):
        calls.append(spec)
        return SimpleNamespace(spec=spec, name="example"), card

    monkeypatch.setattr(resources, "load_classifier", load)
    monkeypatch.setattr(resources, "checkpoint_stamp", lambda spec: "stamp-1")
    st.cache_resource.clear()
    yield calls
    st.cache_resource.clear()


def test_every_page_gets_the_one_copy_of_the_example_checkpoint(counted, monkeypatch):
    from ui.aspects import models as aspects_models
    from ui.attribution import blocks as attribution_blocks
    from ui.attribution import state as attribution_state
    from ui.drift import blocks as drift_blocks
    from ui.importance import compute as importance_compute
    from ui.patching import compute as patching_compute
    from ui.predictions import compute as predictions_compute

    monkeypatch.setattr(aspects_models, "split_sample", lambda: ([], []))
    monkeypatch.setattr(aspects_models, "build_examples", lambda rows, task, order: [])
    first, card = resources.get_classifier(EXAMPLE_SPEC)
    got = {
        "aspects": aspects_models._example("stamp-1")[0],
        "attribution": attribution_blocks.page_model(attribution_state.MODEL_CHOICES[0],
                                                     None, True)[0],
        "drift": drift_blocks._after_model(EXAMPLE_SPEC, "stamp-1"),
        "importance": importance_compute.classifier(EXAMPLE_SPEC)[0],
        "patching": patching_compute.classifier(EXAMPLE_SPEC)[0],
        "predictions": predictions_compute.classifier(EXAMPLE_SPEC)[0],
    }
    assert {page: m is first for page, m in got.items()} == dict.fromkeys(got, True)
    assert counted == [EXAMPLE_SPEC]  # loaded once for all of them


def test_a_rewritten_checkpoint_is_loaded_anew(counted, monkeypatch):
    a = resources.get_classifier(EXAMPLE_SPEC)[0]
    assert resources.get_classifier(" Example ")[0] is a and len(counted) == 1  # one spec
    monkeypatch.setattr(resources, "checkpoint_stamp", lambda spec: "stamp-2")
    b = resources.get_classifier(EXAMPLE_SPEC)[0]
    assert b is not a and counted == [EXAMPLE_SPEC, EXAMPLE_SPEC]
