"""Stand-in models with the published shapes of common BERT-style checkpoints (issue 30).

Shapes, not weights, set what a study costs, so the bench builds each model from its published
``config.json`` values with seeded random weights (no download) and saves it once as a
safetensors folder that the dashboard loads as "a local folder":

- ``<root>/<name>/``: the encoder alone (``AutoModel``), like a base checkpoint;
- ``<root>/<name>-clf/``: the same encoder with a sequence-classification head for the
  example recipe's ABSA task and an ``absa_card.json``, so the studies that need a fine-tuned
  classifier (head importance, faithfulness, IG, Drift's "after") load it like a checkpoint of
  the Aspect heads page.

``<root>`` is ``$DASHBOARD_CACHE/standins`` (default ``~/.cache/attention-dashboard/standins``),
outside the repository.

Tokenizer: none of these checkpoints' tokenizers is on this machine (no hub), so every stand-in
carries the embedded model's tokenizer (all-MiniLM-L6-v2: the bert-base-uncased WordPiece
vocabulary, 30,522 entries). For the BERT and DistilBERT stand-ins that IS their tokenizer's
vocabulary; RoBERTa's real tokenizer is a 50,265-entry byte-level BPE, which splits text into
somewhat different (usually a few per cent more) tokens: its rows are timed at the same token
counts, so only the tokenisation differs. RoBERTa and DistilBERT take no token type ids, so
their tokenizer is saved without them (as their own tokenizers are).

    python -m bench.sizes.standins                 # build every stand-in that is missing
    python -m bench.sizes.standins bert-base-uncased --force
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]

# The published config.json values (huggingface.co/<name>/blob/main/config.json) that set the
# shapes; the rest are the library's defaults for the model type (dropout 0.1, gelu, ...).
CONFIGS: dict[str, dict] = {
    "bert-base-uncased": dict(
        model_type="bert", hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, vocab_size=30522, max_position_embeddings=512,
        type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0, hidden_act="gelu"),
    "bert-large-uncased": dict(
        model_type="bert", hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
        intermediate_size=4096, vocab_size=30522, max_position_embeddings=512,
        type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0, hidden_act="gelu"),
    "roberta-base": dict(
        model_type="roberta", hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, vocab_size=50265, max_position_embeddings=514,
        type_vocab_size=1, layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0,
        eos_token_id=2, hidden_act="gelu"),
    "distilbert-base-uncased": dict(
        model_type="distilbert", dim=768, n_layers=6, n_heads=12, hidden_dim=3072,
        vocab_size=30522, max_position_embeddings=512, sinusoidal_pos_embds=False,
        tie_weights_=True, activation="gelu", pad_token_id=0),
}
# The published sizes, for the test and the table: (layers, heads, hidden, intermediate,
# vocab, max positions, parameters in millions as published: Devlin et al. 2019, Liu et al.
# 2019, Sanh et al. 2019).
PUBLISHED = {
    "bert-base-uncased": (12, 12, 768, 3072, 30522, 512, 110),
    "bert-large-uncased": (24, 16, 1024, 4096, 30522, 512, 340),
    "roberta-base": (12, 12, 768, 3072, 50265, 514, 125),
    "distilbert-base-uncased": (6, 12, 768, 3072, 30522, 512, 66),
}
# Short names of the bench's --sizes.
SHORT = {"distilbert": "distilbert-base-uncased", "bert-base": "bert-base-uncased",
         "roberta-base": "roberta-base", "bert-large": "bert-large-uncased"}
NO_TOKEN_TYPES = ("roberta", "distilbert")
SEED = 0


def standins_root() -> Path:
    from analysis.core.example import cache_root

    return cache_root() / "standins"


def shape(config) -> tuple[int, int, int, int, int, int]:
    """(layers, heads, hidden, intermediate, vocab, max positions) of a transformers config
    (DistilBERT names them n_layers, n_heads, dim, hidden_dim)."""
    def get(*names):
        for n in names:
            if getattr(config, n, None) is not None:
                return int(getattr(config, n))
        raise AttributeError(names[0])

    return (get("num_hidden_layers", "n_layers"), get("num_attention_heads", "n_heads"),
            get("hidden_size", "dim"), get("intermediate_size", "hidden_dim"),
            get("vocab_size"), get("max_position_embeddings"))


def tiny_config(name: str) -> dict:
    """The same family with a tiny shape (2 layers x 2 heads, hidden 32): the test's variant."""
    cfg = dict(CONFIGS[name])
    if cfg["model_type"] == "distilbert":
        cfg.update(dim=32, n_layers=2, n_heads=2, hidden_dim=64)
    else:
        cfg.update(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                   intermediate_size=64)
    return cfg


def make_config(values: dict, task: str):
    from transformers import AutoConfig

    from analysis.absa.tasks import LABELS, is_binary

    values = dict(values)
    model_type = values.pop("model_type")
    labels = ("no", "yes") if is_binary(task) else LABELS
    return AutoConfig.for_model(model_type, **values, id2label=dict(enumerate(labels)),
                                label2id={v: k for k, v in enumerate(labels)})


