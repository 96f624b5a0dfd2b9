"""``patching``: which heads, and which layers at which positions, carry a classifier's decision
from an input to its counterfactual -> JSON (same numbers as the Causal patching page;
docs/METHODS.md, "Causal patching")."""

from __future__ import annotations

import json

from analysis.cli.options import out_file, positive_int
from analysis.cli.progress import progress_bar


def register(sub) -> None:
    p = sub.add_parser(
        "patching", help="activation patching between an input and its counterfactual -> .json",
        description="Patch every attention head's output, and the residual stream, attention "
                    "and MLP outputs at every layer and position, between an input and a "
                    "counterfactual with the same number of tokens (Vig et al. 2020; Meng et "
                    "al. 2022), and report the share of the change of the logit difference "
                    "each carries (0: none, 1: all). With --data: the per-head map averaged "
                    "over held-out ABSA pairs and their generated counterfactuals, with "
                    "bootstrap 95%% intervals and its Spearman with Head importance's drops.")
    p.add_argument("--model", required=True,
                   help="'example', a checkpoint folder of this dashboard, or any fine-tuned "
                        "sequence classifier (hub id or folder)")
    p.add_argument("--text", default=None, help="the input (segment A)")
    p.add_argument("--pair", default=None, help="the input's segment B (e.g. the aspect)")
    p.add_argument("--counter-text", default=None, help="the counterfactual (segment A)")
    p.add_argument("--counter-pair", default=None, help="the counterfactual's segment B")
    p.add_argument("--direction", choices=("noising", "denoising"), default="noising",
                   help="noising (default): the counterfactual's activation into the run on "
                        "the input; denoising: the input's into the run on the counterfactual")
    p.add_argument("--data", default=None,
                   help="ABSA data (SemEval XML, ASTE, this project's JSON, or 'sample': the "
                        "checkpoint's held-out sentences) for the corpus view")
    p.add_argument("--contrast", choices=("aspect", "opinion"), default="aspect",
                   help="corpus view: the counterfactual asks about another aspect (default) "
                        "or has the opinion word replaced by its opposite")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="corpus view: at most N sentences")
    p.add_argument("--no-importance", action="store_true",
                   help="corpus view: skip Head importance (no Spearman, faster)")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    p.set_defaults(func=run)


def inputs(args):
    """The study's inputs from the command line."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.patching.study import Inputs

    return Inputs(model=args.model, text=args.text, pair=args.pair,
                  counter_text=args.counter_text, counter_pair=args.counter_pair,
                  direction=args.direction, data=args.data, contrast=args.contrast,
                  max_examples=args.max_examples, importance=not args.no_importance)


def run(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.patching.study import STUDY

    with progress_bar(100, unit="%") as update:
        def progress(fraction: float, text: str) -> None:
            if update:
                update(int(round(100 * fraction)), 100)

        result = STUDY.run(inputs(args), progress=progress)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result.to_json(), fh, indent=1)
    print(f"wrote {args.out}: " + "; ".join(result.said()))
    return 0
