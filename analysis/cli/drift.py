"""``drift`` (alias ``compare``): what fine-tuning changed, head by head and layer by layer
-> JSON (docs/METHODS.md section 9)."""

from __future__ import annotations

import json
import sys

from tqdm import tqdm

from analysis.cli.options import out_file, positive_int, unit
from analysis.cli.scale import add_ray_options, run_job
from analysis.core.corpus import read_corpus, read_labels
from analysis.core.encoding import encode_dataset

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


def _dataset(args):
    """The corpus file's rows, with its gold labels where it has them, and a note when labels
    were asked for but cannot be used."""
    dataset = read_corpus(args.data, fmt=args.fmt, text_column=args.text_column,
                          pair_column=args.pair_column, max_examples=args.max_examples)
    labels, note = read_labels(args.data, dataset, fmt=args.fmt, text_column=args.text_column,
                               label_column=args.label_column)
    if labels is not None:
        dataset = dataset.add_column("label", labels)
    return dataset, note


def run(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.drift import PatternThresholds, compare_models, load_pair
    from analysis.drift.job import DriftJob, has_labels, models_of
    thresholds = PatternThresholds(*(getattr(args, name) for name, _, _ in THRESHOLDS))
    dataset, note = _dataset(args)
    before, after = load_pair(args.before, args.after)
    corpus = encode_dataset(before.tokenizer, dataset, max_length=before.max_length,
                            max_examples=args.max_examples)
    bar = tqdm(total=len(corpus.encodings), unit="ex", file=sys.stderr, leave=False)
    job = DriftJob(before.spec, after.spec, args.batch_size, has_labels(dataset))

    def step(done: int, total: int) -> None:
        bar.update(done - bar.n)

    # in this process (its run over the encoded corpus) or on a Ray cluster (--ray)
    result = run_job(job, models_of(before, after), dataset, args, step,
                     here=lambda: compare_models(before, after, corpus,
                                                 batch_size=args.batch_size, progress=step))
    bar.close()
    out = result.to_json(thresholds)
    if note:
        out["label_note"] = note
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)
    for notice in result.notices:
        print(f"note: {notice}")
    print(result.summary())
    print(f"wrote {args.out}: {result.n_examples} examples, {result.n_layers} layers x "
          f"{result.n_heads} heads")
    return 0
