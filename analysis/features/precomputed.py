"""The example's result, precomputed and shipped so that a first visitor of the Features page
waits for nothing: ``data/precomputed/features.json`` = {"study", "recipe" (the example
checkpoint's recipe), "model": "example", "command", "made", "result"} and the dictionary
itself in ``data/precomputed/features/`` (float16 safetensors and its card). Written by
``python -m analysis features example``; read back only while the example's recipe is the one
it was made with (else None: the page computes it live)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from analysis.example import recipe_dict
from analysis.features.data import EXAMPLE_LAYER, EXAMPLE_SETTINGS, PRECOMPUTED
from analysis.features.sae import finite

STUDY = "features"
FILE = PRECOMPUTED.parent / f"{STUDY}.json"
COMMAND = "python -m analysis features example"
DIGITS = 4


def compact(value):
    """``value`` with floats rounded to ``DIGITS`` decimals (a smaller file; the page shows 3)."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compact(v) for v in value]
    if isinstance(value, float):
        return round(value, DIGITS)
    return value


def write(result, folder: Path = PRECOMPUTED, file: Path = FILE) -> Path:
    """Write the example's result and dictionary (float16); returns the JSON file."""
    result.live.sae.save(folder, "float16")
    payload = {"study": STUDY, "recipe": recipe_dict(), "model": "example",
               "command": COMMAND, "made": dt.date.today().isoformat(),
               "layer": EXAMPLE_LAYER, "settings": EXAMPLE_SETTINGS.to_json(),
               "result": compact(finite(result.to_json()))}
    file.write_text(json.dumps(payload, ensure_ascii=False, allow_nan=False,
                               separators=(",", ":")) + "\n", encoding="utf-8")
    return file


def load(file: Path = FILE):
    """The shipped :class:`analysis.features.study.Result` of the example, or None when it is
    missing, unreadable or made with another recipe or settings."""
    # lazy: the study module imports the whole package
    from analysis.features.study import Result

    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("recipe") != recipe_dict() \
            or data.get("settings") != EXAMPLE_SETTINGS.to_json():
        return None
    try:
        return Result.from_json(data["result"])
    except Exception:  # a damaged file: computed live instead
        return None


def recipe_version(file: Path = FILE) -> int | None:
    try:
        return int(json.loads(Path(file).read_text(encoding="utf-8"))["recipe"]["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
