"""``search``: index a corpus (every word piece's hidden state at every layer and every head's
context vector, for faiss search), then find the pieces nearest to one piece of a text (same
numbers as the Search page; docs/METHODS.md section 16).

    python -m analysis search index --model M --data F --out DIR
    python -m analysis search query --index DIR --text T --token I --layer L --k K --out f.json
"""

from __future__ import annotations

import json
from pathlib import Path

from analysis.cli.options import OptionError, out_file, positive_int
from analysis.cli.progress import study_bar
from analysis.cli.scale import add_ray_options, placed
from analysis.core.models import DEFAULT_SPEC, load_model

MODEL_HELP = "'default' (embedded all-MiniLM-L6-v2), 'example', a Hugging Face id or a folder"
BUNDLED = ("treebank", "absa", "sample")


def data_file(text: str) -> str:
    if text in BUNDLED:
        return text
    path = Path(text).expanduser()
    if not path.exists():
        raise OptionError(f"names a file that does not exist: {text}")
    if path.is_dir():
        raise OptionError(f"is a folder, not a data file: {text}")
    return text


def index_folder(text: str) -> str:
    """The output folder of ``index``: new, or empty, or an index of this command."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise OptionError(f"names a file, not a folder: {text}")
    if path.is_dir() and any(path.iterdir()) and not (path / "meta.json").is_file():
        raise OptionError(f"names a folder that holds other files (not an index): {text}")
    parent = path.resolve().parent
    if not parent.is_dir():
        raise OptionError(f"names a folder whose parent does not exist: {parent}")
    return text


def layer_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise OptionError(f"must be a whole number (0 = the embeddings), not {text!r}") from None
    if value < 0:
        raise OptionError(f"must be 0 (the embeddings) or more, not {text!r}")
    return value


def token_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise OptionError(f"must be a whole number ([CLS] = 0), not {text!r}") from None
    if value < 0:
        raise OptionError(f"must be 0 ([CLS]) or more, not {text!r}")
    return value


def register(sub) -> None:
    p = sub.add_parser("search", help="index a corpus; find the pieces a model treats alike",
                       description="Corpus search (exBERT): index every word piece's hidden "
                                   "state at every layer and every head's context vector, "
                                   "then find the pieces nearest (cosine) to a piece of a text.")
    cmds = p.add_subparsers(dest="search_command", metavar="index|query")
    cmds.required = True
    ix = cmds.add_parser("index", help="build an index folder",
                         description="Index a corpus: one sentence per line (.txt; a tab "
                                     "splits a pair), a .conllu treebank (UPOS and dependency "
                                     "labels), ABSA data (aspect roles), a .csv / .jsonl corpus "
                                     "(its 'label' column), or 'treebank' / 'absa' (the bundled "
                                     "samples).")
    ix.add_argument("--model", default=DEFAULT_SPEC, help=MODEL_HELP)
    ix.add_argument("--data", required=True, type=data_file, help="the corpus file")
    ix.add_argument("--out", required=True, type=index_folder, help="the index folder")
    ix.add_argument("--max-examples", type=positive_int, default=None,
                    help="index at most N sentences")
    ix.add_argument("--batch-size", type=positive_int, default=32,
                    help="sentences per forward (32)")
    add_ray_options(ix)
    ix.set_defaults(func=run_index)
    q = cmds.add_parser("query", help="the pieces nearest to one piece of a text -> .json")
    q.add_argument("--index", required=True, help="an index folder (search index)")
    q.add_argument("--text", required=True, help="the text holding the query piece")
    q.add_argument("--pair", default=None, help="second text of a sentence pair")
    q.add_argument("--token", required=True, type=token_number,
                   help="the piece's position in the text as the tokenizer encodes it "
                        "([CLS] = 0)")
    q.add_argument("--layer", required=True, type=layer_number,
                   help="the layer (0 = the embeddings)")
    q.add_argument("--head", type=positive_int, default=None,
                   help="search this head's context vectors (1-based) instead of the layer's "
                        "hidden states")
    q.add_argument("--k", type=positive_int, default=20, help="matches (20)")
    q.add_argument("--model", default=None,
                   help="the model (default: the index's own); it must have the index's weights")
    q.add_argument("--out", required=True, type=out_file(".json"), help="output .json file")
    q.set_defaults(func=run_query)


def read_data(source: str, max_examples: int | None = None):
    """(Dataset, the .txt file's line numbers or None): the bundled treebank or ABSA sample by
    name, else a file read as the Search page reads an upload
    (``analysis.search.corpus.read_data``)."""
    if source in ("treebank",):
        # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
        from analysis.syntax.treebank import sample_treebank

        return sample_treebank(max_sentences=max_examples), None
    if source in ("absa", "sample"):
        # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
        from analysis.absa.readers import load_sample

        ds = load_sample()
        return (ds.select(range(min(len(ds), max_examples))) if max_examples else ds), None
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.search.corpus import read_data as read_file

    return read_file(source, max_examples=max_examples)


def run_index(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.search.corpus import with_lines
    from analysis.search.study import INDEX, IndexInputs

    dataset = with_lines(*read_data(args.data, args.max_examples))  # a .txt file's line numbers
    loaded = load_model(args.model)
    inputs = IndexInputs(loaded.spec, dataset, args.out, batch_size=args.batch_size)
    with study_bar() as told:  # its vectors in this process or on a Ray cluster (--ray)
        index = INDEX.run(inputs, models=loaded, placement=placed(args), progress=told)
    for note in index.meta.get("notes", []):
        print(f"note: {note}")
    approx = [k for k, v in index.meta["sets"].items() if v["backend"] != "exact"]
    size = index.size_bytes()
    print(f"wrote {args.out}: {index.meta['n_sentences']} sentences, {index.n} pieces, "
          f"{index.n_layers + 1} layers and {index.n_layers * index.n_heads} heads "
          f"({size / 2 ** 20:.1f} MiB, {size / max(1, index.n) * 10000 / 2 ** 20:.1f} MiB per "
          "10,000 pieces)")
    if approx:
        worst = min(index.meta["sets"][k]["recall"] for k in approx)
        print(f"{len(approx)} set(s) searched approximately (HNSW); lowest recall@50 against "
              f"exact search: {worst:.3f}")
    else:
        print("every set is searched exactly (faiss IndexFlatIP)")
    return 0


def run_query(args) -> int:
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.search import SearchIndex, reading
    from analysis.search.study import STUDY, Inputs

    index = SearchIndex.open(args.index)
    head = args.head - 1 if args.head is not None else None
    index.check_set(args.layer, head)
    loaded = load_model(args.model or index.meta["model"]["spec"])
    inputs = Inputs(index, loaded.spec, args.text, args.token, args.layer, head, args.k,
                    args.pair)
    result = STUDY.run(inputs, models=loaded, placement=placed(args))
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result.to_json(), fh, indent=1, ensure_ascii=False)
    print(f"wrote {args.out}: {len(result.matches)} matches for «{result.piece}» (position "
          f"{result.token})")
    for line in reading(index, result.piece, result.matches, args.layer, head, result.own):
        print(line)
    return 0
