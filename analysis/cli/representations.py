"""``representations``: token vectors layer by layer, projected to 2-D, for one input; per-layer
probes, anisotropy and self-similarity for a corpus; one model or two (same numbers as the
Representations page; docs/METHODS.md section 13)."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.cli.options import OptionError, out_file, positive_int, seed
from analysis.cli.progress import study_bar
from analysis.cli.scale import add_ray_options, placed
from analysis.core.models import DEFAULT_SPEC, load_model
from analysis.representations.corpus import PROBES, check_probes
from analysis.representations.projection import METHODS
from analysis.core.corpus import read_corpus, read_labels
from analysis.core.errors import InputError
from analysis.representations import corpus_reading, input_reading
from analysis.representations.states import check_same_shape
from analysis.representations.study import CORPUS, STUDY, CorpusInputs, Inputs

MODEL_HELP = "'default' (embedded all-MiniLM-L6-v2), 'example', a Hugging Face id or a folder"


def data_source(text: str) -> str:
    """A .conllu treebank, an ABSA file, a labelled .csv / .jsonl corpus or ``sample`` (the
    bundled ABSA sample)."""
    if text in ("sample", "bundled"):
        return text
    path = Path(text).expanduser()
    if not path.exists():
        raise OptionError(f"names a file that does not exist: {text}")
    if path.is_dir():
        raise OptionError(f"is a folder, not a data file: {text}")
    return text


def register(sub) -> None:
    p = sub.add_parser(
        "representations", help="token vectors per layer in 2-D; per-layer probes -> .json",
        description="With --text: every layer's 2-D projection of the input's token vectors "
                    "(layer 0 = the embeddings; pca = each layer's own PCA of its centred "
                    "vectors, aligned = PCA rotated onto the previous layer by orthogonal "
                    "Procrustes, tsne, umap), for --model and, with --compare, a second model "
                    "on the same tokens with the same fit. With --data (a .conllu treebank, "
                    "ABSA data or a .csv / .jsonl corpus with a 'label' column): per-layer "
                    "cross-validated linear probes (upos, aspect, label) with the majority "
                    "baseline, anisotropy and self-similarity (Ethayarajh 2019).",
    )
    p.add_argument("--model", default=DEFAULT_SPEC, help=MODEL_HELP)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="one input text")
    src.add_argument("--data", type=data_source,
                     help="a .conllu treebank, an ABSA file (SemEval XML, ASTE, JSON), a "
                          ".csv / .jsonl corpus with 'text' and 'label' columns, or 'sample' "
                          "(the bundled ABSA sample)")
    p.add_argument("--pair", default=None, help="second text of a sentence pair (with --text)")
    p.add_argument("--compare", default=None, help="a second model: " + MODEL_HELP)
    p.add_argument("--method", choices=METHODS, default=None,
                   help="projection of --text (pca)")
    p.add_argument("--probe", choices=tuple(PROBES), action="append", default=None,
                   help="probe to run with --data (repeatable; default: the data's own, upos "
                        "for a treebank with UPOS tags, aspect for ABSA data, label for a "
                        "labelled corpus: each word's sentence label)")
    p.add_argument("--max-examples", type=positive_int, default=None,
                   help="use at most N sentences of --data")
    p.add_argument("--batch-size", type=positive_int, default=32,
                   help="sentences per forward (32)")
    p.add_argument("--seed", type=seed, default=0, help="seed of t-SNE, UMAP, the folds and "
                   "the random word pairs (0)")
    p.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    add_ray_options(p)
    p.set_defaults(func=run_representations)


def _check(args) -> None:
    if args.text is not None:
        for flag, value in (("--probe", args.probe), ("--max-examples", args.max_examples),
                            ("--ray", args.ray)):
            if value is not None:
                raise InputError(f"{flag} is used with --data, not with --text.")
    else:
        if args.pair is not None:
            raise InputError("--pair is used with --text, not with --data.")
        if args.method is not None:
            raise InputError("--method is used with --text (the corpus JSON has no "
                             "projection).")


def read_labelled(source: str, max_sentences: int | None = None):
    """A .csv / .jsonl corpus with its ``label`` column (none where the file has none: the
    study then refuses in one line)."""
    ds = read_corpus(source, max_examples=max_sentences)
    gold, _ = read_labels(source, ds)
    return ds.add_column("label", gold) if gold is not None else ds


def read_data(source: str, max_sentences: int | None = None):
    """A treebank (.conllu), a labelled corpus (.csv / .jsonl) or ABSA Dataset."""
    lower = str(source).lower()
    if lower.endswith(".conllu"):
        # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
        from analysis.syntax.treebank import read_conllu

        return read_conllu(source, max_sentences=max_sentences)
    if lower.endswith((".csv", ".jsonl")):
        return read_labelled(source, max_sentences)
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.absa.readers import load_absa

    ds = load_absa(source)
    if max_sentences is not None and len(ds) > max_sentences:
        ds = ds.select(range(max_sentences))
    return ds


def _write(path: str, payload: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=1)


def _load_pair(args):
    loaded = load_model(args.model)
    compare = load_model(args.compare) if args.compare else None
    if compare is not None:
        check_same_shape(loaded, compare)
    return loaded, compare


def _spec(loaded) -> str | None:
    return loaded.spec if loaded is not None else None


def run_representations(args) -> int:
    _check(args)
    if args.text is not None:
        loaded, compare = _load_pair(args)
        inputs = Inputs(loaded.spec, args.text, args.pair, _spec(compare),
                        method=args.method or "pca", seed=args.seed)
        result = STUDY.run(inputs, models=(loaded, compare), placement=placed(args))
        for note in result.notices:
            print(f"note: {note}")
        _write(args.out, result.to_json())
        print(f"wrote {args.out}: {len(result.tokens)} tokens, {result.n_layers} layers "
              f"({result.method})")
        for line in input_reading(result):
            print(line)
        return 0
    dataset = read_data(args.data, args.max_examples)
    probes = check_probes(dataset, args.probe)
    loaded, compare = _load_pair(args)
    inputs = CorpusInputs(loaded.spec, dataset, _spec(compare), probes, args.max_examples,
                          seed=args.seed, batch_size=args.batch_size, scatter=False)
    with study_bar() as told:  # in this process (its staged run) or on a Ray cluster (--ray)
        result = CORPUS.run(inputs, models=(loaded, compare), placement=placed(args),
                            progress=told)
    for note in result.notes:
        print(f"note: {note}")
    _write(args.out, result.to_json())
    print(f"wrote {args.out}: {result.n_sentences} sentences, {result.n_words} words, "
          f"{result.n_layers} layers")
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.core.cards import trained_of

    trained = trained_of(compare) if compare is not None else None  # its fine-tune's card
    for line in corpus_reading(result, trained=trained):
        print(line)
    return 0
