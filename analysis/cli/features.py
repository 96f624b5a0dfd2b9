"""``features``: sparse dictionaries of a layer's residual stream (docs/METHODS.md section 19;
the same numbers as the Features page).

    python -m analysis features train --model M --data D --layer L --out DIR [--result f.json]
                                      [--ray auto|ADDRESS] [--no-cache]
    python -m analysis features show --dir DIR --text T [--model M] --out f.json
    python -m analysis features diff --before B --after A --data D --layer L --out f.json
                                     [--no-cache]
    python -m analysis features example      (the page's precomputed example)
"""

from __future__ import annotations

import json
from pathlib import Path

from analysis.cli.options import OptionError, out_file, positive_int, seed
from analysis.cli.progress import progress_bar
from analysis.cli.scale import add_ray_options, placed
from analysis.cli.search import layer_number
from analysis.core.errors import InputError
from analysis.core.models import DEFAULT_SPEC

MODEL_HELP = "'default' (embedded all-MiniLM-L6-v2), 'example', a Hugging Face id or a folder"
DATA_HELP = ("'sample' (the bundled ABSA sample), 'treebank', 'corpus', or a file: .txt (one "
             "sentence a line), .conllu, ABSA data (.xml/.json), .csv/.jsonl")


def data_source(text: str) -> str:
    if text in ("sample", "treebank", "corpus"):
        return text
    path = Path(text).expanduser()
    if not path.is_file():
        raise OptionError(f"names no data file or bundled sample: {text}")
    return text


