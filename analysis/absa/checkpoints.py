"""Checkpoint folders of fine-tuned pair classifiers: safetensors + tokenizer + the card
``absa_card.json`` (strict JSON), written atomically (docs/METHODS.md section 7).

Saving never destroys what is not a checkpoint of this project: the target must be new, an
empty folder, or a folder holding a card and only the files a checkpoint is made of
(:data:`CHECKPOINT_FILES`). The checkpoint is written to a temporary folder beside the target
(``.<name>.tmp-*``) and swapped in with one atomic exchange of the two folders (Linux
``renameat2(RENAME_EXCHANGE)``; elsewhere two renames, undone if the second fails), so a
crash or a failed replacement leaves the old checkpoint in place. Temporary folders of this
project older than :data:`STALE_SECONDS` (left by a kill during a save) are removed when the
next save runs in the same parent folder.
"""

from __future__ import annotations

import ctypes
import errno
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from analysis.absa.data import CATEGORIES
from analysis.absa.tasks import LABELS, TASK_NAMES, TASKS, check_task, num_labels
from analysis.core.corpus.jsonsafe import loads
from analysis.core.errors import DataError, InputError
from analysis.core.execution.child import process_alive
from analysis.core.models import load_model

CARD_NAME = "absa_card.json"
# The files a checkpoint folder may hold (what save_pretrained of a model and a tokenizer and
# the card write); weight shards "model-00001-of-00003.safetensors" too.
CHECKPOINT_FILES = frozenset({
    CARD_NAME, "config.json", "generation_config.json", "model.safetensors",
    "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json",
    "special_tokens_map.json", "added_tokens.json", "vocab.txt", "vocab.json", "merges.txt",
    "spiece.model", "sentencepiece.bpe.model", "chat_template.jinja"})
SHARD = re.compile(r"^model-\d{5}-of-\d{5}\.safetensors$")
STALE_SECONDS = 3600  # a temporary folder this old is left over from a killed save
TEMP = re.compile(r"^\..+\.(tmp|old)-[^/]+$")
# the project's own folders in the system temp folder (a .zip being made or an upload being
# loaded: seconds each); one this old was left by a killed process
UPLOAD_TEMP = re.compile(r"^absa-(upload|zip)-[A-Za-z0-9_]+$")
UPLOAD_STALE_SECONDS = 600
# a fine-tune's checkpoint folder (analysis.absa.pipeline.run_fine_tune_apart), named after
# the process that made it: left over once that process is gone, whatever its age (a fine-tune
# runs for many minutes: its age says nothing)
FINETUNE_PREFIX = "dashboard-finetune-"
FINETUNE_TEMP = re.compile(rf"^{FINETUNE_PREFIX}(\d+)-[A-Za-z0-9_]+$")
MAX_CARD_BYTES = 4 << 20
# written first into every temporary save folder (and removed just before the swap): a folder
# holding it is this project's whatever else a killed save left in it
TEMP_MARK = ".attention-dashboard-save"


def _head(path: Path, cap: int, label: str) -> bytes:
    """The bytes of a small file, refused with one line when it is larger than ``cap``."""
    with open(path, "rb") as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise InputError(f"{label} is larger than {cap >> 20} MB.")
    return data


def _foreign(folder: Path) -> list[str]:
    """Names in ``folder`` that no checkpoint holds (subfolders, links, other files)."""
    return sorted(p.name for p in folder.iterdir()
                  if p.is_symlink() or not p.is_file()
                  or not (p.name in CHECKPOINT_FILES or SHARD.match(p.name)))


def _writable_parent(out: Path) -> None:
    """Refuse a target whose nearest existing ancestor is not a writable folder."""
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"{parent} is a file, so {out} cannot be made.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"The folder {parent} is not writable.")


def check_checkpoint_target(out_dir) -> Path:
    """The resolved folder a checkpoint may be written to: new, empty, or an earlier
    checkpoint of this dashboard (a card and checkpoint files only: replaced); any other file
    or folder is refused, as is a target in a folder that cannot be written."""
    out = Path(out_dir).expanduser().resolve()
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise InputError(f"{out} exists and is not an ABSA checkpoint; choose a new folder.")
        names = [p.name for p in out.iterdir()]
        if names and not (out / CARD_NAME).is_file():
            raise InputError(f"{out} exists and is not an ABSA checkpoint; choose a new folder.")
        other = _foreign(out) if names else []
        if other:
            shown = ", ".join(other[:3]) + (", ..." if len(other) > 3 else "")
            raise InputError(f"{out} holds files that are not part of a checkpoint ({shown}); "
                             "choose a new folder.")
    _writable_parent(out)
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


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where the
    system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _replace(tmp: Path, out: Path) -> None:
    """Put the folder ``tmp`` in the place of ``out``; an existing ``out`` is swapped out and
    deleted. If the replacement fails, the old ``out`` is where it was."""
    if not out.exists():
        os.rename(tmp, out)
        return
    if _exchange(tmp, out):  # tmp now holds the old checkpoint
        shutil.rmtree(tmp, ignore_errors=True)
        return
    old = out.parent / f".{out.name}.old-{os.getpid()}-{time.time_ns()}"
    os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        os.rename(old, out)  # restore the old checkpoint
        raise
    shutil.rmtree(old, ignore_errors=True)


