"""Building and loading the example checkpoint (:mod:`analysis.core.example` says where it lives and
with which recipe): the recipe's fine-tune through the aspects pipeline, evaluated on the held-out
sentences of the bundled sample, and the checkpoint loaded with its classifier and card."""

from __future__ import annotations

import contextlib
import fcntl
import time
from pathlib import Path
from typing import Callable
from dataclasses import replace

from analysis.core.example import RECIPE, Recipe, clear_progress, example_path, example_ready, \
    left_s, machine_threads, missing_message, recipe_dict, write_progress
from analysis.core.example import train_options as recipe_train_options
from analysis.absa.checkpoints import CARD_NAME, check_checkpoint_target, load_checkpoint, \
    save_checkpoint
from analysis.absa.data import split_dataset
from analysis.absa.pipeline import run_fine_tune
from analysis.absa.readers import load_sample
from analysis.core.errors import InputError
from analysis.core.models import EXAMPLE_NAME, EXAMPLE_SPEC, ModelLoadError, load_model


def split_sample(recipe: Recipe = RECIPE):
    """(train, held-out) sentences of the bundled sample under the recipe's split."""
    return split_dataset(load_sample(), recipe.heldout, seed=recipe.seed)


class BuiltMeanwhile(Exception):
    """A checkpoint of the recipe appeared in the build's target while it trained (another
    process built it): this build stops and keeps that one."""


CHECK_S = 2.0  # how often a build looks whether its target was built meanwhile


def _stamp(folder: Path) -> float | None:
    """The ready checkpoint's card time in ``folder`` (None: not ready with this recipe)."""
    try:
        return (folder / CARD_NAME).stat().st_mtime_ns if example_ready(folder) else None
    except OSError:
        return None


@contextlib.contextmanager
def _target_lock(out: Path):
    """An exclusive lock on the build's target across processes (a file beside it): the
    check "was it built meanwhile?" and the swap into place happen as one step."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}.lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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
    (default :func:`analysis.core.example.machine_threads`: the cores the machine leaves free;
    the caller's count is restored after).

    Never overwrites a checkpoint built meanwhile (issue 49): when a checkpoint of the recipe
    appears in ``out`` while this build runs (another process built it: the command line
    beside a server), the build stops at its next step and keeps that one; the check and the
    atomic swap into place hold a lock on the target, so two builds cannot both replace it.
    While it runs, its progress and time left are recorded for every other process
    (:func:`analysis.core.example.build_progress`; only for the cache's own example). Returns
    the folder."""
    # lazy: imported when used: torch (heavy)
    import torch

    saved = torch.get_num_threads()
    threads = int(threads or machine_threads())
    torch.set_num_threads(threads)
    try:
        return _build(out, progress, recipe, loaded, train_options, threads)
    finally:
        torch.set_num_threads(saved)


def _build(out, progress, recipe: Recipe, loaded, train_options: dict, threads: int) -> Path:
    out = check_checkpoint_target(out if out is not None else example_path())
    record = out == example_path().resolve()  # the cache's example: other processes watch it
    before = _stamp(out)  # a ready checkpoint now is replaced as asked; one built later is kept
    checked = [time.monotonic()]
    first: list = []  # (time, fraction) of the first training step

    def say(fraction: float, text: str) -> None:
        if record:
            left = left_s(fraction, time.monotonic() - first[0][0], first[0][1]) if first \
                else None
            write_progress(fraction, text, left, threads)
        if progress is not None:
            progress(fraction, text)

    def meanwhile() -> None:
        now = time.monotonic()
        if now - checked[0] >= CHECK_S:
            checked[0] = now
            if _stamp(out) not in (None, before):
                raise BuiltMeanwhile()

    try:
        say(0.0, "loading the base model")
        base = recipe.base if loaded is None else loaded.spec
        loaded = loaded if loaded is not None else load_model(recipe.base)
        train, test = split_sample(recipe)
        epochs = f"{recipe.epochs:g}"
        last = [0.0]

        def step(p) -> None:
            meanwhile()
            last[0] = 0.95 * p.step / max(1, p.total_steps)
            if not first:
                first.append((time.monotonic(), last[0]))
            say(last[0], f"epoch {p.epoch + 1}/{epochs}, step {p.step}/{p.total_steps}")

        def status(text: str) -> None:  # "Evaluating on the held-out sentences after epoch 2..."
            meanwhile()
            say(last[0], text[0].lower() + text[1:])

        run = run_fine_tune(loaded, train, test, recipe.task, data=recipe.data,
                            pair_order=recipe.pair_order, base_spec=base,
                            epochs=recipe.epochs, seed=recipe.seed, out=None,
                            progress=step, status=status,
                            card_extra={"example_recipe": recipe_dict(recipe)},
                            **{**recipe_train_options(recipe), **train_options})
        with _target_lock(out):
            if _stamp(out) not in (None, before):
                raise BuiltMeanwhile()
            save_checkpoint(run.result.model, loaded.tokenizer, out, run.card)
        say(1.0, "saved")
    except BuiltMeanwhile:
        if progress is not None:
            progress(1.0, "built meanwhile by another process: kept that one")
    finally:
        if record:
            clear_progress()
    return out


def load_example(path=None):
    """(LoadedModel with its classifier, card) of the example checkpoint, named ``example``
    (never its folder, which a demo must not show); ModelLoadError when it is not built."""
    folder = Path(path or example_path())
    if not example_ready(folder):
        raise ModelLoadError(missing_message())
    try:
        loaded, card = load_checkpoint(folder, spec=None if path else EXAMPLE_SPEC)
    except (InputError, ModelLoadError) as exc:  # a damaged build: said without its folder
        said = str(exc).replace(f"{folder}: ", "").replace(str(folder), "its folder")
        raise type(exc)(f"The example checkpoint is damaged: {said} Build it again.") from None
    return replace(loaded, spec=EXAMPLE_SPEC, name=EXAMPLE_NAME), card
