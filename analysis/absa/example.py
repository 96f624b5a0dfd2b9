"""Building and loading the example checkpoint (:mod:`analysis.core.example` says where it lives and
with which recipe): the recipe's fine-tune through the aspects pipeline, evaluated on the held-out
sentences of the bundled sample, and the checkpoint loaded with its classifier and card."""

from __future__ import annotations

from pathlib import Path
from typing import Callable
from dataclasses import replace

from analysis.core.example import RECIPE, Recipe, example_path, example_ready, machine_threads, \
    missing_message, recipe_dict
from analysis.core.example import train_options as recipe_train_options
from analysis.absa.checkpoints import check_checkpoint_target, load_checkpoint
from analysis.absa.data import split_dataset
from analysis.absa.pipeline import run_fine_tune
from analysis.absa.readers import load_sample
from analysis.core.models import EXAMPLE_NAME, EXAMPLE_SPEC, ModelLoadError, load_model


def split_sample(recipe: Recipe = RECIPE):
    """(train, held-out) sentences of the bundled sample under the recipe's split."""
    return split_dataset(load_sample(), recipe.heldout, seed=recipe.seed)


def build_example(out=None, progress: Callable[[float, str], None] | None = None, *,
                  recipe: Recipe = RECIPE, loaded=None, threads: int | None = None,
                  **train_options) -> Path:
    """Fine-tune the recipe's base model on the bundled sample through the one pipeline
    (:func:`analysis.absa.pipeline.run_fine_tune`), evaluate on the held-out sentences and
    save the checkpoint atomically to ``out`` (default :func:`example_path`) with its card
    (which names the recipe). ``progress(fraction, text)`` is told each step ("epoch 2/8, step
    37/480") and each evaluation. ``loaded`` replaces the base model (tests: a tiny one);
    ``train_options`` go to the trainer (``max_steps``). The build runs on the model's device
    (a GPU where present: :func:`analysis.core.models.load_model`) with ``threads`` torch threads
    (default :func:`analysis.core.example.machine_threads`; the caller's count is restored after).
    Returns the folder."""
    # lazy: imported when used: torch (heavy)
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(int(threads or machine_threads()))
    try:
        return _build(out, progress, recipe, loaded, train_options)
    finally:
        torch.set_num_threads(saved)


def _build(out, progress, recipe: Recipe, loaded, train_options: dict) -> Path:
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
                        epochs=recipe.epochs, seed=recipe.seed, out=out,
                        progress=step, status=status,
                        card_extra={"example_recipe": recipe_dict(recipe)},
                        **{**recipe_train_options(recipe), **train_options})
    say(1.0, "saved")
    return run.folder


def load_example(path=None):
    """(LoadedModel with its classifier, card) of the example checkpoint, named ``example``
    (never its folder, which a demo must not show); ModelLoadError when it is not built."""
    folder = Path(path or example_path())
    if not example_ready(folder):
        raise ModelLoadError(missing_message())
    loaded, card = load_checkpoint(folder)
    return replace(loaded, spec=EXAMPLE_SPEC, name=EXAMPLE_NAME), card
