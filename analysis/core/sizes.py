"""What a checkpoint would cost before anything of it is built: the parameter count a model
built from its ``config.json`` holds, and the tensors its ``model.safetensors`` header declares,
checked against a cap before any weight is read or any model allocated.

A 112 KB .zip can hold the config of a 637M-parameter BERT and a one-tensor safetensors file:
``from_pretrained`` then builds (and randomly initialises) every parameter the config names --
gigabytes -- before it notices the weights are missing. :func:`check_checkpoint_size` reads only
the config (at most :data:`MAX_CONFIG_BYTES`, through the bounded JSON reader) and the
safetensors header (its first ``8 + n`` bytes, ``n`` at most :data:`MAX_HEADER_BYTES`), so the
check costs milliseconds and a few kilobytes whatever the checkpoint claims."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Callable

from analysis.core.corpus.jsonsafe import loads
from analysis.core.errors import DataError, InputError

MAX_PARAMS = 200_000_000       # library default: twice a 100M-parameter encoder
MAX_CONFIG_BYTES = 1 << 20     # a config.json is a few KB
MAX_HEADER_BYTES = 1 << 20     # a safetensors header: about 100 bytes per tensor (BERT-large:
                               # 40 KB); 1 MB parses in milliseconds, whatever its bytes
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
               "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
_KEYS = {  # the config names of each dimension across BERT, RoBERTa, DistilBERT, ALBERT, ELECTRA
    "hidden": ("hidden_size", "dim", "d_model", "n_embd"),
    "layers": ("num_hidden_layers", "n_layers", "num_layers", "n_layer"),
    "inner": ("intermediate_size", "hidden_dim", "d_ff", "n_inner", "ffn_dim"),
    "vocab": ("vocab_size",), "positions": ("max_position_embeddings", "n_positions"),
    "types": ("type_vocab_size",), "embedding": ("embedding_size",),
    "labels": ("num_labels",),
    "heads": ("num_attention_heads", "n_heads", "n_head", "encoder_attention_heads")}


def _dim(config: dict, what: str, default: int | None, name: str) -> int:
    for key in _KEYS[what]:
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(f"{name}: config.json has a bad {key} ({str(value)[:30]}).")
        return value
    if default is None:
        raise InputError(f"{name}: config.json names no {what} size, so its cost is unknown.")
    return default


def config_params(config: dict, name: str = "The checkpoint") -> int:
    """An upper estimate of the parameters of an encoder with a classification head built from
    ``config`` (a parsed config.json): embeddings (word, position, type; ALBERT's factorised
    projection), per layer the four attention projections, the feed-forward pair and three
    LayerNorms, the pooler and the classifier (num_labels or the id2label entries)."""
    if not isinstance(config, dict):
        raise InputError(f"{name}: config.json is not a JSON object.")
    h = _dim(config, "hidden", None, name)
    layers = _dim(config, "layers", None, name)
    inner = _dim(config, "inner", 4 * h, name)
    e = _dim(config, "embedding", h, name)
    labels = max(_dim(config, "labels", 2, name), len(config.get("id2label") or ()))
    embeddings = (_dim(config, "vocab", 0, name) + _dim(config, "positions", 512, name)
                  + _dim(config, "types", 2, name)) * e + 2 * e + (e * h + h if e != h else 0)
    layer = 4 * (h * h + h) + 2 * h * inner + inner + h + 6 * h
    return embeddings + layers * layer + (h * h + h) + labels * (h + 1)


def safetensors_params(read: Callable[[int], bytes], size: int,
                       name: str = "The checkpoint") -> int:
    """The number of values the tensors of a safetensors file declare, from its header alone
    (``read(n)`` gives the file's next ``n`` bytes; ``size`` is the file's length). Refuses a
    header that is too large, not JSON, or whose shapes, dtypes and offsets disagree with each
    other or with the file's length."""
    bad = f"{name}: model.safetensors is not a valid safetensors file"
    first = read(8)
    if len(first) < 8:
        raise InputError(f"{bad} (too short).")
    n = struct.unpack("<Q", first)[0]
    if n > MAX_HEADER_BYTES or 8 + n > size:
        raise InputError(f"{bad} (its header claims {n:,} bytes).")
    try:
        header = loads(read(n), f"{name}: the safetensors header")
    except DataError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(header, dict):
        raise InputError(f"{bad} (its header is not a JSON object).")
    total, end = 0, 0
    for key, t in header.items():
        if key == "__metadata__":
            continue
        shape, offsets = (t.get("shape"), t.get("data_offsets")) if isinstance(t, dict) \
            else (None, None)
        if not (isinstance(shape, list) and isinstance(offsets, list) and len(offsets) == 2
                and t.get("dtype") in DTYPE_BYTES
                and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                        for v in shape + offsets)):
            raise InputError(f"{bad} (tensor {str(key)[:60]!r} is malformed).")
        numel = math.prod(shape)
        if offsets[1] - offsets[0] != numel * DTYPE_BYTES[t["dtype"]]:
            raise InputError(f"{bad} (tensor {str(key)[:60]!r}: its shape and its bytes "
                             "disagree).")
        total, end = total + numel, max(end, offsets[1])
    if 8 + n + end > size:
        raise InputError(f"{bad} (it is shorter than its header says).")
    return total


