"""The example's atlas shipped with the project (``data/precomputed/atlas.json``, through the
shared reader and writer :func:`analysis.core.example.precomputed` /
:func:`~analysis.core.example.write_precomputed`), so a first visitor sees it at once. Its
``result`` is the atlas's JSON with each head by its facts only, numbers rounded to 4 decimals
(:func:`compact`: the roles, uses and words are derived from the facts again, so the file stays
small); :func:`load` returns None when the file is missing or was made with another recipe of
the example. Written by ``python -m bench.studies.atlas --write-precomputed`` (or
``--from-json``)."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from analysis.atlas.run import STUDY, Result
from analysis.core.example import precomputed, precomputed_label, write_precomputed

COMMAND = "python -m analysis atlas --model example --out atlas.json"


def _rounded(x):
    if isinstance(x, float):
        return round(x, 4)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_rounded(v) for v in x]
    return x


def compact(result: Result) -> dict:
    """The result's JSON with only what :meth:`Result.from_json` reads: each head's facts (its
    role, use and words are derived from them again), the model-level numbers, the thresholds,
    the studies and the notes."""
    out = result.to_json()
    keep = {"layers", "heads_per_layer", "heads", "before", "thresholds", "model", "studies",
            "model_facts", "notes"}
    out = {k: v for k, v in out.items() if k in keep}
    out["heads"] = [[{"facts": h["facts"]} for h in row] for row in out["heads"]]
    if out["before"]:
        out["before"] = {**out["before"], "heads": [[{"facts": h["facts"]} for h in row]
                                                    for row in out["before"]["heads"]]}
    return _rounded(out)


def write(result: Result, command: str = COMMAND, root: Path | None = None) -> Path:
    """Write the example's atlas (``result``) with the current recipe and today's date."""
    return write_precomputed(STUDY.name, compact(result), command,
                             _dt.date.today().isoformat(), root)


def load(root: Path | None = None) -> tuple[Result, dict] | None:
    """(the example's precomputed atlas, its record's header: ``label``, ``made``, ``command``,
    ``version``), or None when the file is missing, unreadable or of another recipe."""
    record = precomputed(STUDY.name, root)
    if record is None:
        return None
    head = {k: record.get(k) for k in ("command", "made", "model")}
    head["version"] = (record.get("recipe") or {}).get("version")
    head["label"] = precomputed_label(record)
    return Result.from_json(record["result"]), head
