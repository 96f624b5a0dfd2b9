"""The Report's one interface (:mod:`analysis.core.study`): a saved report reopened, its JSON
read and checked (:func:`analysis.report.findings.report_from_json`: size and count caps,
types, strings cut, charts cleaned) into a :class:`analysis.report.findings.Report`, whose
JSON is the saved file's. The Report page's "Open this report" makes this call."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.core.study import StudyDef
from analysis.report.findings import MAX_JSON_BYTES, Report, report_from_json


@dataclass(frozen=True)
class Inputs:
    """The saved report's bytes (or text) and the most bytes it may have (a server may set
    less than :data:`MAX_JSON_BYTES`)."""

    data: bytes | str
    max_bytes: int = MAX_JSON_BYTES


def plan(inputs: Inputs, models=None):
    """Light work on one file (no model)."""

    def work(progress) -> Report:
        progress(0.0, "Reading the report...")
        return report_from_json(inputs.data, max_bytes=inputs.max_bytes)

    return work


STUDY = StudyDef(name="report", title="Report", inputs=Inputs, result=Report, plan=plan)
