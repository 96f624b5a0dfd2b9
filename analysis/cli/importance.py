"""``importance``: switch each head and each layer of a fine-tuned classifier off and measure
what it loses on labelled data -> JSON (same numbers as the Head importance page;
docs/METHODS.md section 12)."""

from __future__ import annotations

import json

from analysis.cli.options import out_file, positive_int
from analysis.cli.progress import progress_bar
from analysis.cli.scale import add_ray_options, placed
from analysis.absa.tasks import TASKS

METRICS = ("aspect_f1", "acc_4way", "accuracy", "loss")


def register(sub) -> None:
    p = sub.add_parser(
        "importance", help="disable heads and layers of a classifier: what it loses -> .json",
        description="Disable every attention head and every layer of a fine-tuned classifier, "
                    "one at a time (Kovaleva et al. 2019: uniform attention; Michel et al. "
                    "2019: output masked), and report the change of the task metric against "
                    "the intact model with paired bootstrap 95%% intervals, gradient "
                    "importance and its Spearman with the drops, and pruning curves.")
    p.add_argument("--model", required=True,
                   help="'example', a checkpoint folder of this dashboard, or any fine-tuned "
                        "sequence classifier (hub id or folder)")
    p.add_argument("--data", required=True,
                   help="ABSA data (SemEval XML, ASTE, this project's JSON, or 'sample') for "
                        "ABSA checkpoints; otherwise a labelled .csv/.jsonl")
    p.add_argument("--task", choices=TASKS, default=None,
                   help="ABSA task (default: the checkpoint's; needed for a classifier "
                        "without a card)")
    p.add_argument("--method", choices=("uniform", "mask"), default="uniform",
                   help="uniform: the head's attention spread evenly over the real tokens "
                        "(Kovaleva); mask: the head's output zeroed (Michel). Default uniform")
    p.add_argument("--metric", choices=METRICS, default=None,
                   help="default: aspect_f1 for ABSA data, accuracy otherwise")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="use at most N examples (ABSA: sentences)")
    p.add_argument("--prune", action="store_true",
                   help="also the pruning curves (0-90%% of the heads)")
    p.add_argument("--text-column", default="text", help="text column (.csv/.jsonl)")
    p.add_argument("--pair-column", default=None, help="optional pair column (.csv/.jsonl)")
    p.add_argument("--label-column", default="label", help="label column (.csv/.jsonl)")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    add_ray_options(p)
    p.set_defaults(func=run)


def inputs(args):
    """The study's inputs from the command line."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.importance.study import Inputs

    return Inputs(model=args.model, data=args.data, task=args.task, method=args.method,
                  metric=args.metric, max_examples=args.max_examples, prune=args.prune,
                  text_column=args.text_column, pair_column=args.pair_column,
                  label_column=args.label_column)


def run(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.importance import STUDY

    with progress_bar(100, unit="%") as update:
        def progress(fraction: float, text: str) -> None:
            if update:
                update(int(round(100 * fraction)), 100)

        # the ablations in this process, or on the Ray cluster of --ray
        result = STUDY.run(inputs(args), placement=placed(args), progress=progress)
    for note in result.notes:
        print(f"note: {note}")
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result.to_json(), fh, indent=1)
    print(f"wrote {args.out}: {result.metric} on {result.n_examples} examples, intact "
          f"{result.intact[result.metric]:.2f}, {result.seconds:.0f}s")
    return 0
