"""``compare``: what fine-tuning changed, head by head and layer by layer -> JSON."""

from __future__ import annotations

import json
import sys

from analysis.attention import InputError


def register(sub) -> None:
    p = sub.add_parser(
        "compare", help="before/after fine-tuning: per-head cosine, RSA, CKA, no-op drift, "
                        "pattern types -> .json",
        description="Compare two checkpoints of one architecture and tokenizer over a corpus "
                    "(Kovaleva et al. 2019; Merchant et al. 2020; Kornblith et al. 2019).",
    )
    p.add_argument("--before", default="default",
                   help="model before fine-tuning: 'default', a Hugging Face id or a folder")
    p.add_argument("--after", required=True, help="model after fine-tuning: a hub id or a folder")
    p.add_argument("--data", required=True, help="corpus file: .txt, .jsonl, .csv or SemEval .xml")
    p.add_argument("--format", dest="fmt", default=None, help="force the format (txt/jsonl/csv/xml)")
    p.add_argument("--text-column", default="text", help="text column (.jsonl/.csv)")
    p.add_argument("--pair-column", default=None, help="second-text column (.jsonl/.csv)")
    p.add_argument("--label-column", default="label",
                   help="gold label column (.jsonl/.csv) for the split by label / prediction")
    p.add_argument("--max-examples", type=int, default=None, help="use at most N examples")
    p.add_argument("--batch-size", type=int, default=32)
    for name, default, what in (("vertical", 0.5, "mass on [CLS]/[SEP]"),
                                ("diagonal", 0.5, "mass on i-1, i, i+1"),
                                ("mixed", 0.3, "both masses, for vertical+diagonal"),
                                ("block", 0.6, "closeness to uniform within the segment")):
        p.add_argument(f"--{name}", type=float, default=default,
                       help=f"pattern threshold: {what} (default {default})")
    p.add_argument("--out", required=True, help="output .json file")
    p.set_defaults(func=run)


def run(args) -> int:
    from analysis.compare import (PatternThresholds, compare_models, corpus_from_dataset,
                                  load_pair, read_labels)
    from analysis.data import read_corpus

    if not args.out.endswith(".json"):
        raise InputError("--out must name a .json file.")
    if args.batch_size < 1:
        raise InputError("--batch-size must be at least 1.")
    for name in ("vertical", "diagonal", "mixed", "block"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise InputError(f"--{name} must be between 0 and 1.")
    thresholds = PatternThresholds(args.vertical, args.diagonal, args.mixed, args.block)
    dataset = read_corpus(args.data, fmt=args.fmt, text_column=args.text_column,
                          pair_column=args.pair_column, max_examples=args.max_examples)
    before, after = load_pair(args.before, args.after)
    labels, note = read_labels(args.data, dataset, fmt=args.fmt, text_column=args.text_column,
                               label_column=args.label_column)
    if labels is not None:
        dataset = dataset.add_column("label", labels)
    corpus = corpus_from_dataset(before.tokenizer, dataset, max_length=before.max_length,
                                 max_examples=args.max_examples)
    try:
        from tqdm import tqdm

        bar = tqdm(total=len(corpus.encodings), unit="ex", file=sys.stderr, leave=False)
        progress = lambda done, total: bar.update(done - bar.n)  # noqa: E731
    except ImportError:  # pragma: no cover
        bar, progress = None, None
    result = compare_models(before, after, corpus, batch_size=args.batch_size, progress=progress)
    if bar is not None:
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
