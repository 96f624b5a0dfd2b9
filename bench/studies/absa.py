"""Benchmark: fine-tune the default model on SemEval-2014 restaurants (sentence pairs, Sun et
al. 2019) and evaluate on a held-out split made here (fixed seed).

    nice python -m bench.studies.absa --task qa_m --epochs 4 --out /work/absa_ckpt

Prints the paper's metrics next to two baselines measured in the same run on the same
held-out split: the majority label per pair (always "none") and the model before fine-tuning
(a randomly initialised classifier head on the frozen default encoder). Also prints training
time per epoch and ratios of the fine-tuned metrics to the baselines. Checkpoints go outside
the repository (never commit weights).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from bench import harness

DATA = harness.SEMEVAL
PAPER = {"qa_m": (91.5, 85.2), "nli_m": (91.7, 85.1), "qa_b": (92.0, 85.9),
         "nli_b": (91.9, 85.1)}  # Sun et al. 2019: aspect F1, 4-way accuracy


def _deadline(hhmm):
    """A should_stop callback that turns true after HH:MM UTC today (None: never)."""
    if not hhmm:
        return None
    import datetime as dt

    h, m = (int(x) for x in hhmm.split(":"))
    now = dt.datetime.now(dt.timezone.utc)
    end = now.replace(hour=h, minute=m, second=0, microsecond=0)
    return lambda: dt.datetime.now(dt.timezone.utc) >= end


def _budget(hhmm):
    """Seconds from now until HH:MM UTC today (None: no budget)."""
    if not hhmm:
        return None
    import datetime as dt

    h, m = (int(x) for x in hhmm.split(":"))
    now = dt.datetime.now(dt.timezone.utc)
    return max(60.0, (now.replace(hour=h, minute=m, second=0, microsecond=0) - now).total_seconds())


def parse(argv):
    from analysis.absa import tasks

    p = harness.parser(__doc__)
    p.add_argument("--task", default="qa_m", choices=tasks.TASKS)
    p.add_argument("--epochs", type=float, default=4)
    p.add_argument("--max-steps", type=int, default=None, help="cap (timing runs)")
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=24)
    p.add_argument("--test-fraction", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0, help="training seed (classifier init, order)")
    p.add_argument("--split-seed", type=int, default=0,
                   help="seed of the held-out split (keep 0 to compare runs)")
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--out", default="/work/absa_ckpt")
    p.add_argument("--init", default=None,
                   help="continue from this checkpoint (a second stage with a fresh schedule) "
                        "instead of the default model")
    p.add_argument("--train-until", default=None,
                   help="UTC time HH:MM: plan the steps (and the lr schedule) to end by then")
    p.add_argument("--stop-at", default=None,
                   help="UTC time HH:MM after which training stops early (then evaluates)")
    p.add_argument("--eval-every-epoch", action="store_true",
                   help="evaluate on the held-out split after each full pass (learning curve)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    from analysis.absa import tasks
    from analysis.absa.checkpoints import load_checkpoint
    from analysis.absa.data import split_dataset
    from analysis.absa.finetune import evaluate, make_classifier
    from analysis.absa.pipeline import run_fine_tune
    from analysis.absa.readers import read_semeval14
    from analysis.core.models import load_model

    args = parse(argv)
    if not Path(args.data).exists():
        print(f"skip: {args.data} not found")
        return 0
    bench = harness.start(args)
    ds = read_semeval14(args.data)
    train, test = split_dataset(ds, args.test_fraction, seed=args.split_seed)
    tr_ex = tasks.build_examples(train, args.task)
    te_ex = tasks.build_examples(test, args.task)
    print(f"SemEval-14 restaurants: {len(train)} train / {len(test)} held-out sentences "
          f"-> {len(tr_ex)} / {len(te_ex)} pairs ({tasks.TASK_NAMES[args.task]})", flush=True)

    loaded = load_model("default")
    # Baseline 1: majority label (none for every pair).
    import numpy as np

    gold_m = [tasks.LABELS.index(te_ex[k].gold) for k in range(
        0, len(te_ex), len(tasks.LABELS) if tasks.is_binary(args.task) else 1)]
    major = np.zeros((len(gold_m), len(tasks.LABELS)))
    major[:, tasks.NONE] = 1.0
    major[:, 0] = 0.5  # polarity fallback: positive (the most frequent polarity)
    base_major = tasks.metrics_from_scores(gold_m, major)
    # Baseline 2: untrained classifier head on the default encoder.
    with harness.Timer() as t:
        untrained = make_classifier(loaded, args.task, seed=args.seed)
        base_untrained = evaluate(untrained, loaded.tokenizer, te_ex, args.task,
                                  max_length=args.max_length)
    eval_s = t.wall
    print(f"baseline evaluation of {len(te_ex)} pairs took {eval_s:.1f}s", flush=True)

    last = [time.perf_counter()]

    def progress(pr):
        if pr.step % 50 == 0 or pr.step == pr.total_steps:
            now = time.perf_counter()
            print(f"step {pr.step}/{pr.total_steps} epoch {pr.epoch + 1} loss {pr.loss:.4f} "
                  f"{pr.examples_per_s:.1f} ex/s ({now - last[0]:.1f}s since last)", flush=True)
            last[0] = now

    start = loaded
    if args.init:
        start, init_card = load_checkpoint(args.init, task=args.task)
        print(f"continuing from {args.init} ({init_card['n_train_pairs']} pairs, "
              f"{init_card.get('train_seconds')}s before)", flush=True)

    def on_curve(k, m):
        print(f"held-out after epoch {k}: aspect F1 {m['aspect_f1']:.2f}, 4-way "
              f"{m['acc_4way']:.2f}, 3-way {m['acc_3way']:.2f}, binary {m['acc_binary']:.2f}",
              flush=True)

    run = run_fine_tune(start, train, test, args.task, base_spec="default",
                        data=f"{Path(args.data).name} (held-out {args.test_fraction:.0%}, seed "
                             f"{args.split_seed})",
                        epochs=args.epochs, lr=args.lr, batch_size=args.batch_size,
                        max_length=args.max_length, seed=args.seed, out=args.out,
                        epoch_curve=args.eval_every_epoch, progress=progress, on_curve=on_curve,
                        card_extra={"init": args.init}, max_steps=args.max_steps,
                        should_stop=_deadline(args.stop_at),
                        time_budget_s=_budget(args.train_until))
    result, metrics, curve, out = run.result, run.card["metrics"], run.card["curve"], run.folder
    steps = len(result.losses)
    if args.max_steps is None and steps < math.ceil(len(tr_ex) / args.batch_size * args.epochs):
        print(f"note: trained {steps} of the "
              f"{math.ceil(len(tr_ex) / args.batch_size * args.epochs)}"
              f" planned steps (time budget --train-until {args.train_until}, --stop-at "
              f"{args.stop_at})")
    print(f"\ntrained {steps} steps in {result.seconds:.0f}s "
          f"({result.seconds / max(steps, 1):.2f}s/step); per epoch: "
          f"{', '.join(f'{s:.0f}s' for s in result.seconds_per_epoch)}; checkpoint {out}")
    table(metrics, base_untrained, base_major, PAPER[args.task])
    bench.row("fine-tune", seconds=result.seconds, steps=steps)
    bench.done(metrics=metrics, untrained=base_untrained, majority=base_major,
               seconds=result.seconds, seconds_per_epoch=result.seconds_per_epoch, steps=steps,
               lr=args.lr, epochs=args.epochs, task=args.task, batch_size=args.batch_size,
               curve=curve)
    return 0


def table(metrics: dict, untrained: dict, major: dict, paper: tuple[float, float]) -> None:
    """The fine-tuned metrics beside the two baselines and the paper's; the target."""
    print(f"{'metric':<18}{'fine-tuned':>11}{'untrained':>11}{'majority':>10}{'x untr.':>9}"
          f"{'paper':>8}")
    for key in ("aspect_precision", "aspect_recall", "aspect_f1", "acc_4way", "acc_3way",
                "acc_binary"):
        ratio = metrics[key] / untrained[key] if untrained[key] else float("nan")
        ref = {"aspect_f1": paper[0], "acc_4way": paper[1]}.get(key)
        print(f"{key:<18}{metrics[key]:>11.2f}{untrained[key]:>11.2f}"
              f"{major[key]:>10.2f}{ratio:>9.2f}{(f'{ref:.1f}' if ref else ''):>8}")
    ok = metrics["aspect_f1"] >= 88.5 and metrics["acc_4way"] >= 82
    print(f"target aspect F1 >= 88.5 and 4-way >= 82: {'reached' if ok else 'NOT reached'}")


if __name__ == "__main__":
    raise SystemExit(main())