def _words(n: int) -> str:
    return f"{n / 1e6:,.1f}M" if n < 10**12 else f"{n:.2e}"


def check_checkpoint_size(config_bytes: bytes, read_weights: Callable[[int], bytes] | None,
                          weights_size: int, max_params: int | None = None,
                          name: str = "The checkpoint") -> int:
    """The parameter count of a checkpoint from its config.json bytes and its safetensors
    header (the larger of the two counts; ``read_weights`` None: weights in another format,
    the config's count alone), refused with one line when either is above ``max_params``
    (default :data:`MAX_PARAMS`). Nothing is allocated: call it before loading."""
    cap = MAX_PARAMS if max_params is None else int(max_params)
    if len(config_bytes) > MAX_CONFIG_BYTES:
        raise InputError(f"{name}: config.json is larger than {MAX_CONFIG_BYTES >> 20} MB.")
    try:
        config = loads(config_bytes, f"{name}: config.json")
    except DataError as exc:
        raise InputError(str(exc)) from None
    from_config = config_params(config, name)
    if from_config > cap:
        raise InputError(f"{name}: its config describes a model of {_words(from_config)} "
                         f"parameters; this server loads at most {_words(cap)}.")
    if read_weights is None:
        return from_config
    from_weights = safetensors_params(read_weights, weights_size, name)
    if from_weights > cap:
        raise InputError(f"{name}: its weights hold {_words(from_weights)} values; this "
                         f"server loads at most {_words(cap)}.")
    return max(from_config, from_weights)


# ---------------------------------------------------------------------------------------------
# What a model costs in memory while a visitor holds it (the demo's per-visitor cap)

WEIGHT_BYTES = 4  # float32: how the app holds every model, whatever dtype its file stored
MAP_COPIES = 4.0  # the float32 attention maps of every layer and head, and the copies the
                  # views make of them (quantised, pooled, sparse), at the first view's peak
# The first view's measured rise of resident memory above the loaded model at 512 tokens
# (bench/README.md, "Sizes", 2026-11-27: one process, stand-ins with the published shapes), in
# MiB; tests/unit/test_sizes_memory.py holds working_bytes to within -10% / +25% of them.
MEASURED_RISE_512_MIB = {"embedded": 312, "bert-base": 663, "bert-large": 1444}


def working_bytes(config: dict, tokens: int, name: str = "The checkpoint") -> int:
    """The memory one input of ``tokens`` needs above the model's weights while a page works on
    it (the attention views' peak, the largest of the one-input studies measured at every
    size): :data:`MAP_COPIES` times the float32 attention maps (layers x heads x tokens^2 x 4
    bytes) plus every layer's activations (layers x tokens x (hidden + feed-forward) x 4
    bytes). Integrated gradients and value zeroing are bounded by budgets of their own
    (analysis/attribution: 2 GB of activations, 256 MB blocks of copies), whatever the model."""
    h = _dim(config, "hidden", None, name)
    layers = _dim(config, "layers", None, name)
    heads = _dim(config, "heads", 12, name)
    inner = _dim(config, "inner", 4 * h, name)
    n = max(0, int(tokens))
    maps = layers * heads * n * n * 4
    return int(MAP_COPIES * maps + layers * n * (h + inner) * 4)


@dataclass(frozen=True)
class ModelCost:
    """What a model held in a visitor's session costs: its parameters, its weights in memory
    (:data:`WEIGHT_BYTES` each) and the working memory of one input at the server's token cap
    (:func:`working_bytes`; 0 when the model's shape is not known yet). A visitor's peak is
    the weights of every model they hold plus the largest working memory among them: one
    visitor's pages work on one input at a time (``max_jobs_per_visitor``)."""

    params: int
    weights: int
    working: int = 0

    @classmethod
    def of(cls, config: dict | None, params: int, tokens: int) -> "ModelCost":
        working = working_bytes(config, tokens) if config else 0
        return cls(int(params), WEIGHT_BYTES * int(params), working)


def visitor_peak(costs) -> int:
    """The peak memory of the models one visitor holds (:class:`ModelCost` each), in bytes."""
    costs = list(costs)
    return sum(c.weights for c in costs) + max((c.working for c in costs), default=0)


def gigabytes(n: int) -> str:
    return f"{n / 2**30:,.2f} GB"
