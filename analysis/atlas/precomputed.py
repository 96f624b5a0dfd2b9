"""The example's atlas shipped with the project (``data/precomputed/atlas.json``), so a first
visitor sees it at once: ``{"study", "recipe" (the example's recipe), "model": "example",
"command" (what made it), "made" (the date), "result" (the atlas's JSON, each head by its
facts only, numbers rounded to 5 decimals: :func:`compact`)}``. :func:`load` returns None when
the file is missing or was made with another recipe of the example (its numbers would not be
this example's). Written by ``python bench/bench_atlas.py --write-precomputed`` (or
``--from-json``: :func:`write`)."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from analysis.atlas.run import Result
from analysis.core.example import recipe_dict

STUDY = "atlas"
PATH = Path(__file__).resolve().parents[2] / "data" / "precomputed" / f"{STUDY}.json"
COMMAND = "python -m analysis atlas --model example --out atlas.json"


def _rounded(x):
    if isinstance(x, float):
        return round(x, 5)
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
    return out


def write(result: Result, command: str = COMMAND, path: Path = PATH) -> Path:
    """Write the example's atlas (``result``) with the current recipe and today's date."""
    data = {"study": STUDY, "recipe": recipe_dict(), "model": "example", "command": command,
            "made": _dt.date.today().isoformat(), "result": _rounded(compact(result))}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def load(path: Path = PATH) -> tuple[Result, dict] | None:
    """(the example's precomputed atlas, the file's header: recipe version, command, date), or
    None when the file is missing, unreadable or of another recipe."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("study") != STUDY \
            or data.get("recipe") != recipe_dict() or "result" not in data:
        return None
    head = {k: data.get(k) for k in ("command", "made", "model")}
    head["version"] = data["recipe"].get("version")
    return Result.from_json(data["result"]), head
