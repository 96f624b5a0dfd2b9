"""``drift`` (alias ``compare``): what fine-tuning changed, head by head and layer by layer
-> JSON (docs/METHODS.md section 9)."""

from __future__ import annotations

import json

from analysis.cli.options import out_file, positive_int, unit
from analysis.cli.progress import progress_bar
from analysis.cli.scale import add_ray_options, placed

THRESHOLDS = (("vertical", 0.5, "mass on [CLS]/[SEP]"),
              ("diagonal", 0.5, "mass on i-1, i, i+1"),
              ("mixed", 0.3, "both masses, for vertical+diagonal"),
              ("block", 0.6, "closeness to uniform within the segment"))


def register(sub) -> None:
    p = sub.add_parser(
        "drift", aliases=["compare"],
        help="before/after fine-tuning: per-head cosine, RSA, CKA, no-op drift, "
             "pattern types -> .json",
        description="Compare two checkpoints of one architecture and tokenizer over a corpus "
                    "(Kovaleva et al. 2019; Merchant et al. 2020; Kornblith et al. 2019).",
    )
    p.add_argument("--before", default="default",
                   help="model before fine-tuning: 'default', a Hugging Face id or a folder")
    p.add_argument("--after", required=True, help="model after fine-tuning: a hub id or a folder")
    p.add_argument("--data", required=True, help="corpus file: .txt, .jsonl, .csv or SemEval .xml")
    p.add_argument("--format", dest="fmt", default=None,
                   help="force the format (txt/jsonl/csv/xml)")
    p.add_argument("--text-column", default="text", help="text column (.jsonl/.csv)")
    p.add_argument("--pair-column", default=None, help="second-text column (.jsonl/.csv)")
    p.add_argument("--label-column", default="label",
                   help="gold label column (.jsonl/.csv) for the split by label / prediction")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="use at most N examples")
    p.add_argument("--batch-size", type=positive_int, default=32)
    for name, default, what in THRESHOLDS:
        p.add_argument(f"--{name}", type=unit, default=default,
                       help=f"pattern threshold: {what} (default {default})")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    add_ray_options(p)
    p.set_defaults(func=run)


def inputs(args):
    """The study's inputs from the command line."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.drift import PatternThresholds
    from analysis.drift.study import Inputs

    return Inputs(after=args.after, data=args.data, before=args.before, fmt=args.fmt,
                  text_column=args.text_column, pair_column=args.pair_column,
                  label_column=args.label_column, max_examples=args.max_examples,
                  batch_size=args.batch_size,
                  thresholds=PatternThresholds(*(getattr(args, n) for n, _, _ in THRESHOLDS)))


def run(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.drift.study import STUDY

    with progress_bar(100, unit="%") as update:  # a bar only on a terminal
        def progress(fraction: float, text: str) -> None:
            if update:
                update(int(round(100 * fraction)), 100)

        # in this process (one shard of the corpus) or on a Ray cluster (--ray)
        result = STUDY.run(inputs(args), placement=placed(args), progress=progress)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result.to_json(), fh, indent=1)
    for notice in result.notices:
        print(f"note: {notice}")
    print(result.summary)
    print(f"wrote {args.out}: {result.n_examples} examples, {result.n_layers} layers x "
          f"{result.n_heads} heads")
    return 0
