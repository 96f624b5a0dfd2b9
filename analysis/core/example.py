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
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

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
# bench/bench_example.py (numbers in bench/README.md and docs/METHODS.md section 7).
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


def machine_threads() -> int:
    """The thread count of the example's build: ``$OMP_NUM_THREADS`` when set, else the CPU
    cores this process may run on (its affinity; ``os.cpu_count()`` elsewhere). Torch's default
    is the physical cores, which on a small virtual machine may be half of them."""
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


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


def missing_message() -> str:
    """The one line said where the example is needed but not built."""
    return (f"The example checkpoint is not built yet: run `{BUILD_COMMAND}` once (about "
            "two minutes on a 2-core CPU), or start the dashboard and let it build it.")


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
