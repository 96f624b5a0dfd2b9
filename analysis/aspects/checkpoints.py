"""Checkpoint folders of fine-tuned pair classifiers: safetensors + tokenizer + the card
``absa_card.json`` (strict JSON), written atomically (docs/METHODS.md section 7)."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

from analysis.aspects.data import CATEGORIES
from analysis.aspects.tasks import LABELS, TASK_NAMES, TASKS, check_task, num_labels
from analysis.errors import InputError

CARD_NAME = "absa_card.json"


def check_checkpoint_target(out_dir) -> Path:
    """The resolved folder a checkpoint may be written to: new, empty, or an earlier
    checkpoint of this dashboard (replaced); any other file or folder is refused."""
    out = Path(out_dir).expanduser().resolve()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / CARD_NAME).exists())):
        raise InputError(f"{out} exists and is not an ABSA checkpoint; choose a new folder.")
    return out


def finite_json(obj):
    """``obj`` with NaN/inf (a metric with nothing to count, e.g. binary accuracy without
    positive/negative gold) as None and numpy scalars as Python numbers: strict JSON."""
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    if hasattr(obj, "item") and getattr(obj, "ndim", 1) == 0:  # numpy scalar
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def json_text(data) -> str:
    """Strict, indented JSON of ``data`` (non-finite numbers as null)."""
    return json.dumps(finite_json(data), indent=2, default=float, allow_nan=False)


def save_checkpoint(model, tokenizer, out_dir, card: dict) -> Path:
    """Write model (safetensors), tokenizer and ``absa_card.json`` to a temporary folder next
    to ``out_dir`` and rename it into place, so a crash never leaves a half-written model.
    An existing checkpoint of this dashboard is replaced; any other non-empty folder is refused."""
    out = check_checkpoint_target(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / CARD_NAME).write_text(json_text(card), encoding="utf-8")
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}-{int(time.time())}"
            os.rename(out, old)
        os.rename(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def is_checkpoint(path) -> bool:
    """Whether ``path`` is a folder holding a card (a checkpoint of this dashboard)."""
    return Path(path).is_dir() and (Path(path) / CARD_NAME).exists()


def read_card(path) -> dict:
    p = Path(path).expanduser()
    if not p.is_dir():
        raise InputError(f"The folder {path} does not exist.")
    card = p / CARD_NAME
    if not card.is_file():
        raise InputError(f"{path} is not an ABSA checkpoint of this dashboard ({CARD_NAME} is "
                         "missing).")
    try:
        data = json.loads(card.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: {CARD_NAME} is not valid JSON.") from exc
    if data.get("task") not in TASKS:
        raise InputError(f"{path}: the card names no known task ({data.get('task')!r}).")
    return data


def load_checkpoint(path, task: str | None = None):
    """Load a checkpoint folder -> (LoadedModel with the classifier, card). Refuses folders of
    another task or without a matching classification head."""
    from transformers import AutoModelForSequenceClassification

    from analysis.models import load_model

    card = read_card(path)
    if task is not None and card["task"] != check_task(task):
        raise InputError(f"{path} was fine-tuned for {TASK_NAMES[card['task']]}, not "
                         f"{TASK_NAMES[task]}.")
    loaded = load_model(str(path), model_class=AutoModelForSequenceClassification)
    if getattr(loaded.model.config, "num_labels", None) != num_labels(card["task"]):
        raise InputError(f"{path}: the classifier has {loaded.model.config.num_labels} labels; "
                         f"{TASK_NAMES[card['task']]} needs {num_labels(card['task'])}.")
    return loaded, card


def make_card(base_spec: str, task: str, pair_order: str, data: str, seed: int, epochs: float,
              max_length: int, result, metrics: dict | None = None,
              lr: float = 2e-5, **extra) -> dict:
    """The card of a fine-tuning ``result`` (a :class:`analysis.aspects.finetune.FineTuneResult`)."""
    return {
        "kind": "absa-sentence-pair", "base_model": base_spec, "task": task,
        "task_name": TASK_NAMES[task], "pair_order": pair_order, "labels": list(LABELS),
        "categories": list(CATEGORIES), "data": data, "seed": seed, "epochs": epochs,
        "max_length": max_length, "lr": lr, "warmup": 0.1,
        "n_train_pairs": result.n_examples, "train_seconds": round(result.seconds, 1),
        "seconds_per_epoch": [round(s, 1) for s in result.seconds_per_epoch],
        "final_loss": result.losses[-1] if result.losses else None,
        "metrics": metrics or {},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **extra,
    }


def as_loaded(loaded, model, spec: str | None = None):
    """A LoadedModel view of a fine-tuned classifier (same tokenizer)."""
    return type(loaded)(spec=spec or loaded.spec, name=spec or loaded.name,
                        tokenizer=loaded.tokenizer, model=model, model_type=loaded.model_type,
                        n_layers=loaded.n_layers, n_heads=loaded.n_heads,
                        n_params=sum(p.numel() for p in model.parameters()),
                        max_length=loaded.max_length, special_tokens=loaded.special_tokens)


def load_any(spec: str):
    """(LoadedModel, card) of a checkpoint folder, or (LoadedModel, None) of any other model
    spec; a checkpoint folder that fails to load is an error, not a plain model."""
    from analysis.models import load_model

    try:
        return load_checkpoint(spec)
    except InputError:
        if is_checkpoint(spec):
            raise
    return load_model(spec), None
