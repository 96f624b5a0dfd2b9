"""Trained dictionaries kept on disk (docs/METHODS.md section 19, "Kept on disk"): a top-k SAE
and a crosscoder, each in a folder of the dashboard's cache (``$DASHBOARD_CACHE``, else
``~/.cache/attention-dashboard``; :func:`analysis.core.example.cache_root`) named by a hash of
everything its weights depend on, so that a second request for the same dictionary (the page,
the CLI, another server process) reads it instead of training it again.

- the key (:func:`key`): the method's :data:`VERSION`, the model's weights (SHA-256 of its
  parameters: :func:`analysis.report.provenance.model_weights_hash`; the base model's too for a
  crosscoder), the corpus's fingerprint (:meth:`FeatureCorpus.fingerprint`: its inputs, their
  split and labels, its token cap), the tokens each input is cut to, the layer and every
  training setting (m, k, epochs, batch size, learning rate, seed, aux_k, activation);
- an SAE's folder holds ``sae.safetensors`` + ``card.json`` exactly as ``python -m analysis
  features train`` writes them (:meth:`analysis.features.sae.SAE.save`, float32); a
  crosscoder's ``crosscoder.safetensors`` + ``card.json`` (:func:`save_crosscoder`);
- the cache is bounded by bytes (issue 50): after each write the folders are removed oldest
  first (by last use: a hit touches its card) until they hold at most :data:`CACHE_BYTES`
  (the folder just written stays); a folder is written under a temporary name and renamed, so
  a reader never sees half of one; a cache that cannot be written is skipped (the dictionary
  is returned either way).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from analysis.core.errors import DataError
from analysis.core.example import cache_root
from analysis.core.study import json_safe
from analysis.features.crosscoder import Crosscoder
from analysis.features.sae import CARD, SAE
from analysis.features.train import TrainSettings
from analysis.report.provenance import model_weights_hash

VERSION = 1  # the training method's version: a change to train.py or crosscoder.py bumps it
CACHE_FOLDER = "features"
CACHE_BYTES = 256 * 2**20  # all the kept dictionaries (the example's SAE: 2.4 MB in float32)
CC_WEIGHTS = "crosscoder.safetensors"
CC_FORMAT = "attention-dashboard crosscoder 1"


def root() -> Path:
    return cache_root() / CACHE_FOLDER


def weights_id(loaded) -> str:
    """The model's identity in a key: the hash of its weights (equal weights, equal id,
    whatever the folder or hub id they came from)."""
    return model_weights_hash(loaded.model)


def key(kind: str, models: list[str], corpus_fp: str, max_length: int, layer: int,
        settings: TrainSettings) -> str:
    """The folder name of a ``kind`` ("sae" or "crosscoder") dictionary (module docstring)."""
    text = json.dumps([VERSION, kind, list(models), corpus_fp, int(max_length), int(layer),
                       settings.to_json()], sort_keys=True, default=str)
    return f"{kind}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}"


def folder(name: str) -> Path:
    return root() / name


def _touch(path: Path) -> None:
    try:
        os.utime(path / CARD)
    except OSError:
        pass


def load_sae(name: str) -> SAE | None:
    """The SAE kept under ``name``, or None (none there, or a damaged folder)."""
    path = folder(name)
    if not (path / CARD).is_file():
        return None
    try:
        sae = SAE.load(path)
    except DataError:
        return None
    _touch(path)
    return sae


def _write(name: str, write) -> Path | None:
    """``write(tmp_folder)`` then the folder renamed to ``name``; the cache pruned."""
    final = folder(name)
    tmp = root() / f".{name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    try:
        tmp.mkdir(parents=True, exist_ok=False)
        write(tmp)
        if final.exists():  # a damaged folder (or another process's same dictionary)
            aside = tmp.with_name(tmp.name + ".old")
            os.replace(final, aside)
            shutil.rmtree(aside, ignore_errors=True)
        os.replace(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    prune(spare=final)
    return final


def store_sae(name: str, sae: SAE) -> Path | None:
    """Keep ``sae`` under ``name`` (float32, as ``features train`` writes it)."""
    return _write(name, lambda tmp: sae.save(tmp, "float32"))


def save_crosscoder(cc: Crosscoder, path: Path) -> Path:
    """``crosscoder.safetensors`` (W_enc [2, d, m], b_enc [m], W_dec [2, m, d], b_dec [2, d])
    and ``card.json`` (format, layer, k, m, d, theta, scales, training) into ``path``."""
    # lazy: safetensors' numpy writer is only needed by the writers
    from safetensors.numpy import save_file

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    save_file({n: np.ascontiguousarray(getattr(cc, n), np.float32)
               for n in ("W_enc", "b_enc", "W_dec", "b_dec")}, str(path / CC_WEIGHTS),
              metadata={"format": CC_FORMAT})
    card = {**cc.card, "format": CC_FORMAT, "layer": int(cc.layer), "k": int(cc.k),
            "m": cc.m, "d": int(cc.W_enc.shape[1]), "theta": float(cc.theta),
            "scales": [float(s) for s in cc.scales]}
    (path / CARD).write_text(json.dumps(json_safe(card), indent=1, allow_nan=False) + "\n",
                             encoding="utf-8")
    return path


def load_crosscoder(name: str) -> Crosscoder | None:
    """The crosscoder kept under ``name``, or None (none there, or a damaged folder)."""
    # lazy: the reader is only needed when a crosscoder is opened
    from safetensors.numpy import load_file

    path = folder(name)
    if not (path / CARD).is_file() or not (path / CC_WEIGHTS).is_file():
        return None
    try:
        card = json.loads((path / CARD).read_text(encoding="utf-8"))
        t = load_file(str(path / CC_WEIGHTS))
        cc = Crosscoder(t["W_enc"], t["b_enc"], t["W_dec"], t["b_dec"],
                        (float(card["scales"][0]), float(card["scales"][1])), int(card["k"]),
                        float(card["theta"]), int(card["layer"]),
                        {"training": card.get("training", {})})
    except Exception:  # noqa: BLE001 - a damaged cache folder: trained again
        return None
    if card.get("format") != CC_FORMAT or cc.W_enc.shape[0] != 2:
        return None
    _touch(path)
    return cc


def store_crosscoder(name: str, cc: Crosscoder) -> Path | None:
    return _write(name, lambda tmp: save_crosscoder(cc, tmp))


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _used(path: Path) -> float:
    try:
        return (path / CARD).stat().st_mtime
    except OSError:
        return 0.0


def prune(max_bytes: int = CACHE_BYTES, spare: Path | None = None) -> list[Path]:
    """Remove the kept dictionaries, least recently used first, until they hold at most
    ``max_bytes`` (``spare`` stays, and counts first); returns those removed."""
    base = root()
    if not base.is_dir():
        return []
    now = time.time()
    for tmp in base.glob(".*.tmp"):  # a write a killed process left (an hour old)
        if tmp.is_dir() and now - tmp.stat().st_mtime > 3600:
            shutil.rmtree(tmp, ignore_errors=True)
    folders = sorted((f for f in base.iterdir() if f.is_dir() and f != spare
                      and not f.name.startswith(".")), key=_used, reverse=True)
    held = _bytes(spare) if spare is not None and spare.is_dir() else 0
    gone = []
    for path in folders:
        size = _bytes(path)
        if held + size <= max_bytes:
            held += size
        else:
            gone.append(path)
            shutil.rmtree(path, ignore_errors=True)
    return gone
