"""The attention views, a block every page that draws attention shares: the payload schema
(versioned and checked), the offline components (JavaScript ES modules in ui/common/frontend/),
and the constants Python and JavaScript share.

Payloads come from ``analysis.attention.views``; the views render token labels as text nodes
only, so pass labels raw (never HTML-escaped). Components are registered once, at import:

- ``attention_views``: the Attention page's one component (head view, model view and the
  canvas heatmap of long inputs), every layer in its payload, so it switches layers, heads,
  segment filter, pinned token and view in the browser and reports its state back (the
  Attribution page draws its mixing maps with it too);
- ``head_view`` / ``model_view``: one layer / the grid alone (the Aspect heads and Syntax pages).

The JavaScript is ES modules; ``ui.common.bundle`` joins the ones a component needs into the
one module Streamlit loads, with ``frontend/constants.js`` generated here (``constants_js``),
so Python and JavaScript share SEGMENTS, the view kinds, the state keys and the payload
versions. The Attention page's reducer of what the component reports lives with the page
(``ui.attention.component``).
"""


from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import streamlit as st

from analysis.attention.views import PAYLOAD_VERSION, SCALE, VIEWS_VERSION
from ui.common.bundle import bundle, read_from

FRONTEND = Path(__file__).resolve().parent / "frontend"
SEGMENTS = ["All", "A->A", "B->B", "A->B", "B->A"]
VIEW_KINDS = ["head", "model", "heatmap"]
VIEW_NAMES = {"head": "Head view", "model": "Model view", "heatmap": "Heatmap"}
PAGE_VIEWS = ["Head view", "Model view", "Neuron view", "Heatmap"]  # the page's View widget
PIN_SIDES = ["from", "to"]
STATE_KEYS = ["view", "layer", "heads", "pin", "segment"]  # what attention_views reports

# ---- the payload schema: kind -> (version, maker, keys it must have)
SCHEMA = {
    "views": (VIEWS_VERSION, "views_payload",
              ("n_layers", "n_heads", "n", "labels", "segments", "special", "is_pair", "scale",
               "encoding", "top_k", "size", "pool", "digest")),
    "head": (PAYLOAD_VERSION, "head_view_payload",
             ("layer", "n_heads", "n", "labels", "segments", "special", "is_pair", "scale",
              "encoding", "weights", "highlight")),
    "model": (PAYLOAD_VERSION, "model_view_payload",
              ("n_layers", "n_heads", "n", "size", "pool", "scale", "thumbs")),
}


def check_payload(payload: dict, kind: str) -> None:
    """Raise ValueError unless ``payload`` is a ``kind`` payload of the version this code (and
    the JavaScript, which checks it again) draws, with every key the views read."""
    version, maker, keys = SCHEMA[kind]
    where = f"analysis.attention.views.{maker}"
    if not isinstance(payload, dict) or payload.get("view") != kind:
        got = payload.get("view") if isinstance(payload, dict) else type(payload).__name__
        raise ValueError(f"This view needs a payload from {where} (got view {got!r}).")
    if payload.get("version") != version:
        raise ValueError(f"This view draws version {version} of {where}'s payload, got "
                         f"{payload.get('version')!r}.")
    missing = [k for k in keys if k not in payload]
    if missing:
        raise ValueError(f"The payload of {where} lacks {', '.join(missing)}.")
    if "labels" in payload and len(payload["labels"]) != payload["n"]:
        raise ValueError(f"The payload of {where} has {len(payload['labels'])} labels for "
                         f"{payload['n']} tokens.")
    if payload["scale"] != SCALE:
        raise ValueError(f"The payload of {where} has scale {payload['scale']}, not {SCALE}.")


def constants_js() -> str:
    """``frontend/constants.js``: the constants JavaScript shares with Python."""
    values = {"PAYLOAD_VERSION": PAYLOAD_VERSION, "VIEWS_VERSION": VIEWS_VERSION,
              "SCALE": SCALE, "SEGMENTS": SEGMENTS, "VIEW_KINDS": VIEW_KINDS,
              "PIN_SIDES": PIN_SIDES, "STATE_KEYS": STATE_KEYS}
    lines = ["// Generated from ui/common/views.py (constants_js): edit it there; the",
             "// bundle takes this text from Python and a test checks this file matches it.", ""]
    lines += [f"export const {k} = {json.dumps(v)};" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def _js(entry: str, main: str) -> str:
    return bundle(entry, main, read_from(FRONTEND), {"constants.js": constants_js()})


_CSS = (FRONTEND / "views.css").read_text(encoding="utf-8")
_HEAD_VIEW = st.components.v2.component(
    "attention_head_view", css=_CSS, js=_js("head_view_single.js", "headViewMain"))
_MODEL_VIEW = st.components.v2.component(
    "attention_model_view", css=_CSS, js=_js("model_view.js", "modelViewMain"))
_VIEWS = st.components.v2.component(
    "attention_views", css=_CSS, js=_js("views.js", "viewsMain"))


def _noop() -> None:
    return None


def attention_views(payload: dict, *, key: str, ui: dict,
                    on_change: Callable[[], None] = _noop) -> dict | None:
    """Render the page's component. ``payload``: ``analysis.attention.views.views_payload``
    (optionally with ``heatmap``: ``heatmap_payload``). ``ui``: what the page asks for, applied
    when it changes: ``view`` ("head" | "model" | "heatmap"), ``layer`` (0-indexed), ``heads``
    (0-indexed list, None: all), ``pin`` ({"side": "from"|"to", "index": i} or None),
    ``segment`` ("All", "A->B", ...). Returns the component's last reported state (same keys)
    or None; ``on_change`` runs (as a callback, before the page's script) when it reports."""
    check_payload(payload, "views")
    result = _VIEWS(key=key, data={**payload, "ui": ui}, on_state_change=on_change)
    value = result.get("state")
    return value if isinstance(value, dict) else None


def head_view(payload: dict, *, key: str, heads: Sequence[int] | None = None,
              pin: int | None = None) -> dict | None:
    """Render the head view of one layer.

    ``heads``: 0-indexed heads shown when the view opens or when this value changes (None:
    all); the user can then toggle heads in the view. ``pin``: a query ("from") position
    pinned when the view opens or when this value changes, so only its lines show. Returns
    the view's state once the user has changed something: ``{"heads": [0-indexed visible
    heads], "pinned": {"side": "from"|"to", "index": i, "token": label} or None, "segment":
    "All"|"A->A"|...}``
    (keys the user has not touched are absent), else None.
    """
    check_payload(payload, "head")
    ui = {"heads": [int(h) for h in heads] if heads is not None else None,
          "pin": {"side": "from", "index": int(pin)} if pin is not None else None}
    result = _HEAD_VIEW(
        key=key, data={**payload, "ui": ui},
        on_heads_change=_noop, on_pinned_change=_noop, on_segment_change=_noop,
    )
    got = {k: result.get(k) for k in ("heads", "pinned", "segment") if k in result}
    got = {k: v for k, v in got.items() if v is not None or k == "pinned"}
    if not any(v is not None for v in got.values()):
        return None
    return got


def model_view(payload: dict, *, key: str,
               selected: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """Render the layers x heads grid of thumbnails; returns ``(layer, head)`` 0-indexed in
    the run right after the user clicked a map (a trigger), else None. ``selected``
    (0-indexed) is outlined."""
    check_payload(payload, "model")
    ui = {"selected": [int(selected[0]), int(selected[1])] if selected is not None else None}
    result = _MODEL_VIEW(key=key, data={**payload, "ui": ui}, on_select_change=_noop)
    value = result.get("select")
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    return None
