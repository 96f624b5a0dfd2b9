"""``atlas``: one verdict per head from every study -> JSON (same numbers as the Head atlas
page; docs/METHODS.md section 18). Each study's evidence is kept under the cache folder, so a
second run over the same models and data reads it back."""

from __future__ import annotations

import json

from analysis.cli.options import OptionError, out_file, positive_int, unit
from analysis.cli.progress import progress_bar
from analysis.cli.syntax import in_file
from analysis.core.models import DEFAULT_SPEC, EXAMPLE_SPEC

# (option, Thresholds field, help)
RULES = (("--positional", "positional", "share on the previous or next token, above"),
         ("--broad", "broad", "entropy as a share of even attention's, at least"),
         ("--noop", "noop", "share on [SEP], [CLS] or . and , above"),
         ("--syntax", "syntax", "accuracy above the best fixed offset's, at least"),
         ("--changed", "changed", "before/after cosine below which a head changed"),
         ("--carry", "carry", "patching share above which a head carries the change"))


def contrast(text: str) -> str:
    if text not in ("aspect", "opinion"):
        raise OptionError(f"must be aspect or opinion, not {text!r}")
    return text


def register(sub) -> None:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`); the
    # rules' defaults are plain numbers (analysis.atlas.facts imports numpy only)
    from analysis.atlas.facts import DEFAULT

    p = sub.add_parser(
        "atlas", help="one verdict per head from every study (roles, use, drift) -> .json",
        description="For every layer and head: No-op statistics, the best dependency "
                    "relation, Aspect heads' scores, Head importance (both ways), the corpus "
                    "patching share and the before/after cosine, each from its study's own "
                    "call; a role from stated rules, whether the task uses the head, the "
                    "model verdict and the heads whose role and use disagree (docs/METHODS.md "
                    "section 18). Each study's result is kept under the cache folder and read "
                    "back on the next run.")
    p.add_argument("--model", default=EXAMPLE_SPEC,
                   help="'example' (default), a checkpoint folder or any model spec; Head "
                        "importance and patching need an ABSA checkpoint")
    p.add_argument("--before", default=DEFAULT_SPEC,
                   help="the model before fine-tuning ('default', the embedded model; 'none' "
                        "for no comparison)")
    p.add_argument("--data", default=None, type=in_file,
                   help="corpus of No-op statistics and Fine-tuning drift (.txt .jsonl .csv "
                        ".xml; default: the bundled sample corpus); the other studies use "
                        "their bundled data")
    p.add_argument("--max-examples", type=positive_int, default=200,
                   help="use at most N examples of the corpus (200, the pages' default)")
    p.add_argument("--treebank", default=None, type=in_file,
                   help="CoNLL-U treebank of Syntax (default: the bundled sample treebank)")
    p.add_argument("--contrast", type=contrast, default="aspect",
                   help="patching's counterfactual: aspect (default) or opinion")
    for option, name, what in RULES:
        p.add_argument(option, type=unit, default=getattr(DEFAULT, name),
                       help=f"role rule: {what} (default {getattr(DEFAULT, name)})")
    p.add_argument("--syntax-min", type=positive_int, default=DEFAULT.syntax_min,
                   help=f"dependents a relation needs (default {DEFAULT.syntax_min})")
    p.add_argument("--fresh", action="store_true",
                   help="compute every study again (the kept results are not read)")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    p.set_defaults(func=run)


def run(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.atlas.facts import Thresholds
    from analysis.atlas.run import Inputs, compute, load_models

    t = Thresholds(**{name: getattr(args, name) for _, name, _ in RULES},
                   syntax_min=args.syntax_min)
    before = None if str(args.before).lower() == "none" else args.before
    inputs = Inputs(model=args.model, before=before, data=args.data,
                    max_examples=args.max_examples, treebank=args.treebank,
                    contrast=args.contrast, thresholds=t)
    models = load_models(inputs)
    with progress_bar(100, unit="%") as update:
        def progress(fraction: float, text: str) -> None:
            if update:
                update(int(round(100 * fraction)), 100)

        result = compute(inputs, models, progress=progress, use_cache=not args.fresh)
    for note in result.notes:
        print(f"note: {note}")
    out = result.to_json()
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)
    fresh = [s["title"] for s in result.studies.values() if not s["cached"]]
    print(f"wrote {args.out}: {result.n_layers} layers x {result.n_heads} heads, "
          f"{len(result.studies)} studies ({len(fresh)} computed, "
          f"{len(result.studies) - len(fresh)} read back), {result.seconds:.1f}s")
    for line in out["reading"]:
        print(f"  {line}")
    return 0