def tokenizer_source() -> str:
    """The embedded model's folder, or ``$STANDIN_TOKENIZER`` (a folder with its tokenizer
    files: bench/sizes/cuda_prep.py's ``.gpu/minilm`` on a machine without the package)."""
    import os

    from analysis.core.models import default_model_path

    return os.environ.get("STANDIN_TOKENIZER") or default_model_path()


def save_tokenizer(model_type: str, out: Path) -> None:
    """The embedded model's tokenizer, without token type ids for RoBERTa and DistilBERT."""
    from transformers import AutoTokenizer

    kwargs = {}
    if model_type in NO_TOKEN_TYPES:
        kwargs["model_input_names"] = ["input_ids", "attention_mask"]
    tok = AutoTokenizer.from_pretrained(tokenizer_source(), **kwargs)
    tok.save_pretrained(out)
    cfg = out / "tokenizer_config.json"
    data = json.loads(cfg.read_text("utf-8"))
    if kwargs:  # older transformers do not write it back: make sure the file says it
        data["model_input_names"] = kwargs["model_input_names"]
    data["model_max_length"] = 512
    cfg.write_text(json.dumps(data, indent=1), "utf-8")


def build(name: str, root: Path | None = None, *, tiny: bool = False, force: bool = False,
          seed: int = SEED) -> tuple[Path, Path]:
    """(encoder folder, classifier checkpoint folder) of stand-in ``name``, built when
    missing (``force``: again). ``tiny``: :func:`tiny_config` (folders ``<name>-tiny``)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from analysis.absa.checkpoints import make_card, save_checkpoint
    from analysis.core.example import RECIPE

    root = Path(root) if root is not None else standins_root()
    stem = name + ("-tiny" if tiny else "")
    base_dir, clf_dir = root / stem, root / f"{stem}-clf"
    if not force and (base_dir / "model.safetensors").is_file() \
            and (clf_dir / "model.safetensors").is_file():
        return base_dir, clf_dir
    values = tiny_config(name) if tiny else CONFIGS[name]
    config = make_config(values, RECIPE.task)
    torch.manual_seed(seed)
    clf = AutoModelForSequenceClassification.from_config(config, attn_implementation="eager")
    clf.eval()
    for folder in (base_dir, clf_dir):
        if folder.exists() and force:
            shutil.rmtree(folder)
    base_dir.mkdir(parents=True, exist_ok=True)
    encoder = getattr(clf, clf.base_model_prefix)
    encoder.config.architectures = [type(encoder).__name__]
    encoder.save_pretrained(base_dir, safe_serialization=True)
    save_tokenizer(values["model_type"], base_dir)
    clf.config.architectures = [type(clf).__name__]
    result = SimpleNamespace(n_examples=0, seconds=0.0, seconds_per_epoch=[], losses=[])
    card = make_card(f"stand-in {name}", RECIPE.task, RECIPE.pair_order, RECIPE.data,
                     seed, 0, RECIPE.max_length, result,
                     standin=f"random weights (seed {seed}) in the shape of {name}")
    tmp = root / f".{stem}-tok"
    save_tokenizer(values["model_type"], tmp)
    from transformers import AutoTokenizer

    save_checkpoint(clf, AutoTokenizer.from_pretrained(tmp), clf_dir, card)
    shutil.rmtree(tmp, ignore_errors=True)
    return base_dir, clf_dir


def bert_base_in_memory():
    """A randomly initialised BERT-base-size classifier (12 x 12, 768 wide, 5 labels, seed 0)
    in memory, with the embedded model's tokenizer, as a LoadedModel: no download, nothing
    saved (a study's time does not depend on the weights)."""
    import torch
    import transformers as T

    from analysis.core.models import LoadedModel, default_model_path

    torch.manual_seed(SEED)
    cfg = T.BertConfig(num_labels=5)  # 12 layers x 12 heads, 768 wide (BERT-base)
    model = T.AutoModelForSequenceClassification.from_config(cfg, attn_implementation="eager")
    model.eval()
    tok = T.AutoTokenizer.from_pretrained(default_model_path())
    return LoadedModel("bert-base-size", "bert-base-size", tok, model, "bert", 12, 12, 0, 512)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help=f"which ({', '.join(CONFIGS)}; default all)")
    p.add_argument("--force", action="store_true", help="build again")
    p.add_argument("--root", default=None, help="cache folder (default: standins_root())")
    args = p.parse_args(argv)
    for name in args.names or list(CONFIGS):
        name = SHORT.get(name, name)
        if name not in CONFIGS:
            print(f"unknown stand-in {name!r}; one of {', '.join(CONFIGS)}", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        base, clf = build(name, args.root and Path(args.root), force=args.force)
        print(f"{name}: {base} and {clf} ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
