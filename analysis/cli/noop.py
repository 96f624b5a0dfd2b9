"""``noop`` (alias ``stats``): no-op statistics per head over a corpus file -> JSON (same
numbers as the No-op statistics page; docs/METHODS.md section 3)."""

from __future__ import annotations

import json

from analysis.cli.options import out_file, positive_int
from analysis.cli.progress import study_bar
from analysis.cli.scale import add_ray_options, placed
from analysis.core.models import DEFAULT_SPEC, load_model
from analysis.core.corpus import corpus_notes, read_corpus
from analysis.core.errors import DataError


def register(sub) -> None:
    p = sub.add_parser(
        "noop", aliases=["stats"],
        help="[SEP]/[CLS] no-op statistics per head over a corpus -> .json",
        description="Per layer and head, averaged over the corpus: attention to [CLS], [SEP], "
                    "punctuation, self, previous and next token, and entropy (Clark et al. "
                    "2019). The format is chosen by the file's extension: .txt (a tab separates "
                    "a pair), .jsonl (text, text_pair), .csv (column 'text', optional "
                    "'text_pair'), .xml (SemEval review sentences).",
    )
    p.add_argument("--data", required=True, help="corpus file (.txt .jsonl .csv .xml)")
    p.add_argument("--model", default=DEFAULT_SPEC,
                   help="'default' (embedded all-MiniLM-L6-v2), a Hugging Face id or a folder")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="use at most N examples")
    p.add_argument("--batch-size", type=positive_int, default=64,
                   help="at most N examples per forward (64; long inputs get fewer)")
    p.add_argument("--text-column", default="text", help="text column for .csv/.jsonl")
    p.add_argument("--pair-column", default=None, help="optional pair column for .csv/.jsonl")
    p.add_argument("--gradients", action="store_true",
                   help="also gradient importance (docs/METHODS.md section 5): mean |dL/dA| "
                        "per key category, with the checkpoint's own masked-LM or task loss")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    add_ray_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.noop.study import STUDY, Inputs

    dataset = read_corpus(args.data, text_column=args.text_column, pair_column=args.pair_column,
                          max_examples=args.max_examples)
    for note in corpus_notes(dataset):
        print(f"note: {note}")
    loaded = load_model(args.model)
    head = _loss_head(loaded.spec) if args.gradients else None
    inputs = Inputs(loaded.spec, dataset, args.batch_size, norms=False, gradients=args.gradients)
    with study_bar() as told:  # in this process or on a Ray cluster (--ray)
        stats = STUDY.run(inputs, models=(loaded, head) if args.gradients else loaded,
                          placement=placed(args), progress=told)
    for note in stats.notes:
        print(f"note: {note}")
    if head is not None:
        print(f"note: {head.note}")
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(stats.to_json(), fh, indent=1)
    print(f"wrote {args.out}: {stats.n_examples} examples, {stats.n_layers} layers x "
          f"{stats.n_heads} heads, {stats.examples_per_second:.1f} examples/s")
    return 0


def _loss_head(spec: str):
    """The checkpoint's loss (refused in one line, before any work, when it has none)."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.noop import loss_head

    head = loss_head(spec)
    if head.kind is None:
        raise DataError(head.note)
    return head
