"""The example's result, shipped (data/precomputed/predictions.json), so that the page opens at
once on the example checkpoint's held-out sentences: {"study", "recipe" (the example's recipe,
:func:`analysis.core.example.recipe_dict`), "model": "example", "command" (the CLI command that made
it), "made" (the date), "result" (:meth:`Result.to_json`)}. Read back only while the recipe is
the current one (a rebuilt example with another recipe answers otherwise)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from analysis.core.corpus.jsonsafe import loads
from analysis.core.example import RECIPE_VERSION, recipe_dict
from analysis.predictions.result import Result

STUDY = "predictions"
FOLDER = Path(__file__).resolve().parents[2] / "data" / "precomputed"
COMMAND = ("python -m analysis predictions --model example --data sample "
           "--out data/precomputed/predictions.json --precomputed")


def path(folder: Path | None = None) -> Path:
    return Path(folder or FOLDER) / f"{STUDY}.json"


def label() -> str:
    return f"precomputed for the example checkpoint (recipe v{RECIPE_VERSION})"


def precomputed(folder: Path | None = None) -> Result | None:
    """The shipped result of the example, or None when there is none or its recipe is not
    the current one."""
    try:
        d = loads(path(folder).read_text(encoding="utf-8"), "The precomputed result")
    except (OSError, ValueError):
        return None
    if not isinstance(d, dict) or d.get("study") != STUDY or d.get("recipe") != recipe_dict():
        return None
    try:
        return Result.from_json(d["result"])
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def write_precomputed(result: Result, out, command: str = COMMAND) -> Path:
    """Write ``result`` as the example's precomputed file ``out`` (strict JSON)."""
    doc = {"study": STUDY, "recipe": recipe_dict(), "model": "example", "command": command,
           "made": datetime.date.today().isoformat(), "result": result.to_json()}
    out = Path(out)
    out.write_text(json.dumps(doc, allow_nan=False, separators=(",", ":")), encoding="utf-8")
    return out