def out_dir(text: str) -> str:
    """The dictionary's folder: new, empty, or one this command wrote (a card)."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise OptionError(f"names a file, not a folder: {text}")
    if path.is_dir() and any(path.iterdir()) and not (path / "card.json").is_file():
        raise OptionError(f"names a folder that holds other files (not a dictionary): {text}")
    if not path.resolve().parent.is_dir():
        raise OptionError(f"names a folder whose parent does not exist: {text}")
    return text


def dict_dir(text: str) -> str:
    path = Path(text).expanduser()
    if not (path / "sae.safetensors").is_file() or not (path / "card.json").is_file():
        raise OptionError(f"names no dictionary folder (sae.safetensors and card.json): {text}")
    return text


def _settings(p) -> None:
    p.add_argument("--m", type=positive_int, default=None,
                   help="features in the dictionary (default: up to 8 x the model's width, "
                        "fewer for a small corpus)")
    p.add_argument("--k", type=positive_int, default=32, help="features kept per token (32)")
    p.add_argument("--epochs", type=positive_int, default=None,
                   help="passes over the training tokens (default: about 400,000 tokens in "
                        "all, 5 to 30 passes; 30 for the bundled samples)")
    p.add_argument("--seed", type=seed, default=0, help="random seed (0)")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="read at most N sentences of the data")


def no_cache(p) -> None:
    p.add_argument("--no-cache", action="store_true",
                   help="train even when the dashboard's cache ($DASHBOARD_CACHE, else "
                        "~/.cache/attention-dashboard/features) holds this dictionary, and "
                        "keep nothing there")


def register(sub) -> None:
    p = sub.add_parser("features", help="sparse dictionaries (SAEs) of a layer; crosscoders",
                       description="Train a top-k sparse autoencoder on one layer's residual "
                                   "stream, read a text's features, or diff two models with a "
                                   "crosscoder.")
    cmds = p.add_subparsers(dest="features_command", metavar="train|show|diff")
    cmds.required = True
    t = cmds.add_parser("train", help="train a dictionary -> DIR/sae.safetensors, card.json")
    t.add_argument("--model", default=DEFAULT_SPEC, help=MODEL_HELP)
    t.add_argument("--data", default="sample", type=data_source, help=DATA_HELP)
    t.add_argument("--layer", type=layer_number, default=None,
                   help="hidden_states index (0 = the embeddings; default: the middle layer)")
    t.add_argument("--out", required=True, type=out_dir, help="the dictionary's folder")
    t.add_argument("--result", type=out_file(".json"), default=None,
                   help="also write the study's whole result (quality, features, dashboards)")
    t.add_argument("--float16", action="store_true", help="store the weights in float16")
    no_cache(t)
    _settings(t)
    add_ray_options(t)  # the activations' forward passes on a Ray cluster
    t.set_defaults(func=run_train)
    s = cmds.add_parser("show", help="the features firing on each token of a text -> .json")
    s.add_argument("--dir", required=True, type=dict_dir, help="a dictionary folder")
    s.add_argument("--text", required=True, help="the text")
    s.add_argument("--pair", default=None, help="second text of a sentence pair")
    s.add_argument("--model", default=None, help="the model (default: the card's)")
    s.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    s.set_defaults(func=run_show)
    d = cmds.add_parser("diff", help="a crosscoder on two models at one layer -> .json")
    d.add_argument("--before", default=DEFAULT_SPEC, help="the base model: " + MODEL_HELP)
    d.add_argument("--after", default="example", help="the fine-tuned model")
    d.add_argument("--data", default="sample", type=data_source, help=DATA_HELP)
    d.add_argument("--layer", type=layer_number, default=None, help="hidden_states index")
    d.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    _settings(d)
    no_cache(d)
    d.set_defaults(func=run_diff)
    e = cmds.add_parser("example", help="the example's dictionary and result for the page",
                        description="Train the example checkpoint's dictionary (the page's "
                                    "default layer and settings) with its crosscoder against "
                                    "the embedded model, and write data/precomputed/features/ "
                                    "and data/precomputed/features.json.")
    e.set_defaults(func=run_example)


def _train_inputs(args, loaded, card):
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.features.data import check_layer, corpus_of, default_layer
    from analysis.features.train import TrainSettings

    layer = check_layer(args.layer if args.layer is not None else default_layer(loaded), loaded)
    corpus = corpus_of(args.data, card, args.seed, args.max_examples)
    settings = TrainSettings(m=args.m, k=args.k, epochs=args.epochs, seed=args.seed)
    return layer, corpus, settings


def check_k(args) -> None:
    if args.m is not None and args.k > args.m:
        raise InputError(f"--k must be at most --m ({args.m}), not {args.k}.")


def run_train(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.features.data import load_models
    from analysis.features.study import STUDY, Inputs, Models

    check_k(args)
    loaded, card = load_models(args.model)
    layer, corpus, settings = _train_inputs(args, loaded, card)
    with progress_bar(100) as update:
        # the activations in this process or over shards on a Ray cluster (--ray)
        result = STUDY.run(Inputs(corpus, layer, settings,
                                  effects=0 if args.result is None else 24, spec=args.model,
                                  base=None, cache=not args.no_cache),
                           Models(loaded), placement=placed(args),
                           progress=None if update is None
                           else (lambda f, text: update(int(100 * f), 100)))
    sae = result.live.sae
    sae.card = {**sae.card, "data": args.data, "command": "features train"}
    sae.save(args.out, "float16" if args.float16 else "float32")
    if args.result:
        with open(args.result, "w", encoding="utf-8") as fh:
            json.dump(result.to_json(), fh, ensure_ascii=False, allow_nan=False)
    q = result.quality
    print(f"wrote {args.out}: layer {layer}, m = {sae.m}, k = {sae.k}, scale = {sae.scale:.4g}")
    print(f"held-out FVE {q['fve']:.3f}, normalised MSE {q['nmse']:.3f}, L0 {q['l0']:.1f}, "
          f"dead {100 * q['dead']:.1f}%, {q['agreement_kind']} agreement "
          f"{q['agreement']:.3f}, loss recovered {q['loss_recovered']:.3f}")
    for note in result.notes:
        print(f"note: {note}")
    return 0


def run_show(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.core.encoding import encode
    from analysis.features.browser import per_token
    from analysis.features.data import check_layer, load_models
    from analysis.features.sae import SAE
    from analysis.core.forward import forward

    sae = SAE.load(args.dir)
    spec = args.model or sae.card.get("spec") or sae.card.get("model") or DEFAULT_SPEC
    loaded, _ = load_models(spec)
    check_layer(sae.layer, loaded)
    if loaded.model.config.hidden_size != sae.d:
        raise InputError(f"--model is {loaded.model.config.hidden_size} wide; the dictionary "
                         f"reads {sae.d}-wide activations.")
    enc = encode(loaded.tokenizer, args.text, args.pair, max_length=loaded.max_length)
    fw = forward(loaded.model, loaded.tokenizer, [enc], attentions=False, hidden_states=True)
    payload = {"model": loaded.name, "layer": sae.layer, "text": enc.text, "pair": enc.pair,
               **per_token(sae, fw.hidden(0)[sae.layer], enc.tokens)}
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1, ensure_ascii=False)
    n = sum(len(f) for f in payload["features"])
    print(f"wrote {args.out}: {len(enc.tokens)} tokens, {n} feature activations")
    return 0


def run_diff(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.features.data import check_layer, corpus_of, default_layer, load_models
    from analysis.features.diff import diff
    from analysis.features.activations import collect, encode_corpus
    from analysis.core.study import json_safe
    from analysis.features.study import Inputs, cache_name
    from analysis.features.train import TrainSettings

    check_k(args)
    after, card = load_models(args.after)
    before, _ = load_models(args.before)
    layer = check_layer(args.layer if args.layer is not None else default_layer(after), after)
    check_layer(layer, before)
    corpus = corpus_of(args.data, card, args.seed, args.max_examples)
    cap = min(int(corpus.max_length or 512), after.max_length)
    encs = encode_corpus(after.tokenizer, corpus, cap)
    x = collect(after, corpus, [layer], encodings=encs).x[layer]
    settings = TrainSettings(m=args.m, k=args.k, epochs=args.epochs, seed=args.seed)
    # the page's crosscoder of the same weights, corpus and settings, read from the disk cache
    kept = None if args.no_cache else cache_name(Inputs(corpus, layer, settings), after,
                                                  "crosscoder", before)
    with progress_bar(100) as update:
        summary, _ = diff(before, after, corpus, layer, settings, x, encs, update, cache=kept,
                          max_length=cap)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(json_safe(summary), fh, indent=1, ensure_ascii=False, allow_nan=False)
    c = summary["classes"]
    print(f"wrote {args.out}: {summary['m']} latents; FVE base {summary['fve']['base']:.3f}, "
          f"after {summary['fve']['after']:.3f}; fine-tuned-only {c['fine-tuned-only']}, "
          f"shared {c['shared']}, base-only {c['base-only']}")
    return 0


def run_example(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.features import precomputed
    from analysis.features.study import example_inputs, example_models, run

    inputs, models = example_inputs(), example_models()
    with progress_bar(100) as update:
        result = run(inputs, models, None if update is None
                     else (lambda f, text: update(int(100 * f), 100)))
    path = precomputed.write(result)
    q = result.quality
    print(f"wrote {path} and {precomputed.PRECOMPUTED}: held-out FVE {q['fve']:.3f}, dead "
          f"{100 * q['dead']:.1f}%, agreement {q['agreement']:.3f}, loss recovered "
          f"{q['loss_recovered']:.3f}")
    return 0
