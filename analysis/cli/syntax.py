"""``syntax`` and ``probe``: dependency heads (Clark et al. 2019, section 4) and structural
probes (Hewitt & Manning 2019) over CoNLL-U treebanks -> JSON (same numbers as the Syntax
page; docs/METHODS.md section 10)."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.cli.options import OptionError, out_file, positive_int, seed
from analysis.cli.progress import study_bar
from analysis.cli.scale import add_ray_options, placed
from analysis.core.models import DEFAULT_SPEC, load_model

MODEL_HELP = "'default' (embedded all-MiniLM-L6-v2), a Hugging Face id or a folder"


def probe_rank(text: str) -> int:
    """A probe's rank: a whole number from 1 to :data:`analysis.syntax.probes.MAX_RANK`
    (checked while parsing, before the model loads)."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.syntax.probes import MAX_RANK

    value = positive_int(text)
    if value > MAX_RANK:
        raise OptionError(f"must be a whole number from 1 to {MAX_RANK}, not {text!r}")
    return value


def in_file(text: str) -> str:
    """An input file that exists (checked while parsing, before any work)."""
    path = Path(text).expanduser()
    if not path.exists():
        raise OptionError(f"names a file that does not exist: {text}")
    if path.is_dir():
        raise OptionError(f"is a folder, not a .conllu file: {text}")
    return text


def register(sub) -> None:
    p = sub.add_parser(
        "syntax", help="accuracy of every head at finding dependency heads -> .json",
        description="For every relation of a CoNLL-U treebank (the full DEPREL, and 'all'), "
                    "the share of dependents whose gold head each attention head picks, in "
                    "both directions (dependent -> head, head -> dependent), the best head and "
                    "the best fixed-offset baseline (Clark et al. 2019, section 4).",
    )
    p.add_argument("--data", required=True, type=in_file, help="treebank (.conllu)")
    _shared_options(p, "use at most N sentences")
    add_ray_options(p)
    p.set_defaults(func=run_syntax)

    q = sub.add_parser(
        "probe", help="structural probes (distance, depth) per layer -> .json",
        description="Train a distance probe and a depth probe (Hewitt & Manning 2019) on the "
                    "word vectors of every layer (embeddings included) of --train and report "
                    "UUAS, distance Spearman, root accuracy and depth Spearman on --eval, with "
                    "the linear-chain UUAS baseline.",
    )
    q.add_argument("--train", required=True, type=in_file, help="training treebank (.conllu)")
    q.add_argument("--eval", required=True, type=in_file, help="evaluation treebank (.conllu)")
    q.add_argument("--rank", type=probe_rank, default=64,
                   help="rank k of the probe (64; at most 4096)")
    q.add_argument("--seed", type=seed, default=0, help="seed of the probes' initialisation "
                   "and batch order (0)")
    _shared_options(q, "use at most N sentences of each file")
    q.set_defaults(func=run_probe)


def _shared_options(p, max_examples_help: str) -> None:
    p.add_argument("--model", default=DEFAULT_SPEC, help=MODEL_HELP)
    p.add_argument("--max-examples", type=positive_int, default=None, help=max_examples_help)
    p.add_argument("--batch-size", type=positive_int, default=32,
                   help="sentences per forward (32)")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")


def _write(path: str, payload: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1)


def run_syntax(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.syntax import read_conllu
    from analysis.syntax.study import STUDY, Inputs
    from analysis.syntax.treebank import treebank_notes

    dataset = read_conllu(args.data, max_sentences=args.max_examples)
    for note in treebank_notes(dataset):
        print(f"note: {note}")
    loaded = load_model(args.model)
    with study_bar() as told:  # in this process or on a Ray cluster (--ray)
        result = STUDY.run(Inputs(loaded.spec, dataset, args.batch_size), models=loaded,
                           placement=placed(args), progress=told)
    for note in result.notes:
        print(f"note: {note}")
    _write(args.out, result.to_json())
    print(f"wrote {args.out}: {result.n_sentences} sentences ({result.skipped} skipped), "
          f"{len(result.relations)} relations, {loaded.shape}")
    return 0


def run_probe(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.syntax import read_conllu
    from analysis.syntax.study import PROBES, ProbeInputs

    train = read_conllu(args.train, max_sentences=args.max_examples)
    evalset = read_conllu(args.eval, max_sentences=args.max_examples)
    if Path(args.train).resolve() == Path(args.eval).resolve():
        print("note: --train and --eval are the same file: the probes are evaluated on the "
              "sentences they were trained on.")
    loaded = load_model(args.model)
    inputs = ProbeInputs(loaded.spec, train, evalset, rank=args.rank, seed=args.seed,
                         batch_size=args.batch_size)
    with study_bar() as told:
        result = PROBES.run(inputs, models=loaded, placement=placed(args), progress=told)
    for note in result.notes:
        print(f"note: {note}")
    _write(args.out, result.to_json())
    best = max(result.layers, key=lambda r: r["uuas"])
    print(f"wrote {args.out}: {len(result.layers)} layers, {result.n_train} training and "
          f"{result.n_eval} evaluation sentences; best UUAS {best['uuas']:.3f} (layer "
          f"{best['layer']}), linear chain {result.baselines['linear_chain_uuas']:.3f}")
    return 0
