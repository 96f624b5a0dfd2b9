"""``aspects finetune | evaluate | heads``: ABSA as sentence pairs (Sun et al. 2019) and
aspect-head discovery, with the library calls of the Aspects page. The earlier top-level
commands ``finetune``, ``evaluate`` and ``aspect-heads`` remain, with the same options."""

from __future__ import annotations

import math
from pathlib import Path

from tqdm import tqdm

from analysis.cli.progress import progress_bar
from analysis.cli.options import (check_max_length, fraction, out_file, out_folder,
                                  positive_float, positive_int, seed)
from analysis.core.errors import InputError
from analysis.core.models import DEFAULT_SPEC, load_model
from analysis.absa.data import split_dataset
from analysis.absa.tasks import TASKS, build_examples

DATA_HELP = ("data file: SemEval-2014 XML, SemEval-2016 XML, ASTE triplets, this project's "
             "JSON, or 'sample' for the bundled sample")
# (subcommand of ``aspects``, top-level alias)
NAMES = (("finetune", "finetune"), ("evaluate", "evaluate"), ("heads", "aspect-heads"))


def register(sub) -> None:
    p = sub.add_parser("aspects", help="ABSA sentence pairs: fine-tune, evaluate, aspect heads",
                       description="Aspect-based sentiment as sentence pairs (Sun et al. 2019): "
                                   "fine-tune a classifier, evaluate it, rank aspect heads.")
    inner = p.add_subparsers(dest="aspects_command", metavar="SUBCOMMAND")
    inner.required = True
    for (name, alias), add in zip(NAMES, (_add_finetune, _add_evaluate, _add_heads)):
        add(inner, name)
        add(sub, alias, f"same as 'aspects {name}'")
    e = inner.add_parser("example", help="build the example checkpoint the pages open on",
                         description="Fine-tune the embedded model on the bundled sample with "
                                     "the example recipe and save it to the cache folder "
                                     "(or --out).")
    e.add_argument("--out", default=None, type=out_folder,
                   help="checkpoint folder (default: the example's cache folder)")
    e.set_defaults(func=run_example)


def _add_finetune(sub, name: str, help: str | None = None) -> None:
    p = sub.add_parser(name, help=help or "fine-tune an encoder on ABSA sentence pairs",
                       description="Fine-tune a copy of a model as an auxiliary-sentence pair "
                                   "classifier (AdamW, lr 2e-5, warmup 0.1, batch 24).")
    p.add_argument("--data", required=True, help=DATA_HELP)
    p.add_argument("--task", required=True, choices=TASKS)
    p.add_argument("--model", default=DEFAULT_SPEC, help="base model spec (default: embedded)")
    p.add_argument("--epochs", type=positive_float, default=4)
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--lr", type=positive_float, default=2e-5)
    p.add_argument("--batch-size", type=positive_int, default=24)
    p.add_argument("--max-length", type=positive_int, default=128,
                   help="tokens per pair (1 to the model's maximum; default 128)")
    p.add_argument("--pair-order", choices=("review-aux", "aux-review"), default=None,
                   help="default: the paper's (review first for M tasks, aux first for B)")
    p.add_argument("--heldout", type=fraction, default=0.0,
                   help="fraction of sentences held out and evaluated (0 = train on all)")
    p.add_argument("--skip-invalid", action="store_true",
                   help="drop sentences whose offsets do not match their text")
    p.add_argument("--out", required=True, type=out_folder,
                   help="checkpoint folder (written atomically; an existing folder must be "
                        "empty or a checkpoint of this dashboard)")
    p.set_defaults(func=run_finetune)


def _add_evaluate(sub, name: str, help: str | None = None) -> None:
    p = sub.add_parser(name, help=help or "paper metrics of an ABSA checkpoint on a data file")
    p.add_argument("--model", required=True, help="checkpoint folder written by finetune")
    p.add_argument("--data", required=True, help=DATA_HELP)
    p.add_argument("--task", required=True, choices=TASKS)
    p.add_argument("--skip-invalid", action="store_true")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json")
    p.set_defaults(func=run_evaluate)


def _add_heads(sub, name: str, help: str | None = None) -> None:
    p = sub.add_parser(name, help=help or "rank heads attending to aspects, opinions, the other "
                                          "aspect and [SEP] when absent")
    p.add_argument("--model", required=True, help="checkpoint folder (or any model spec)")
    p.add_argument("--data", required=True, help=DATA_HELP)
    p.add_argument("--opinions", nargs="+", default=None, metavar="ASTE_FILE",
                   help="ASTE triplet file(s) whose opinion words are linked to the data's "
                        "terms (same sentence text up to whitespace)")
    p.add_argument("--task", choices=TASKS, default=None,
                   help="auxiliary-sentence format (default: the checkpoint's, else qa_m)")
    p.add_argument("--top-k", type=positive_int, default=10, help="heads per kind in the output")
    p.add_argument("--max-sentences", type=positive_int, default=None)
    p.add_argument("--causal", action="store_true",
                   help="also mask the top-k heads of each kind and re-evaluate (checkpoints)")
    p.add_argument("--skip-invalid", action="store_true")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json")
    p.set_defaults(func=run_heads)