def clean_stale(parent, now: float | None = None) -> list[str]:
    """Remove this project's temporary checkpoint folders (``.<name>.tmp-*`` and
    ``.<name>.old-*``) in ``parent`` that are older than :data:`STALE_SECONDS`; an old
    checkpoint whose target is missing is put back instead. A ``.tmp-*`` folder marked by
    :func:`save_checkpoint` (:data:`TEMP_MARK`) is removed whatever it holds (a save killed
    mid-write leaves partial files no checkpoint lists); any other only when it holds
    checkpoint files alone. Returns the names removed or restored."""
    parent, now = Path(parent), time.time() if now is None else now
    done = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return done
    for p in entries:
        m = TEMP.match(p.name)
        try:
            if not m or p.is_symlink() or not p.is_dir() \
                    or now - p.stat().st_mtime < STALE_SECONDS \
                    or (_foreign(p) and not (m.group(1) == "tmp"
                                             and (p / TEMP_MARK).is_file())):
                continue
            target = parent / p.name[1:p.name.rindex(f".{m.group(1)}-")]
            if m.group(1) == "old" and not target.exists() and (p / CARD_NAME).is_file():
                os.rename(p, target)
            else:
                shutil.rmtree(p)
            done.append(p.name)
        except OSError:
            continue
    return done


def clean_temps(now: float | None = None, root=None) -> list[str]:
    """Remove the project's leftovers in the system temp folder (``root``, default
    ``tempfile.gettempdir()``): upload and .zip folders (``absa-upload-*``, ``absa-zip-*``)
    older than :data:`UPLOAD_STALE_SECONDS`, left by a process killed while loading or
    packing a checkpoint, and fine-tune folders (``dashboard-finetune-<pid>-*``) whose
    process is gone. Called when the app starts; returns the names removed."""
    root, now = Path(root or tempfile.gettempdir()), time.time() if now is None else now
    done = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return done
    for p in entries:
        try:
            tune = FINETUNE_TEMP.match(p.name)
            if (UPLOAD_TEMP.match(p.name) or tune) and not p.is_symlink() and p.is_dir() \
                    and p.stat().st_uid == os.getuid() \
                    and (not process_alive(int(tune.group(1))) if tune
                         else now - p.stat().st_mtime >= UPLOAD_STALE_SECONDS):
                shutil.rmtree(p)
                done.append(p.name)
        except OSError:
            continue
    return done


def save_checkpoint(model, tokenizer, out_dir, card: dict) -> Path:
    """Write model (safetensors), tokenizer and ``absa_card.json`` to a temporary folder next
    to ``out_dir`` and swap it into place, so a crash never leaves a half-written model and a
    failed replacement keeps the old one. An existing checkpoint of this dashboard is
    replaced; any other file or folder is refused (:func:`check_checkpoint_target`). Stale
    temporary folders of earlier, killed saves beside it are removed first."""
    out = check_checkpoint_target(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(out.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        (tmp / TEMP_MARK).touch()
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / CARD_NAME).write_text(json_text(card), encoding="utf-8")
        check_checkpoint_target(out)  # still a checkpoint (or nothing) after the long write
        (tmp / TEMP_MARK).unlink()
        _replace(tmp, out)
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
        data = loads(_head(card, MAX_CARD_BYTES, f"{path}: {CARD_NAME}"), f"{path}: {CARD_NAME}")
    except DataError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: {CARD_NAME} is not a JSON object.")
    if data.get("task") not in TASKS:
        raise InputError(f"{path}: the card names no known task ({data.get('task')!r}).")
    return data


def load_checkpoint(path, task: str | None = None, max_params: int | None = None,
                    spec: str | None = None):
    """Load a checkpoint folder -> (LoadedModel with the classifier, card). Refuses folders of
    another task or without a matching classification head; checkpoints whose config or
    safetensors header declare more than ``max_params`` parameters (default: the machine's
    memory), checked before loading, and weights that do not match the config
    (:func:`analysis.core.models.load_model`). ``spec``: the name the model is loaded by when
    the folder has one (``example``: a demo resolves names, never paths)."""
    # lazy: imported when used: transformers (heavy)
    from transformers import AutoModelForSequenceClassification

    card = read_card(path)
    if task is not None and card["task"] != check_task(task):
        raise InputError(f"{path} was fine-tuned for {TASK_NAMES[card['task']]}, not "
                         f"{TASK_NAMES[task]}.")
    loaded = load_model(spec or str(path), model_class=AutoModelForSequenceClassification,
                        max_params=max_params)
    if getattr(loaded.model.config, "num_labels", None) != num_labels(card["task"]):
        raise InputError(f"{path}: the classifier has {loaded.model.config.num_labels} labels; "
                         f"{TASK_NAMES[card['task']]} needs {num_labels(card['task'])}.")
    return loaded, card


def make_card(base_spec: str, task: str, pair_order: str, data: str, seed: int, epochs: float,
              max_length: int, result, metrics: dict | None = None,
              lr: float = 2e-5, **extra) -> dict:
    """The card of a fine-tuning ``result`` (a
    :class:`analysis.absa.finetune.FineTuneResult`)."""
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
    try:
        return load_checkpoint(spec)
    except InputError:
        if is_checkpoint(spec):
            raise
    return load_model(spec), None
