"""What a features job costs before it runs (issue 50; docs/METHODS.md section 19, "Cost"):
its forward passes at the measured ``forward`` rate of :mod:`analysis.core.cost`, and its
training at a measured rate per floating-point operation, so that a page can refuse up front
a job that would pass the host's ``max_job_seconds``, as the other corpus studies do.

- forward passes: the corpus once (the activations), each extra corpus read for the alignment
  once, the held-out inputs three times (splice fidelity: intact, spliced, zeroed), with class
  effects the held-out inputs once more per feature measured (an upper bound: a feature counts
  only the inputs it fires on, and the layers below the patched one run once), with the
  crosscoder the corpus once more through the base model;
- training: ``12 n E D m`` operations for the SAE (``n`` training tokens, ``E`` passes, ``D``
  the width, ``m`` features: the encoder and decoder products, forward and backward), twice
  that for the crosscoder (two models), at :data:`TRAIN_PER_FLOP` seconds on two threads; a
  dictionary already kept on disk costs nothing to train.
"""

from __future__ import annotations

from analysis.core import cost
from analysis.core.errors import InputError
from analysis.features.train import default_epochs, default_m

# One training step's seconds per operation of 12 B D m on two torch threads: 0.75e-11 to
# 1.3e-11 for D 384/768 and m 768/1536 (train_sae and train_crosscoder on 3,580 to 8,192
# random tokens, 2 to 4 epochs, batches of 512), 2026-12-07 11:56-11:59 UTC, the 2-core
# machine shared with another job: the quietest runs (at load 5 the same steps took 7 to 15
# times as long). Not yet measured on idle cores by bench/server/caps.py. Checked against the
# whole study on the embedded model at layer 3 (with the treebank sample for the alignment,
# 12:12 UTC, load 3): the bundled corpus with m 768, 30 epochs, estimated 9.5 s (training 3.8)
# against 5.5 s run (training 3.4); the ABSA sample's sentences by default, 5.0 s (1.0)
# against 2.3 s (1.0): the forward passes' rate errs long, the training term is close.
TRAIN_PER_FLOP = 1.0e-11
SPLICE_PASSES = 3  # intact, spliced and zeroed forwards of each held-out input


def _lengths(loaded, corpus, cap: int) -> list[int]:
    return cost.lengths_of(loaded.tokenizer, corpus.texts, corpus.pairs, cap)


def _width(loaded) -> int:
    return cost.shape_of(loaded).hidden


def estimate(loaded, inputs, base=None, kept: bool = False, cc_kept: bool = False) -> dict:
    """``{"seconds", "forward", "training", "inputs", "tokens"}``: the estimated seconds of
    ``inputs`` (:class:`analysis.features.study.Inputs`) on two idle cores; ``kept``,
    ``cc_kept``: the SAE, the crosscoder is already on disk (not trained)."""
    corpus = inputs.corpus
    cap = min(int(corpus.max_length or 512), int(loaded.max_length))
    shape = cost.shape_of(loaded)
    lengths = _lengths(loaded, corpus, cap)
    held = [n for n, h in zip(lengths, corpus.heldout) if h]
    passes = cost.seconds("forward", shape, lengths)
    passes += SPLICE_PASSES * cost.seconds("forward", shape, held)
    if inputs.effects and getattr(loaded.model.config, "num_labels", 0) and inputs.layer > 0:
        passes += inputs.effects * cost.seconds("forward", shape, held)
    for extra in inputs.annotate:
        passes += cost.seconds("forward", shape, _lengths(loaded, extra, cap))
    if inputs.compare and base is not None:
        passes += cost.seconds("forward", cost.shape_of(base), lengths)
    n_train = sum(n for n, h in zip(lengths, corpus.heldout) if not h)
    d = _width(loaded)
    s = inputs.settings
    m = int(s.m or default_m(d, n_train))
    epochs = int(s.epochs or default_epochs(n_train))
    one = 12.0 * n_train * epochs * d * m
    flops = 0.0 if kept or inputs.sae is not None else one
    if inputs.compare and base is not None and not cc_kept:
        flops += 2 * one
    training = TRAIN_PER_FLOP * flops
    return {"seconds": passes + training, "forward": passes, "training": training,
            "inputs": len(lengths), "tokens": int(sum(lengths))}


def check(loaded, inputs, base=None, budget_s: float | None = None, kept: bool = False,
          cc_kept: bool = False) -> dict:
    """:func:`estimate`, or :class:`InputError` (one line: the estimate, the budget and what
    fits) when it passes ``budget_s`` (None: no budget)."""
    est = estimate(loaded, inputs, base, kept, cc_kept)
    if budget_s is None or est["seconds"] <= budget_s:
        return est
    fits = max(1, int(est["inputs"] * budget_s / est["seconds"]))
    raise InputError(
        f"Training this dictionary would take {cost.duration(est['seconds'])} on this server "
        f"({est['inputs']:,} inputs, {est['tokens']:,} tokens; "
        f"{cost.duration(est['training'])} of it training); a job may take at most "
        f"{cost.duration(budget_s)} here. Use at most {fits:,} inputs of this length, fewer "
        "features or epochs, or switch 'Before and after' off.")


def words(est: dict) -> str:
    """The estimate a page shows before the job runs."""
    return (f"Estimated time: {cost.duration(est['seconds'])} for {est['inputs']:,} inputs "
            f"({est['tokens']:,} tokens; {cost.duration(est['training'])} of it training) on "
            "this server's two cores when idle; longer while other jobs run.")