def _json_out(path: str) -> Path:
    if not path.endswith(".json"):
        raise InputError("--out must name a .json file.")
    return Path(path)


def _write(path: Path, data: dict) -> None:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.absa.checkpoints import json_text

    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json_text(data), encoding="utf-8")
    tmp.replace(path)


def _fmt(value) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.2f}"


def run_finetune(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.absa.checkpoints import check_checkpoint_target
    from analysis.absa.pipeline import run_fine_tune
    from analysis.absa.readers import load_absa
    check_checkpoint_target(args.out)  # before hours of training, not after
    loaded = load_model(args.model)
    # a pair needs its special tokens and one token of each text
    check_max_length(args.max_length, loaded.max_length,
                     loaded.tokenizer.num_special_tokens_to_add(pair=True) + 2)
    ds = load_absa(args.data, skip_invalid=args.skip_invalid)
    test = None
    if args.heldout > 0:
        ds, test = split_dataset(ds, args.heldout, seed=args.seed)
    bar = tqdm(total=1, unit="step")

    def progress(p):
        bar.total = p.total_steps
        bar.update(1)
        bar.set_postfix(loss=f"{p.loss:.4f}", ex_s=f"{p.examples_per_s:.1f}")

    def on_curve(k, m):
        bar.write(f"held-out after epoch {k}: aspect F1 {_fmt(m['aspect_f1'])}, 4-way "
                  f"{_fmt(m['acc_4way'])}")

    run = run_fine_tune(loaded, ds, test, args.task, data=str(args.data),
                        pair_order=args.pair_order, epochs=args.epochs, lr=args.lr,
                        batch_size=args.batch_size, max_length=args.max_length, seed=args.seed,
                        out=args.out, progress=progress, on_curve=on_curve)
    bar.close()
    result = run.result
    print(f"wrote {run.folder}: {len(result.losses)} steps in {result.seconds:.0f}s, final loss "
          f"{result.losses[-1]:.4f}")
    for k, v in run.card["metrics"].items():
        if not isinstance(v, str):
            print(f"  {k}: {_fmt(v)}")
    _hint(run.card["metrics"])
    return 0


def _hint(metrics: dict) -> None:
    """A hint when the model gives one label to every pair (aspect F1 0.00 says only that)."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.aspects.reading import one_label_hint

    hint = one_label_hint(metrics, " (the example checkpoint's recipe: `python -m analysis "
                                   "aspects example`)")
    if hint:
        print(f"hint: {hint}")


def run_evaluate(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.absa.checkpoints import load_checkpoint
    from analysis.absa.finetune import evaluate
    from analysis.absa.readers import load_absa
    out = _json_out(args.out)
    loaded, card = load_checkpoint(args.model, task=args.task)
    ds = load_absa(args.data, skip_invalid=args.skip_invalid)
    examples = build_examples(ds, args.task, card.get("pair_order"))
    metrics = evaluate(loaded.model, loaded.tokenizer, examples, args.task,
                       max_length=int(card.get("max_length", 128)))
    _write(out, {**metrics, "model": str(args.model), "data": str(args.data),
                 "task": args.task})
    print(f"wrote {out}: aspect F1 {_fmt(metrics['aspect_f1'])}, 4-way "
          f"{_fmt(metrics['acc_4way'])}, 3-way {_fmt(metrics['acc_3way'])}, binary "
          f"{_fmt(metrics['acc_binary'])}")
    _hint(metrics)
    return 0


def heads_inputs(args):
    """The study's inputs from the command line."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.aspects.study import Inputs

    return Inputs(model=args.model, data=args.data, opinions=tuple(args.opinions or ()),
                  task=args.task, top_k=args.top_k, max_sentences=args.max_sentences,
                  causal=args.causal, skip_invalid=args.skip_invalid)


def run_heads(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.aspects import STUDY

    out = _json_out(args.out)
    with progress_bar(100, unit="%") as update:  # a bar only on a terminal
        def progress(fraction: float, text: str) -> None:
            if update:
                update(int(round(100 * fraction)), 100)

        result = STUDY.run(heads_inputs(args), progress=progress)
    _write(out, result.to_json())
    print(f"wrote {out} (layer/head 0-indexed)")
    for line in result.summary:
        print(f"  {line}")
    return 0


def run_example(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.absa.example import build_example
    from analysis.core.example import estimate_words, machine_threads

    threads = machine_threads()
    print(f"building the example checkpoint at {threads} torch thread(s) (the cores the "
          f"machine leaves free): {estimate_words()}")
    bar = tqdm(total=1.0, unit="", bar_format="{l_bar}{bar}| {desc}")

    def progress(fraction: float, text: str) -> None:
        bar.n = fraction
        bar.set_description_str(text)
        bar.refresh()

    out = build_example(args.out, progress, threads=threads)
    bar.close()
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.absa.checkpoints import read_card

    card = read_card(out)
    print(f"wrote {out}")
    for k, v in (card.get("metrics") or {}).items():
        if not isinstance(v, str):
            print(f"  {k}: {_fmt(v)}")
    return 0
