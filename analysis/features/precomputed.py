"""The example's result, precomputed and shipped so that a first visitor of the Features page
waits for nothing: ``data/precomputed/features.json`` (the shared record of
:func:`analysis.core.example.write_precomputed`: study, recipe, model, command, made, result)
and the dictionary itself in ``data/precomputed/features/`` (float16 safetensors and its
card). Written by ``python -m analysis features example``; read back only while the example's
recipe and the page's default settings are the ones it was made with (else None: the page
computes it live)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from analysis.core.example import precomputed, write_precomputed
from analysis.features.data import EXAMPLE_LAYER, EXAMPLE_SETTINGS, PRECOMPUTED
from analysis.features.study import NAME, Result

COMMAND = "python -m analysis features example"
DIGITS = 4
SHIPPED_DASHBOARDS = 24  # the shipped file keeps the 24 most frequent features' dashboards
ALIGN_KEYS = ("name", "label", "precision", "recall", "f1")


def compact(value):
    """``value`` with floats rounded to ``DIGITS`` decimals (a smaller file; the page shows 3)."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compact(v) for v in value]
    if isinstance(value, float):
        return round(value, DIGITS)
    return value


def shipped(data: dict) -> dict:
    """A result's JSON made small enough to ship (well under 500 KB): floats to ``DIGITS``
    decimals, each feature's best annotation without its counts, the dashboards of the
    ``SHIPPED_DASHBOARDS`` most frequent features (the page computes the rest live), two
    contexts of each crosscoder latent."""
    data = compact(data)
    feats = data["features"]
    feats["align"] = [None if a is None else {k: a[k] for k in ALIGN_KEYS}
                      for a in feats["align"]]
    keep = sorted(data["dashboards"], key=lambda f: -feats["freq"][int(f)])
    data["dashboards"] = {f: data["dashboards"][f] for f in keep[:SHIPPED_DASHBOARDS]}
    for latent in (data.get("crosscoder") or {}).get("latents", []):
        latent["contexts"] = latent["contexts"][:2]  # two each (the page shows the top ones)
    return data


def write(result: Result, folder: Path = PRECOMPUTED, root: Path | None = None) -> Path:
    """Write the example's result and its dictionary (float16); returns the JSON file."""
    result.live.sae.save(folder, "float16")
    return write_precomputed(NAME, shipped(result.to_json()), COMMAND,
                             dt.date.today().isoformat(), root=root)


def load(root: Path | None = None) -> Result | None:
    """The shipped :class:`Result` of the example, or None when it is missing, unreadable or
    made with another recipe, layer or settings."""
    record = precomputed(NAME, root)
    if record is None:
        return None
    res = record["result"]
    settings = {k: v for k, v in (res.get("settings") or {}).items() if k != "n_layers"}
    want = {**EXAMPLE_SETTINGS.to_json(), "m": EXAMPLE_SETTINGS.m}
    if res.get("layer") != EXAMPLE_LAYER or settings != want:
        return None
    try:
        return Result.from_json(res)
    except Exception:  # a damaged file: the page computes it live
        return None


def recipe_version(root: Path | None = None) -> int | None:
    record = precomputed(NAME, root)
    return None if record is None else record["recipe"].get("version")
