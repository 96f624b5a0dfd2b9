"""Streamlit glue for the interactive attention views (offline components, JS in ui/attention/frontend/).

Payloads come from ``analysis.attention.views``; the views render token labels as text nodes
only, so pass labels raw (never HTML-escaped). Components are registered once, at import:

- ``attention_views``: the Attention page's one component (head view, model view and the
  canvas heatmap of long inputs), every layer in its payload, so it switches layers, heads,
  segment filter, pinned token and view in the browser and reports its state back;
- ``attention_head_view`` / ``attention_model_view``: one layer / the grid alone (other pages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import streamlit as st

FRONTEND = Path(__file__).resolve().parent / "frontend"
VIEW_NAMES = {"head": "Head view", "model": "Model view", "heatmap": "Heatmap"}


def _read(name: str) -> str:
    return (FRONTEND / name).read_text(encoding="utf-8")


def _js(*files: str, main: str) -> str:
    return "\n".join(_read(f) for f in ("common.js", *files)) + f"\nexport default {main};\n"


_CSS = _read("views.css")
_HEAD_VIEW = st.components.v2.component(
    "attention_head_view", css=_CSS, js=_js("head_view.js", "head_view_single.js", main="headViewMain"),
)
_MODEL_VIEW = st.components.v2.component(
    "attention_model_view", css=_CSS, js=_js("model_view.js", main="modelViewMain"),
)
_VIEWS = st.components.v2.component(
    "attention_views", css=_CSS,
    js=_js("head_view.js", "head_view_single.js", "model_view.js", "heatmap.js", "views.js",
           main="viewsMain"),
)


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
    if payload.get("view") != "views":
        raise ValueError("attention_views needs a payload from analysis.attention.views.views_payload.")
    result = _VIEWS(key=key, data={**payload, "ui": ui}, on_state_change=on_change)
    state = result.get("state")
    return state if isinstance(state, dict) else None


def head_view(payload: dict, *, key: str, heads: Sequence[int] | None = None,
              pin: int | None = None) -> dict | None:
    """Render the head view of one layer.

    ``heads``: 0-indexed heads shown when the view opens or when this value changes (None:
    all); the user can then toggle heads in the view. ``pin``: a query ("from") position
    pinned when the view opens or when this value changes, so only its lines show. Returns
    the view's state once the user has changed something: ``{"heads": [0-indexed visible heads], "pinned": {"side":
    "from"|"to", "index": i, "token": label} or None, "segment": "All"|"A->A"|...}``
    (keys the user has not touched are absent), else None.
    """
    if payload.get("view") != "head":
        raise ValueError("head_view needs a payload from analysis.views.head_view_payload.")
    ui = {"heads": [int(h) for h in heads] if heads is not None else None,
          "pin": {"side": "from", "index": int(pin)} if pin is not None else None}
    result = _HEAD_VIEW(
        key=key, data={**payload, "ui": ui},
        on_heads_change=_noop, on_pinned_change=_noop, on_segment_change=_noop,
    )
    state = {k: result.get(k) for k in ("heads", "pinned", "segment") if k in result}
    state = {k: v for k, v in state.items() if v is not None or k == "pinned"}
    if not any(v is not None for v in state.values()):
        return None
    return state


def model_view(payload: dict, *, key: str,
               selected: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """Render the layers x heads grid of thumbnails; returns ``(layer, head)`` 0-indexed in
    the run right after the user clicked a map (a trigger), else None. ``selected``
    (0-indexed) is outlined."""
    if payload.get("view") != "model":
        raise ValueError("model_view needs a payload from analysis.views.model_view_payload.")
    ui = {"selected": [int(selected[0]), int(selected[1])] if selected is not None else None}
    result = _MODEL_VIEW(key=key, data={**payload, "ui": ui}, on_select_change=_noop)
    value = result.get("select")
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    return None


# ---------------------------------------------------------------------------------------------
# The Attention page's view state in the URL: heads=1,3,5  pin=4 | pin=to:4  seg=A->B

SEGMENTS = ["All", "A->A", "B->B", "A->B", "B->A"]


def url_heads(n_heads: int) -> list[int] | None:
    """``heads=1,3,5`` (1-indexed) -> sorted 0-indexed heads; anything invalid -> None (all)."""
    try:
        heads = sorted({int(h) - 1 for h in st.query_params.get("heads", "").split(",")})
    except ValueError:
        return None
    return heads if heads and all(0 <= h < n_heads for h in heads) else None


def url_pin(n: int) -> dict | None:
    """``pin=4`` (query 4, 1-indexed) or ``pin=to:4`` (key 4) -> the component's pin."""
    raw = st.query_params.get("pin", "")
    side, _, pos = raw.rpartition(":") if ":" in raw else ("from", "", raw)
    if side not in ("from", "to") or not pos.isdigit() or not 1 <= int(pos) <= n:
        return None
    return {"side": side, "index": int(pos) - 1}


def url_segment() -> str:
    seg = st.query_params.get("seg", "All")
    return seg if seg in SEGMENTS else "All"


def set_param(name: str, value: str | None) -> None:
    if value is None:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value
