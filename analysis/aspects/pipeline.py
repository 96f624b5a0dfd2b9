"""The one fine-tuning pipeline behind the Aspects page, ``aspects finetune`` and the
benchmark: pairs -> fine-tune (held-out evaluation after each full epoch: the learning curve)
-> final held-out evaluation -> card -> checkpoint folder (docs/METHODS.md section 7)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from analysis.aspects.checkpoints import check_checkpoint_target, make_card, save_checkpoint
from analysis.aspects.finetune import FineTuneResult, TrainProgress, evaluate, fine_tune
from analysis.aspects.tasks import PairExample, build_examples, default_pair_order


@dataclass
class FineTuneRun:
    result: FineTuneResult
    card: dict  # metrics and curve included
    eval_examples: list[PairExample] | None  # the held-out pairs (None without held-out data)
    folder: Path | None = None  # where the checkpoint was saved


def run_fine_tune(loaded, train, test, task: str, *, data: str, pair_order: str | None = None,
                  base_spec: str | None = None, epochs: float = 4, lr: float = 2e-5,
                  batch_size: int = 24, max_length: int = 128, seed: int = 0,
                  out=None, epoch_curve: bool = True,
                  progress: Callable[[TrainProgress], None] | None = None,
                  status: Callable[[str], None] | None = None,
                  on_curve: Callable[[int, dict], None] | None = None,
                  card_extra: dict | None = None, **train_options) -> FineTuneRun:
    """Fine-tune a copy of ``loaded.model`` on the pairs of ``train`` and evaluate it on
    ``test`` (a held-out Dataset, or None).

    With ``epoch_curve`` the held-out metrics after every full pass form the card's ``curve``
    (``on_curve(epoch, metrics)`` is told each point); ``status`` gets a line before each
    evaluation. The card names ``data`` and ``base_spec`` (default: ``loaded.spec``) and holds
    the held-out sentence ids; with ``out`` the checkpoint is saved there (the folder is checked
    first, before any training). ``train_options`` go to :func:`fine_tune` (``max_steps``,
    ``should_stop``, ``time_budget_s``)."""
    order = pair_order or default_pair_order(task)
    if out is not None:
        check_checkpoint_target(out)
    examples = build_examples(train, task, order)
    held = build_examples(test, task, order) if test is not None else None
    curve: list[dict] = []

    def held_out_metrics(model, text: str) -> dict:
        if status:
            status(text)
        return evaluate(model, loaded.tokenizer, held, task, max_length=max_length)

    def epoch_end(k: int, model) -> None:
        m = held_out_metrics(model, f"Evaluating on the held-out sentences after epoch {k}...")
        curve.append({"epoch": k, **m})
        if on_curve:
            on_curve(k, m)

    result = fine_tune(loaded, examples, task, epochs=epochs, lr=lr, batch_size=batch_size,
                       max_length=max_length, seed=seed, progress=progress,
                       epoch_end=epoch_end if held and epoch_curve else None, **train_options)
    metrics = {}
    if held is not None:
        metrics = held_out_metrics(result.model, "Evaluating on the held-out sentences...")
    card = make_card(base_spec or loaded.spec, task, order, data, seed, epochs, max_length,
                     result, metrics, lr=lr,
                     heldout_ids=list(test["id"]) if test is not None else [],
                     **(card_extra or {}), curve=curve)
    folder = None
    if out is not None:
        folder = save_checkpoint(result.model, loaded.tokenizer, out, card)
    return FineTuneRun(result, card, held, folder)
