"""The one contract of the attention component's payloads: every key, its type and shape and
whether it is required, per payload kind.

Three parties read it and nothing else: the producer (:mod:`analysis.attention.views`, which
takes its versions and scale from here), the Python check before a payload is sent
(``ui.common.attention.contract.check_payload``) and the JavaScript check in the browser
(``ui/common/attention/frontend/payload.js``, which imports ``payload_spec.js``, generated from
:func:`as_json` by ``python -m ui.common.attention.build``; a test fails when the committed file
differs from a fresh generation).

Kinds: ``views`` (the Attention page's component, every layer; it may carry a ``heatmap``),
``head`` (one layer's head view), ``model`` (the layers x heads thumbnails). A kind's payload
has ``view`` = the kind and ``version`` = its version; keys not listed are ignored (the UI adds
``ui``, what the page asks the component for).

Types (:data:`TYPES`): ``int`` (an integer, not a boolean), ``number``, ``bool``, ``string``,
``base64`` (a string whose length is a multiple of 4: its bytes are decoded where drawn),
``list`` and ``object``. A field is missing when absent, or null without ``nullable``.
``when = (key, value)``: required only when the payload's own ``key`` is ``value`` (a layer's
sparse arrays, for example); ``unless = key``: a required field the payload may leave out when
it has ``key`` (the Attention page's long-input heatmap sends only the heatmap, no layers).
``choices``: the only values allowed (for a list: for each item).
``length = (key, unit)``: a list as long as the payload's ``key`` (the message counts ``unit``).
``items``: a list's item type, or an object's (or each list item's) fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCALE = 255  # 8-bit quantisation: q = round(w * SCALE)
PAYLOAD_VERSION = 1  # head and model payloads
VIEWS_VERSION = 2  # the views payload (every layer)
ENCODINGS = ("dense", "sparse")
POOLS = ("max", "none")
TYPES = ("int", "number", "bool", "string", "base64", "list", "object")
MAKERS_MODULE = "analysis.attention.views"


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    doc: str
    required: bool = True
    nullable: bool = False
    when: tuple[str, str] | None = None
    unless: str | None = None
    choices: tuple = ()
    length: tuple[str, str] | None = None
    items: str | tuple["Field", ...] | None = None

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"{self.name}: unknown type {self.type!r}")
        if isinstance(self.items, str) and self.items not in TYPES:
            raise ValueError(f"{self.name}: unknown item type {self.items!r}")


@dataclass(frozen=True)
class Payload:
    kind: str  # the payload's "view"
    version: int
    maker: str  # the function of analysis.attention.views that makes it
    fields: tuple[Field, ...]

    def names(self, required_only: bool = False) -> list[str]:
        return [f.name for f in self.fields if f.required or not required_only]


def _head(kind: str, version: int) -> tuple[Field, ...]:
    return (Field("view", "string", "the payload's kind", choices=(kind,)),
            Field("version", "int", "the contract's version of this kind", choices=(version,)))


TOKENS = ("n", "tokens")
LABELS = (
    Field("labels", "list", "token labels, plain text (drawn as text nodes, never HTML)",
          length=TOKENS, items="string"),
    Field("segments", "list", "segment of each token: 0 = A, 1 = B", length=TOKENS,
          items="int", choices=(0, 1)),
    Field("special", "list", "1 for [CLS]/[SEP]-like tokens", length=TOKENS, items="int",
          choices=(0, 1)),
    Field("is_pair", "bool", "a sentence pair (segment filter shown)"),
)
SCALE_FIELD = Field("scale", "int", "q = round(w * scale)", choices=(SCALE,))
SPARSE = ("encoding", "sparse")
EDGES = (
    Field("weights", "base64", "uint8 weights: dense [H, n, n], or one per kept edge"),
    Field("counts", "base64", "uint16 (little-endian) kept edges per (head, query) row",
          required=False, when=SPARSE),
    Field("keys", "base64", "uint16 (little-endian) key index of each kept edge",
          required=False, when=SPARSE),
)
THUMBS = (
    Field("size", "int", "thumbnail side in cells (min(n, max_size))"),
    Field("pool", "string", "how the maps were pooled into thumbnails", choices=POOLS),
    Field("thumbs", "base64", "uint8 [L, H, size, size] max-pooled maps"),
)
ONLY_HEATMAP = "heatmap"  # a views payload with a heatmap may leave out layers and thumbs
HEATMAP = (
    Field("layer", "int", "0-indexed layer of the map"),
    Field("head", "int", "0-indexed head of the map"),
    Field("n", "int", "tokens (rows and columns)"),
    Field("max", "number", "the map's maximum: q = round(w / max * 255)"),
    Field("weights", "base64", "uint8 [n, n] relative to max"),
)

VIEWS = Payload("views", VIEWS_VERSION, "views_payload", (
    *_head("views", VIEWS_VERSION),
    Field("n_layers", "int", "layers"),
    Field("n_heads", "int", "heads per layer"),
    Field("n", "int", "tokens"),
    *LABELS,
    SCALE_FIELD,
    *THUMBS[:2],
    Field("thumbs", "base64", THUMBS[2].doc, unless=ONLY_HEATMAP),
    Field("encoding", "string", "how every layer's weights are sent", choices=ENCODINGS),
    Field("top_k", "int", "keys kept per query row when sparse; null: every key (dense)",
          nullable=True),
    Field("layers", "list", "each layer's weights (and its sparse arrays)",
          length=("n_layers", "layers"), unless=ONLY_HEATMAP, items=(
              *EDGES, Field("n_edges", "int", "kept edges of the layer", required=False,
                            when=SPARSE))),
    Field("digest", "string", "content hash: the component redraws only when it changes"),
    Field("heatmap", "object", "one head's full map for the canvas heatmap (long inputs)",
          required=False, items=HEATMAP),
))

HEAD = Payload("head", PAYLOAD_VERSION, "head_view_payload", (
    *_head("head", PAYLOAD_VERSION),
    Field("layer", "int", "0-indexed layer shown"),
    Field("n_heads", "int", "heads"),
    Field("n", "int", "tokens"),
    *LABELS,
    Field("top_k", "int", "keys kept per query row; null: every key", nullable=True),
    Field("threshold", "number", "weights below it were dropped (0: none)"),
    SCALE_FIELD,
    Field("highlight", "list", "positions drawn as marked", items="int"),
    Field("encoding", "string", "dense or sparse weights", choices=ENCODINGS),
    *EDGES,
    Field("n_edges", "int", "kept (query, key) cells"),
))

MODEL = Payload("model", PAYLOAD_VERSION, "model_view_payload", (
    *_head("model", PAYLOAD_VERSION),
    Field("n_layers", "int", "layers"),
    Field("n_heads", "int", "heads per layer"),
    Field("n", "int", "tokens"),
    *THUMBS,
    SCALE_FIELD,
))

PAYLOADS = {p.kind: p for p in (VIEWS, HEAD, MODEL)}


def _field_json(f: Field) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f.name, "type": f.type, "required": f.required}
    if f.nullable:
        out["nullable"] = True
    if f.when:
        out["when"] = list(f.when)
    if f.unless:
        out["unless"] = f.unless
    if f.choices:
        out["choices"] = list(f.choices)
    if f.length:
        out["length"] = list(f.length)
    if isinstance(f.items, str):
        out["items"] = f.items
    elif f.items:
        out["items"] = [_field_json(g) for g in f.items]
    return out


def as_json() -> dict[str, Any]:
    """The contract as plain JSON (what ``payload_spec.js`` exports as ``PAYLOADS``)."""
    return {kind: {"version": p.version, "maker": p.maker,
                   "fields": [_field_json(f) for f in p.fields]}
            for kind, p in PAYLOADS.items()}
