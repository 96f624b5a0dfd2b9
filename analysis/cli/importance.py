"""``importance``: switch each head and each layer of a fine-tuned classifier off and measure
what it loses on labelled data -> JSON (same numbers as the Head importance page;
docs/METHODS.md section 12); or on ONE example (its per-example view):

    python -m analysis importance --model SPEC --data FILE [--prune] --out F.json
    python -m analysis importance --model SPEC --text T [--pair P] --label Y --out F.json
    python -m analysis importance --model example --text REVIEW --aspect CATEGORY --label Y ...
"""

from __future__ import annotations

import json

from analysis.cli.options import out_file, positive_int
from analysis.cli.progress import progress_bar
from analysis.cli.scale import add_ray_options, placed
from analysis.absa.tasks import TASKS
from analysis.core.errors import InputError

METRICS = ("aspect_f1", "acc_4way", "accuracy", "loss")


def register(sub) -> None:
    p = sub.add_parser(
        "importance", help="disable heads and layers of a classifier: what it loses -> .json",
        description="Disable every attention head and every layer of a fine-tuned classifier, "
                    "one at a time (Kovaleva et al. 2019: uniform attention; Michel et al. "
                    "2019: output masked), and report the change of the task metric against "
                    "the intact model with paired bootstrap 95%% intervals, gradient "
                    "importance and its Spearman with the drops, and pruning curves. With "
                    "--text (and --pair, or for an ABSA checkpoint --aspect) and --label: the "
                    "same for one example (the change of the gold and the answer's "
                    "probability and of the loss, the flips, the gate gradients; no interval).")
    p.add_argument("--model", required=True,
                   help="'example', a checkpoint folder of this dashboard, or any fine-tuned "
                        "sequence classifier (hub id or folder)")
    p.add_argument("--data", default=None,
                   help="ABSA data (SemEval XML, ASTE, this project's JSON, or 'sample') for "
                        "ABSA checkpoints; otherwise a labelled .csv/.jsonl (or --text)")
    p.add_argument("--text", default=None,
                   help="one example instead of --data: its text (with --aspect: the review)")
    p.add_argument("--pair", default=None, help="the example's second text (optional)")
    p.add_argument("--label", default=None,
                   help="the example's gold label: one of the classifier's labels (or its "
                        "index); with --aspect positive, neutral, negative, conflict or none")
    p.add_argument("--aspect", default=None,
                   help="an ABSA checkpoint (QA-M, NLI-M; the example): the aspect category "
                        "asked about the --text review (food, service, price, ambience, "
                        "anecdotes/miscellaneous), as the Predictions page's rows")
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


ONE_ONLY = ("pair", "label", "aspect")  # options of one example
SET_ONLY = ("data", "task", "metric", "max_examples", "prune")  # options of a data set


def _check(args) -> None:
    """One example (--text) or a data set (--data), each with its own options."""
    given = {k for k in ONE_ONLY + SET_ONLY if getattr(args, k) not in (None, False)}
    if args.text is not None:
        wrong = sorted(given & set(SET_ONLY))
        if "data" in wrong:
            raise InputError("--text and --data do not go together: measure one example, or "
                             "a data set.")
        if wrong:
            raise InputError(f"--{wrong[0].replace('_', '-')} goes with --data, not with "
                             "--text (one example).")
        if args.label is None:
            raise InputError("--text needs --label: the example's gold label.")
        return
    if args.data is None:
        raise InputError("Give --data (a labelled data set) or --text and --label (one "
                         "example).")
    wrong = sorted(given & set(ONE_ONLY))
    if wrong:
        raise InputError(f"--{wrong[0]} goes with --text (one example).")


def _one(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.importance.study import ONE, OneInputs

    inputs = OneInputs(model=args.model, text=args.text, pair=args.pair, label=args.label,
                       aspect=args.aspect, method=args.method)
    with progress_bar(100, unit="%") as update:
        def progress(fraction: float, text: str) -> None:
            if update:
                update(int(round(100 * fraction)), 100)

        result = ONE.run(inputs, placement=placed(args), progress=progress)
    data = result.to_json()
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    print(f"wrote {args.out}: one example, {result.method}, answer {data['prediction']} "
          f"(gold {result.label}), {len(result.flipped())} single head(s) flip it, "
          f"{result.seconds:.1f}s")
    return 0


def run(args) -> int:
    _check(args)
    if args.text is not None:
        return _one(args)
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
