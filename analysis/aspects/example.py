"""The example checkpoint: the embedded default model fine-tuned on the bundled ABSA sample with
one fixed recipe (:data:`RECIPE`), kept in a cache folder, so that the Aspect heads and Drift
pages open on a ready fine-tuned model (docs/METHODS.md section 7, "The example checkpoint").

Built by ``python -m analysis aspects example [--out DIR]``, at build time of the packaged demo,
or in the background on a local first start (``ui/common/example.py``). Loaded by the model spec
``"example"`` (:func:`analysis.models.load_model`) or, with its card and classifier, by
:func:`load_example`. The cache root is ``$DASHBOARD_CACHE`` (default
``~/.cache/attention-dashboard``); the checkpoint is its folder ``example-absa``.

The recipe is also the Aspect heads page's default, so a visitor who presses "Fine-tune" with
the defaults gets the same model.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

BUILD_COMMAND = "python -m analysis aspects example"
CACHE_ENV = "DASHBOARD_CACHE"
FOLDER = "example-absa"
CARD_NAME = "absa_card.json"  # = analysis.aspects.checkpoints.CARD_NAME (not imported: light)


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
    base: str = "default"
    data: str = "bundled sample"


# Measured in bench/bench_example.py (numbers in bench/README.md and docs/METHODS.md section 7).
RECIPE = Recipe(task="nli_m", pair_order="review-aux", epochs=10, lr=1e-4, batch_size=16,
                max_length=64, heldout=0.15, seed=0)


def cache_root() -> Path:
    """``$DASHBOARD_CACHE``, else ``~/.cache/attention-dashboard``."""
    root = os.environ.get(CACHE_ENV, "").strip()
    return Path(root).expanduser() if root else Path.home() / ".cache" / "attention-dashboard"


def example_path() -> Path:
    """Where the example checkpoint lives (whether or not it is built)."""
    return cache_root() / FOLDER


def recipe_dict(recipe: Recipe = RECIPE) -> dict:
    return asdict(recipe)


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
            "3 minutes on a 2-core CPU), or start the dashboard and let it build it.")


def split_sample(recipe: Recipe = RECIPE):
    """(train, held-out) sentences of the bundled sample under the recipe's split."""
    from analysis.aspects.data import split_dataset
    from analysis.aspects.readers import load_sample

    return split_dataset(load_sample(), recipe.heldout, seed=recipe.seed)


def build_example(out=None, progress: Callable[[float, str], None] | None = None, *,
                  recipe: Recipe = RECIPE, loaded=None, **train_options) -> Path:
    """Fine-tune the recipe's base model on the bundled sample through the one pipeline
    (:func:`analysis.aspects.pipeline.run_fine_tune`), evaluate on the held-out sentences and
    save the checkpoint atomically to ``out`` (default :func:`example_path`) with its card
    (which names the recipe). ``progress(fraction, text)`` is told each step ("epoch 2/8, step
    37/480") and each evaluation. ``loaded`` replaces the base model (tests: a tiny one);
    ``train_options`` go to the trainer (``max_steps``). Returns the folder."""
    from analysis.aspects.checkpoints import check_checkpoint_target
    from analysis.aspects.pipeline import run_fine_tune
    from analysis.models import load_model

    out = check_checkpoint_target(out if out is not None else example_path())
    say = progress or (lambda fraction, text: None)
    say(0.0, "loading the base model")
    base = recipe.base if loaded is None else loaded.spec
    loaded = loaded if loaded is not None else load_model(recipe.base)
    train, test = split_sample(recipe)
    epochs = f"{recipe.epochs:g}"

    last = [0.0]

    def step(p) -> None:
        last[0] = 0.95 * p.step / max(1, p.total_steps)
        say(last[0], f"epoch {p.epoch + 1}/{epochs}, step {p.step}/{p.total_steps}")

    def status(text: str) -> None:  # "Evaluating on the held-out sentences after epoch 2..."
        say(last[0], text[0].lower() + text[1:])

    run = run_fine_tune(loaded, train, test, recipe.task, data=recipe.data,
                        pair_order=recipe.pair_order, base_spec=base,
                        epochs=recipe.epochs, lr=recipe.lr, batch_size=recipe.batch_size,
                        max_length=recipe.max_length, seed=recipe.seed, out=out,
                        progress=step, status=status,
                        card_extra={"example_recipe": recipe_dict(recipe)}, **train_options)
    say(1.0, "saved")
    return run.folder


def load_example(path=None):
    """(LoadedModel with its classifier, card) of the example checkpoint, named ``example``
    (never its folder, which a demo must not show); ModelLoadError when it is not built."""
    from dataclasses import replace

    from analysis.aspects.checkpoints import load_checkpoint
    from analysis.models import EXAMPLE_NAME, EXAMPLE_SPEC, ModelLoadError

    folder = Path(path or example_path())
    if not example_ready(folder):
        raise ModelLoadError(missing_message())
    loaded, card = load_checkpoint(folder)
    return replace(loaded, spec=EXAMPLE_SPEC, name=EXAMPLE_NAME), card
