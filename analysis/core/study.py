"""The one interface of every study (issue 44): typed inputs in, ONE typed result out, whose
JSON schema is declared once and used by the page (its JSON download), the CLI (``--out``) and
the report (the finding's numbers).

A study package exposes ``STUDY = StudyDef(name, title, inputs=Inputs, result=Result,
plan=plan)``:

- ``Inputs``: a frozen dataclass of everything the computation needs that is not a loaded
  model (texts, a corpus, settings);
- ``Result``: a dataclass that inherits :class:`StudyResult` and declares its JSON keys once in
  ``SCHEMA`` (a :class:`Schema`); :meth:`StudyResult.to_json` builds the JSON from
  :meth:`StudyResult.json_fields`, checked against the schema, so the CLI, the page and the report
  cannot drift apart; :meth:`StudyResult.from_json` reads it back (the precomputed results of the
  example, a report);
- ``plan(inputs, models)``: ONE description of the work for the job queue
  (:mod:`analysis.core.execution.work`: a plain ``fn(progress)``, a ``Corpus`` job, a ``Study``
  of several corpus jobs, an ``Apart`` training process). Where it runs is never the study's
  choice: :meth:`StudyDef.run` hands it to a placement (:mod:`analysis.core.execution
  .placements`: this process, or the Ray cluster of ``--ray`` / the server's settings); the page
  hands the same description to ``ui.common.jobs.run_job``, which uses the server's placement.

As LIT's specs and Captum's one ``attribute()``: one way in, one shape out, for every study.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Callable, ClassVar

import numpy as np

from analysis.core.execution.placements import InProcess, Placement

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Field:
    """One key of a result's JSON: its name, what it holds (in words, with its unit and its
    indexing: "layers x heads, 0-indexed"), and whether it may be absent."""

    name: str
    description: str
    optional: bool = False


@dataclass(frozen=True)
class Schema:
    """The JSON keys of a study's result, declared once (:class:`Field` each)."""

    fields: tuple[Field, ...]
    version: int = 1

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def check(self, data: dict) -> dict:
        """``data`` when its keys are the schema's (every required one, no other); ValueError
        naming the difference otherwise (a programming error, never a user's)."""
        keys = set(data)
        required = {f.name for f in self.fields if not f.optional}
        missing, extra = required - keys, keys - set(self.names)
        if missing or extra:
            raise ValueError(f"result JSON does not match its schema: missing {sorted(missing)}, "
                             f"not declared {sorted(extra)}")
        return data

    def describe(self) -> list[dict]:
        """The schema as data (the CLI's ``--help`` text, docs)."""
        return [{"key": f.name, "description": f.description, "optional": f.optional}
                for f in self.fields]


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON: numpy arrays and scalars to lists and numbers, NaN and
    infinities to None, tuples to lists, dataclasses to their fields; dict keys as strings."""
    if isinstance(value, StudyResult):
        return value.to_json()
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_safe(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class StudyResult:
    """Base of every study's result dataclass (see the module docstring)."""

    SCHEMA: ClassVar[Schema]

    def json_fields(self) -> dict:
        """The result's JSON keys and values (default: the dataclass's fields, each
        :func:`json_safe`; a study whose JSON differs from its fields overrides this)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_json(self) -> dict:
        """The result as plain JSON, checked against ``SCHEMA``: what the CLI writes, the page
        downloads and the report keeps."""
        data = {k: json_safe(v) for k, v in self.json_fields().items()}
        return self.SCHEMA.check(data)

    @classmethod
    def from_json(cls, data: dict):
        """The result back from its JSON (default: the dataclass built from the schema's keys;
        a study whose fields differ from its JSON overrides this)."""
        cls.SCHEMA.check(data)
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class StudyDef:
    """One study: its name (page URL, package, CLI command and test prefix), its title (the
    page's), its input and result types, and its plan (module docstring)."""

    name: str
    title: str
    inputs: type
    result: type
    plan: Callable[[Any, Any], Any]
    # the inputs its page opens on for the example checkpoint (None: it has no such view); the
    # precomputed result shipped for a first visitor is this run (analysis.core.example)
    example: Callable[[], Any] | None = None

    def run(self, inputs, models=None, placement: Placement | None = None,
            progress: Progress | None = None):
        """The study's result for ``inputs``: its plan run by ``placement`` (default: this
        process), with ``progress(fraction, text)`` told as it goes."""
        if not isinstance(inputs, self.inputs):
            raise TypeError(f"{self.name} takes {self.inputs.__name__}, "
                            f"not {type(inputs).__name__}")
        work = self.plan(inputs, models)
        result = (placement or InProcess()).run(work, progress or (lambda f, t: None))
        if not isinstance(result, self.result):
            raise TypeError(f"{self.name}'s plan returned {type(result).__name__}, "
                            f"not {self.result.__name__}")
        return result
