"""``predictions``: a classifier's answer to every example of a labelled data set, its metrics
over the whole set and every slice with bootstrap 95% intervals, a second classifier's changes
and the rows where the two disagree, and the counterfactuals' flip rates -> JSON (the same
numbers as the Predictions page; docs/METHODS.md, "Predictions")."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from analysis.absa.tasks import TASKS
from analysis.cli.options import out_file, positive_int
from analysis.cli.progress import progress_bar
from analysis.core.errors import InputError


def register(sub) -> None:
    p = sub.add_parser(
        "predictions", help="a classifier on every example of labelled data -> .json",
        description="Answer every example of labelled data with a fine-tuned classifier: per "
                    "example the label, prediction, probabilities and loss; accuracy, macro F1 "
                    "(and for ABSA aspect F1, 4-way and 3-way accuracy) over the whole set and "
                    "every slice (gold label, aspect, length) with bootstrap 95%% intervals; "
                    "with --compare a second classifier's changes (paired intervals) and the "
                    "examples the two answer differently ('flips'); the flip rates of "
                    "generated counterfactuals.")
    p.add_argument("--model", required=True,
                   help="'example', a checkpoint folder of this dashboard, or any fine-tuned "
                        "sequence classifier (hub id or folder)")
    p.add_argument("--data", required=True,
                   help="'sample' (an ABSA checkpoint's held-out sentences of the bundled "
                        "sample), ABSA data (SemEval XML, ASTE, this project's JSON), a "
                        "labelled .csv/.jsonl, or hf:NAME (a Hugging Face dataset)")
    p.add_argument("--compare", default=None,
                   help="a second fine-tuned classifier of the same labels (ABSA: a second "
                        "ABSA checkpoint) answering the same examples")
    p.add_argument("--task", choices=TASKS, default=None,
                   help="ABSA task for a classifier without a card (default: the card's)")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="use at most N examples (ABSA: sentences)")
    p.add_argument("--text-column", default="text", help="text column (.csv/.jsonl/hf:)")
    p.add_argument("--pair-column", default=None, help="optional pair column")
    p.add_argument("--label-column", default="label", help="label column")
    p.add_argument("--split", default="train", help="the split of an hf: dataset")
    p.add_argument("--no-robustness", action="store_true",
                   help="leave out the generated counterfactuals and their flip rates")
    p.add_argument("--precomputed", action="store_true",
                   help="write the file the page opens on (needs --model example --data "
                        "sample): the result with the example's recipe and this command")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    p.set_defaults(func=run)


def run(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.core.example import write_precomputed
    from analysis.importance.evalset import load_classifier
    from analysis.predictions.data import load_labelled
    from analysis.predictions.run import EXAMPLE_COMMAND, STUDY, Inputs, Models

    out = Path(args.out)
    if args.precomputed and (args.model != "example" or args.data != "sample"
                             or args.compare or args.max_examples
                             or out.name != f"{STUDY.name}.json"):
        raise InputError("--precomputed writes the example's own file: use it with --model "
                         f"example --data sample only, into a file named {STUDY.name}.json.")
    loaded, card = load_classifier(args.model)
    data = load_labelled(loaded, card, args.data, task=args.task,
                         max_examples=args.max_examples, text_column=args.text_column,
                         pair_column=args.pair_column, label_column=args.label_column,
                         split=args.split)
    compare = compare_card = None
    if args.compare:
        compare, compare_card = load_classifier(args.compare)
    for note in data.notes:
        print(f"note: {note}")
    with progress_bar(100, unit="%") as update:
        def progress(fraction: float, text: str) -> None:
            if update:
                update(int(round(100 * fraction)), 100)

        result = STUDY.run(Inputs(data, robustness=not args.no_robustness),
                           Models(loaded, card, compare, compare_card), progress=progress)
    if args.precomputed:
        write_precomputed(STUDY.name, result.to_json(), EXAMPLE_COMMAND,
                          datetime.date.today().isoformat(), out.parent)
    else:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result.to_json(), fh, indent=1, allow_nan=False)
    acc = result.metrics["all"]["accuracy"]["value"]
    print(f"wrote {args.out}: {result.n} examples, accuracy {acc:.1f}%"
          + (f", {len(result.flips)} answered differently by {result.compare}"
             if result.flips is not None else "") + f", {result.seconds:.1f}s")
    return 0
