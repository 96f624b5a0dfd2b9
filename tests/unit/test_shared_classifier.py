"""Every page that shows a model with its task head shares ONE loaded copy
(ui.common.frame.resources.get_headed; issue 50: Aspect heads, Attribution, Drift, Head
importance, Causal patching, Predictions and the Head atlas each held their own copy of the
example checkpoint, and the server kept another ~0.25 GB once a visitor opened one more page; a
visitor's own classifier was loaded by Attribution, Drift and the classifier pages, once each).
The loader is replaced by one that counts its calls: the pages must all hand back the object it
made, made once."""

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

    class FakeForSequenceClassification:  # what check_classifier reads of a classifier
        config = SimpleNamespace(num_labels=3, problem_type=None, architectures=[])

    def load(spec):
        calls.append(spec)
        if spec.endswith("encoder-only"):
            return None  # no task head in its config
        return SimpleNamespace(spec=spec, name=spec, model=FakeForSequenceClassification()), \
            (card if spec == EXAMPLE_SPEC else None)

    monkeypatch.setattr(resources, "load_headed", load)
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
        "drift": drift_blocks._after_model(EXAMPLE_SPEC),
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


def test_a_visitors_classifier_is_loaded_once_for_every_page(counted, monkeypatch):
    """A fine-tuned classifier of the visitor's (the sidebar's model): Attribution, Drift's
    after-model and Head importance hand back one copy; a model without a task head gives
    Attribution the sidebar's encoder and Drift the shared encoder, and Head importance a
    plain refusal."""
    from analysis.core.errors import InputError
    from ui.attribution import blocks as attribution_blocks
    from ui.attribution import state as attribution_state
    from ui.drift import blocks as drift_blocks
    from ui.importance import compute as importance_compute

    own, plain = "/data/my-classifier", "/data/encoder-only"
    encoder = SimpleNamespace(spec=plain, name="encoder")
    monkeypatch.setattr(drift_blocks, "get_model", lambda spec: encoder)
    sidebar = attribution_state.MODEL_CHOICES[1]
    first = attribution_blocks.page_model(sidebar, SimpleNamespace(spec=own, loaded=None),
                                          True)[0]
    assert first.spec == own
    assert drift_blocks._after_model(own) is first
    assert importance_compute.classifier(own)[0] is first
    assert counted == [own]
    assert attribution_blocks.page_model(sidebar, SimpleNamespace(spec=plain, loaded=encoder),
                                         True)[0] is encoder
    assert drift_blocks._after_model(plain) is encoder
    with pytest.raises(InputError, match="has no task head"):
        importance_compute.classifier(plain)
    assert counted == [own, plain]  # "no head" is remembered too
