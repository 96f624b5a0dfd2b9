"""``attribution``: what the model used for one input, by every method, or which method to
trust over a corpus -> JSON (the Attribution page's numbers; docs/METHODS.md section 11).

    python -m analysis attribution --model SPEC --text T [--pair P] [--methods ...] --out F.json
    python -m analysis attribution --model SPEC [--data FILE] --faithfulness --out F.json
"""

from __future__ import annotations

import json

from analysis.cli.options import OptionError, out_file, positive_int
from analysis.cli.progress import study_bar
from analysis.cli.scale import add_ray_options, placed
from analysis.core.models import DEFAULT_SPEC
from analysis.core.errors import InputError

MAX_TEXT_CHARS = 512 * 64  # no input of at most 512 tokens needs more characters


def _text(text: str) -> str:
    if not text or not text.strip():
        raise OptionError("must not be empty: give a sentence to explain")
    if len(text) > MAX_TEXT_CHARS:
        raise OptionError(f"is too long: at most {MAX_TEXT_CHARS} characters (512 tokens)")
    return text


def _methods(text: str) -> tuple[str, ...]:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.attribution.run import METHODS

    names = [m.strip() for m in text.replace(" ", ",").split(",") if m.strip()]
    if not names:
        raise OptionError(f"must name at least one of {', '.join(METHODS)}")
    for m in names:
        if m not in METHODS:
            raise OptionError(f"names an unknown method {m!r}; choose from {', '.join(METHODS)}")
    return tuple(names)


def _ks(text: str) -> tuple[int, ...]:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.attribution.faithfulness import check_ks
    try:
        return check_ks([k for k in text.split(",") if k.strip()])
    except InputError:
        raise OptionError(f"must be whole percentages from 1 to 100, not {text!r}") from None


def _max_tokens(text: str) -> int:
    value = positive_int(text)
    if value > 512:
        raise OptionError(f"must be a whole number from 1 to 512, not {text!r}")
    return value


def register(sub) -> None:
    p = sub.add_parser(
        "attribution", help="what the model used: mixing and gradient attributions -> .json",
        description="One input (--text, --pair): every method's per-layer mixing matrices, "
                    "their aggregate through the layers and the input tokens' scores, and the "
                    "prediction of a classifier. Or, with --faithfulness, over a corpus "
                    "(--data; default: the example checkpoint's held-out ABSA pairs): "
                    "comprehensiveness, sufficiency and leave-one-out agreement per method "
                    "against a random ranking, with bootstrap 95%% intervals.")
    p.add_argument("--model", default=DEFAULT_SPEC,
                   help="'default' (embedded all-MiniLM-L6-v2), 'example', a Hugging Face id "
                        "or a folder; a fine-tuned classifier keeps its head")
    p.add_argument("--text", type=_text, default=None, help="the text (segment A)")
    p.add_argument("--pair", type=_text, default=None, help="optional second text (segment B)")
    p.add_argument("--methods", type=_methods, default=None,
                   help="comma-separated: attention, norm, norm_resln, alti, value_zeroing, "
                        "grad_input, integrated_gradients (default: all the model allows)")
    p.add_argument("--steps", type=positive_int, default=50,
                   help="integrated-gradients steps (50)")
    p.add_argument("--max-tokens", type=_max_tokens, default=512,
                   help="refuse inputs longer than N tokens (512)")
    p.add_argument("--faithfulness", action="store_true",
                   help="measure faithfulness over a corpus instead of explaining one input")
    p.add_argument("--data", default=None,
                   help="corpus file (.txt .jsonl .csv .xml) for --faithfulness")
    p.add_argument("--ks", type=_ks, default=(1, 5, 10, 20, 50),
                   help="percentages of tokens removed (1,5,10,20,50)")
    p.add_argument("--removal", choices=("drop", "mask"), default="drop",
                   help="drop the tokens (default) or replace them with the mask token")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="use at most N examples")
    p.add_argument("--seeds", type=positive_int, default=5, help="random rankings (5)")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    add_ray_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.faithfulness and args.text is not None:
        raise InputError("--text and --faithfulness do not go together: explain one input, "
                         "or measure faithfulness over --data.")
    if not args.faithfulness and args.text is None:
        raise InputError("Give --text to explain one input, or --faithfulness.")
    if args.text is None and args.pair is not None:
        raise InputError("--pair needs --text.")
    if args.ray and not args.faithfulness:
        raise InputError("--ray goes with --faithfulness (one input is explained here).")
    if args.faithfulness:
        return _faithfulness(args)
    return _one(args)


def _one(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.attribution import check_methods, load_for_attribution
    from analysis.attribution.study import STUDY, Inputs

    loaded = load_for_attribution(args.model)
    methods = check_methods(args.methods, loaded)
    inputs = Inputs(loaded.spec, args.text, args.pair, methods, steps=args.steps,
                    max_tokens=args.max_tokens)
    result = STUDY.run(inputs, models=loaded, placement=placed(args))
    for note in result.notes:
        print(f"note: {note}")
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result.to_json(), fh)
    print(f"wrote {args.out}: {len(result.methods)} methods, {result.n_tokens} tokens")
    return 0


def _faithfulness(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.attribution import load_for_attribution
    from analysis.attribution.data import corpus_examples, heldout_examples
    from analysis.attribution.faithfulness import check_settings
    from analysis.attribution.study import FAITHFULNESS, FaithfulnessInputs

    if args.data is not None:
        texts, pairs, notes = corpus_examples(args.data, args.max_examples)
    else:
        texts, pairs, notes = heldout_examples(args.max_examples)
    for note in notes:
        print(f"note: {note}")
    loaded = load_for_attribution(args.model)
    methods, ks = check_settings(loaded, args.methods, args.ks, args.removal)
    inputs = FaithfulnessInputs(loaded.spec, tuple(texts), tuple(pairs), methods, ks,
                                args.removal, args.seeds, args.steps, args.max_tokens)
    with study_bar() as told:  # in this process or on a Ray cluster (--ray)
        result = FAITHFULNESS.run(inputs, models=loaded, placement=placed(args), progress=told)
    data = result.to_json()
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    print(f"wrote {args.out}: {result.n_examples} examples, {len(result.methods)} methods")
    print(data["reading"])
    return 0
