"""The study interface (analysis.core.study, issue 44) and the precomputed results of the
example (analysis.core.example): a result's JSON is checked against its declared schema, NaN
and numpy become plain JSON, a plan runs through a placement, and a precomputed record of
another recipe is never shown."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from analysis.core import example
from analysis.core.study import Field, Schema, StudyDef, StudyResult, json_safe


@dataclass(frozen=True)
class Inputs:
    n: int


@dataclass
class Result(StudyResult):
    SCHEMA = Schema((Field("squares", "the first n squares"), Field("note", "a note", True)))

    squares: list
    note: str | None = None

    def json_fields(self) -> dict:
        out = {"squares": np.asarray(self.squares)}
        if self.note is not None:
            out["note"] = self.note
        return out


def _plan(inputs: Inputs, models):
    def work(progress):
        progress(0.5, "squaring")
        return Result(squares=[i * i for i in range(inputs.n)])
    return work


STUDY = StudyDef(name="squares", title="Squares", inputs=Inputs, result=Result, plan=_plan)


def test_run_goes_through_a_placement_and_reports_progress():
    seen = []
    result = STUDY.run(Inputs(4), progress=lambda f, t: seen.append((f, t)))
    assert result.squares == [0, 1, 4, 9]
    assert seen == [(0.5, "squaring")]
    with pytest.raises(TypeError, match="takes Inputs"):
        STUDY.run({"n": 4})


def test_json_is_checked_against_the_schema_and_round_trips():
    r = Result(squares=[0, 1])
    assert r.to_json() == {"squares": [0, 1]}
    assert Result.from_json({"squares": [0, 1], "note": "x"}).note == "x"
    with pytest.raises(ValueError, match="missing \\['squares'\\]"):
        Result.from_json({"note": "x"})

    class Wrong(Result):
        def json_fields(self):
            return {"squares": [], "extra": 1}

    with pytest.raises(ValueError, match="not declared \\['extra'\\]"):
        Wrong(squares=[]).to_json()


def test_json_safe_turns_numpy_and_nan_into_plain_json():
    value = {"a": np.array([[1.5, np.nan]]), "b": np.float32(2.0), 3: (np.int64(4), np.inf)}
    out = json_safe(value)
    assert out == {"a": [[1.5, None]], "b": 2.0, "3": [4, None]}
    json.dumps(out, allow_nan=False)  # strict JSON


def test_precomputed_is_read_only_for_the_current_recipe(tmp_path):
    assert example.precomputed("squares", root=tmp_path) is None
    path = example.write_precomputed("squares", {"squares": [0, 1]}, "python -m analysis x",
                                     "2026-12-07", root=tmp_path)
    record = example.precomputed("squares", root=tmp_path)
    assert record["result"] == {"squares": [0, 1]} and record["model"] == "example"
    assert f"recipe v{example.RECIPE_VERSION}" in example.precomputed_label(record)
    old = json.loads(path.read_text())
    old["recipe"]["epochs"] = 1  # another recipe's numbers: never shown as this model's
    path.write_text(json.dumps(old))
    assert example.precomputed("squares", root=tmp_path) is None
    path.write_text("{not json")
    assert example.precomputed("squares", root=tmp_path) is None
    with pytest.raises(ValueError):
        example.precomputed_path("../etc/passwd")
