"""The studies on the one interface (analysis.core.study, issue 44): No-op statistics,
Attention, Syntax, Attribution, Representations, Search and the Report each export their
StudyDefs under distinct names, with frozen inputs and a declared JSON schema; a plan given no
models loads them by the inputs' specs (what ``python -m analysis precompute`` and a notebook
do), with the numbers of the loaded ones; the examples are the pages' first views."""

from __future__ import annotations

import dataclasses

import datasets
import numpy as np
import pytest

from analysis.core.study import Schema, StudyDef

PACKAGES = ("noop", "attention", "syntax", "attribution", "representations", "search", "report")


def _studies() -> dict[str, StudyDef]:
    import importlib

    out = {}
    for name in PACKAGES:
        package = importlib.import_module(f"analysis.{name}")
        study = importlib.import_module(f"analysis.{name}.study")
        assert package.STUDY is study.STUDY and package.STUDY.name == name
        for value in vars(study).values():
            if isinstance(value, StudyDef):
                out[value.name] = value
    return out


def test_every_study_has_one_name_frozen_inputs_and_a_declared_schema():
    studies = _studies()
    assert sorted(studies) == sorted([
        "attention", "attribution", "attribution-faithfulness", "noop", "noop-gradients",
        "probe", "report", "representations", "representations-corpus", "search",
        "search-index", "syntax"])
    for name, study in studies.items():
        assert dataclasses.is_dataclass(study.inputs), name
        assert study.inputs.__dataclass_params__.frozen, name
        assert isinstance(study.result.SCHEMA, Schema) and study.result.SCHEMA.names, name
    with pytest.raises(TypeError, match="syntax takes Inputs, not dict"):
        studies["syntax"].run({"spec": "default"})


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


def test_a_plan_given_no_models_loads_them_by_spec(tiny):
    from analysis.attention.study import STUDY as ATTENTION, Inputs as AttentionInputs
    from analysis.noop.study import STUDY as NOOP, Inputs as NoopInputs

    text = "The soup was cold, sadly."
    by_spec = ATTENTION.run(AttentionInputs(tiny.spec, text, max_length=5))
    loaded = ATTENTION.run(AttentionInputs(tiny.spec, text, max_length=5), models=tiny)
    assert by_spec.model == loaded.model == tiny.spec
    assert by_spec.attentions.shape == (2, 4, 5, 5)  # the token cap: 5 tokens, [SEP] kept
    np.testing.assert_array_equal(by_spec.attentions, loaded.attentions)
    ds = datasets.Dataset.from_dict({"text": [text, "Is it open?"]})
    a = NOOP.run(NoopInputs(tiny.spec, ds, batch_size=1, norms=False))
    b = NOOP.run(NoopInputs(tiny.spec, ds, batch_size=1, norms=False), models=tiny)
    assert a.to_json() == b.to_json() and a.n_examples == 2 and a.seconds > 0


def test_the_examples_are_the_pages_first_views():
    from analysis.noop import STUDY as NOOP
    from analysis.syntax import STUDY as SYNTAX

    noop, syntax = NOOP.example(), SYNTAX.example()
    assert (noop.spec, len(noop.dataset), noop.norms, noop.max_length) == (
        "default", 200, True, None)
    assert (syntax.spec, len(syntax.treebank)) == ("default", 104)
    assert {name for name, s in _studies().items() if s.example is not None} == {
        "noop", "syntax"}
