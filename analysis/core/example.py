"""The example checkpoint, a core concept shared by the studies: the embedded default model
fine-tuned on the bundled ABSA sample with one fixed recipe (:data:`RECIPE`), kept in a cache
folder, so that the Aspect heads, Drift and Syntax pages open on a ready fine-tuned model
(docs/METHODS.md section 7, "The example checkpoint"). This module says where it lives, whether
it is built and with which recipe; it imports no study.

Built by ``python -m analysis aspects example [--out DIR]`` (the fine-tune is the aspects
study's: :func:`analysis.absa.example.build_example`), at build time of the packaged demo, or
in the background on a local first start (``ui/common/example.py``). Loaded by the model spec
``"example"`` (:func:`analysis.core.models.load_model`) or, with its card and classifier, by
:func:`analysis.absa.example.load_example`. The cache root is ``$DASHBOARD_CACHE`` (default
``~/.cache/attention-dashboard``); the checkpoint is its folder ``example-absa``.

The recipe is also the Aspect heads page's default, so a visitor who presses "Fine-tune" with
the defaults gets the same model.

Also here (issue 49): the build's thread count (:func:`machine_threads`: the cores the machine
leaves free), its ONE estimate in words (:func:`estimate_words`: the recipe's measured cost,
else the running build's own speed, read by every process from the record the building process
keeps beside the checkpoint: :func:`build_progress`), the line said where the example is missing
(:func:`missing_message`), and the precomputed results of the example (:func:`precomputed`).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from analysis.core.execution.child import process_alive
from analysis.core.execution.estimates import duration_words

BUILD_COMMAND = "python -m analysis aspects example"
CACHE_ENV = "DASHBOARD_CACHE"
FOLDER = "example-absa"
CARD_NAME = "absa_card.json"  # = analysis.absa.checkpoints.CARD_NAME (not imported: light)


# The cache key's version: a cached example whose card names another recipe (this version
# included) is rebuilt. 3 = issue 29 (every layer trained again, fused AdamW); the frozen
# top-2 builds of issue 22 and the whole-model builds before it had no version.
RECIPE_VERSION = 3


@dataclass(frozen=True)
class Recipe:
    """How the example is fine-tuned (and the page's defaults)."""

    task: str
    pair_order: str
    epochs: float
    lr: float
    batch_size: int
    max_length: int
    heldout: float  # share of the sample's sentences held out for evaluation
    seed: int  # split, classifier initialisation and batch order
    trained_layers: int | None = None  # only the top layers are trained (None: all)
    base: str = "default"
    data: str = "bundled sample"
    version: int = RECIPE_VERSION  # bumped when a build with the same fields learns otherwise


# Every layer trained, embeddings included (issue 29: a recipe that freezes layers makes the
# Drift page's "the last layers change most" true by construction). Measured in
# bench/studies/absa_example.py (numbers in bench/README.md and docs/METHODS.md section 7).
RECIPE = Recipe(task="nli_m", pair_order="review-aux", epochs=10, lr=1e-4, batch_size=16,
                max_length=64, heldout=0.15, seed=0, trained_layers=None)
# The recipe of issue 22 (only the top 2 layers trained): the bench's baseline, side by side.
PREVIOUS_RECIPE = Recipe(task="nli_m", pair_order="review-aux", epochs=10, lr=1e-4,
                         batch_size=16, max_length=64, heldout=0.15, seed=0, trained_layers=2)


def cache_root() -> Path:
    """``$DASHBOARD_CACHE``, else ``~/.cache/attention-dashboard``."""
    root = os.environ.get(CACHE_ENV, "").strip()
    return Path(root).expanduser() if root else Path.home() / ".cache" / "attention-dashboard"


def example_path() -> Path:
    """Where the example checkpoint lives (whether or not it is built)."""
    return cache_root() / FOLDER


def recipe_dict(recipe: Recipe = RECIPE) -> dict:
    return asdict(recipe)


def _cores() -> int:
    """The CPU cores this process may run on (its affinity; ``os.cpu_count()`` elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _load() -> float:
    """The machine's load average over the last minute (0 where the OS does not say)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return 0.0


def machine_threads(load: float | None = None, cores: int | None = None) -> int:
    """The torch thread count of the example's build: ``$OMP_NUM_THREADS`` when set, else the
    cores this process may run on that the rest of the machine leaves free (``cores`` minus
    the one-minute load average ``load``, rounded; at least 1).

    Why not every core: torch's threads of one operation wait for each other, so on a busy
    machine each of them waits for the slowest, whose core another process holds. Measured
    (issue 49, a 2-core machine at load 8-10): the build took 6.4 minutes with 1 thread and 109
    with the default 2 (bench/README.md, issue 29: 10 s a step at 2 threads under load 22).
    On an idle machine every core is used (85-89 s at 2 threads against 142 CPU-s at 1).
    This is the example's own policy until heavy work's threads have one for every job
    (issue 48, ``analysis.core.execution.threads``)."""
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    cores = _cores() if cores is None else max(1, int(cores))
    load = _load() if load is None else max(0.0, float(load))
    return max(1, min(cores, int(cores - load + 0.5)))


def train_options(recipe: Recipe = RECIPE) -> dict:
    """The recipe's options of the fine-tune (``run_fine_tune`` / ``fine_tune``) besides the
    task, pair order, epochs and seed: what the Aspect heads page passes too."""
    return {"lr": recipe.lr, "batch_size": recipe.batch_size, "max_length": recipe.max_length,
            "trained_layers": recipe.trained_layers}


def example_ready(path=None) -> bool:
    """Whether the example checkpoint is built with the current :data:`RECIPE` (its card says
    so); a folder built with an older recipe counts as missing and is rebuilt."""
    card = Path(path or example_path()) / CARD_NAME
    try:
        data = json.loads(card.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("example_recipe") == recipe_dict() \
        and (card.parent / "config.json").is_file()


# ---------------------------------------------------------------------------------------------
# How long the build takes (issue 49): ONE measured number, said the same way by every message
# (the command line's, the pages' "not built yet", their progress bars, the queue's "waiting
# behind"). Before a build runs: the recipe's measured cost; while one runs (in this process,
# the server's child or another command): the time left at the speed of its own steps so far,
# which the building process writes to a small record beside the checkpoint.

# CPU seconds of the recipe's build at one torch thread, loading included: on a free core, its
# wall time (bench/README.md, "Issue 29": 142 CPU-s; 85-89 s wall at 2 threads on an idle
# 2-core machine, .ci/run). A busy machine stretches it (6.4 minutes at load 8-10, issue 49).
BUILD_CPU_S = 142.0
PROGRESS_NAME = f".{FOLDER}.progress.json"
STALE_S = 900.0  # a record not rewritten for this long is a build that died (a step: seconds)
MIN_DONE = 0.02  # the share of the steps done before their speed is trusted


def progress_path() -> Path:
    """The running build's record (its progress and time left), beside the checkpoint."""
    return cache_root() / PROGRESS_NAME


def left_s(fraction: float, elapsed_s: float, since: float = 0.0) -> float | None:
    """Seconds left at the speed so far: the time since the first step (``since``: the
    fraction done then, so that loading the model does not count as training) per fraction
    done, times the fraction left; None before :data:`MIN_DONE` of the work is done past
    ``since``."""
    done = fraction - since
    if done < MIN_DONE or elapsed_s <= 0:
        return None
    return elapsed_s / done * max(0.0, 1.0 - fraction)


def write_progress(fraction: float, text: str, left: float | None, threads: int,
                   path: Path | None = None) -> None:
    """Record the running build's progress for every other process (written atomically)."""
    path = path or progress_path()
    record = {"pid": os.getpid(), "fraction": float(fraction), "text": str(text),
              "left_s": None if left is None else float(left), "threads": int(threads),
              "at": time.time()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only cache: the estimate is then the measured cost
        pass


def clear_progress(path: Path | None = None) -> None:
    """The build ended (built, stopped or failed): its record goes, if it is this process's."""
    path = path or progress_path()
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


def _alive(pid) -> bool:
    """Whether a record's ``pid`` (an int; anything else is no process) runs."""
    return isinstance(pid, int) and process_alive(pid)


def build_progress(path: Path | None = None) -> dict | None:
    """The record of a build running now (any process on this machine): ``{"pid", "fraction",
    "text", "left_s", "threads", "at"}``, or None when none runs (no record, its process gone,
    or not rewritten for :data:`STALE_S`)."""
    try:
        record = json.loads((path or progress_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not _alive(record.get("pid")) \
            or time.time() - float(record.get("at") or 0) > STALE_S:
        return None
    return record


def build_estimate(record: dict | None = None) -> tuple[float, bool]:
    """(seconds, measured live): the time left of the running build described by ``record``
    at the speed of its own steps, else the recipe's measured cost (:data:`BUILD_CPU_S`) for
    the part not done yet."""
    if record is not None and record.get("left_s") is not None:
        since = max(0.0, time.time() - float(record.get("at") or time.time()))
        return max(0.0, float(record["left_s"]) - since), True
    done = float(record.get("fraction") or 0.0) if record else 0.0
    return BUILD_CPU_S * max(0.0, 1.0 - done), False


def estimate_words(record: dict | None = None) -> str:
    """The one estimate in words: "about 4 minutes left, at the speed of its steps so far"
    while ``record``'s build has done enough steps, else "about 2 minutes on a free CPU core
    (measured), longer on a busy machine"."""
    seconds, live = build_estimate(record)
    if live:
        return f"{duration_words(seconds)} left, at the speed of its steps so far"
    return (f"{duration_words(seconds)}{' left' if record else ''} on a free CPU core (measured), "
            "longer on a busy machine")


def missing_message() -> str:
    """The one line said where the example is needed but not built: the build running now
    (any process) and its time left, else how to build it and what that costs."""
    record = build_progress()
    if record is not None:
        return (f"The example checkpoint is being built ({record.get('text') or 'starting'}): "
                f"{estimate_words(record)}.")
    return (f"The example checkpoint is not built yet: run `{BUILD_COMMAND}` once, "
            f"{estimate_words()}; or start the dashboard and let it build it.")


# ---------------------------------------------------------------------------------------------
# Precomputed results of the example (issue 49): what a first visitor sees at once, while the
# example is built or a study's live result is computed.

PRECOMPUTED_DIR = Path(__file__).resolve().parents[2] / "data" / "precomputed"


def precomputed_path(study: str, root: Path | None = None) -> Path:
    """Where the precomputed result of ``study`` for the example lives (whether or not it is
    there): ``data/precomputed/<study>.json``."""
    if not study.replace("_", "").isalnum():
        raise ValueError(f"not a study name: {study!r}")
    return (root or PRECOMPUTED_DIR) / f"{study}.json"


def precomputed(study: str, root: Path | None = None) -> dict | None:
    """The precomputed record of ``study`` for the example checkpoint: ``{"study", "recipe",
    "model", "command", "made", "result"}``, or None when there is none, it cannot be read, or
    it was made with another recipe than :data:`RECIPE` (its numbers would be another model's).
    A page shows its ``result`` labelled as precomputed until the live result is ready."""
    try:
        data = json.loads(precomputed_path(study, root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("study") != study \
            or data.get("recipe") != recipe_dict() or not isinstance(data.get("result"), dict):
        return None
    return data


def write_precomputed(study: str, result: dict, command: str, made: str,
                      root: Path | None = None) -> Path:
    """Write the precomputed record of ``study`` (``result``: its result's JSON, made on the
    example checkpoint of the current recipe by ``command`` on the date ``made``)."""
    path = precomputed_path(study, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"study": study, "recipe": recipe_dict(), "model": "example", "command": command,
              "made": made, "result": result}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def precomputed_label(record: dict) -> str:
    """How a page labels a precomputed result: what it is, from which recipe and when."""
    recipe = record.get("recipe") or {}
    return (f"Precomputed for the example checkpoint (recipe v{recipe.get('version', '?')}, "
            f"made {record.get('made', '?')}); the live result replaces it once it is ready.")
