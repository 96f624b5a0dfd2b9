"""The attention views as Streamlit components, a block every page that draws attention shares.
Payloads come from ``analysis.attention.views`` and are checked against the one contract
(:mod:`analysis.attention.payload_spec`, through :mod:`.contract`) before they are sent; the
views render token labels as text nodes only, so pass labels raw (never HTML-escaped).
Components are registered once, at import, from the committed bundle ``frontend/dist/``
(built by :mod:`.build` with esbuild; the app never runs Node):

- ``attention_views``: the Attention page's one component (head view, model view and the
  canvas heatmap of long inputs), every layer in its payload, so it switches layers, heads,
  segment filter, pinned token and view in the browser and reports its state back (the
  Attribution page draws its mixing maps with it too);
- ``head_view`` / ``model_view``: one layer / the grid alone (the Aspect heads and Syntax pages).

The Attention page's reducer of what the component reports lives with the page
(``ui.attention.component``).
"""


from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import streamlit as st

from ui.common.attention.contract import (PAGE_VIEWS, PIN_SIDES, SEGMENTS, STATE_KEYS,
                                          VIEW_KINDS, VIEW_NAMES, check_payload)

__all__ = ["PAGE_VIEWS", "PIN_SIDES", "SEGMENTS", "STATE_KEYS", "VIEW_KINDS", "VIEW_NAMES",
           "attention_views", "check_payload", "head_view", "model_view"]

FRONTEND = Path(__file__).resolve().parent / "frontend"
DIST = FRONTEND / "dist"  # the committed bundle: python -m ui.common.attention.build


def _read(name: str) -> str:
    return (DIST / name).read_text(encoding="utf-8")


_CSS = (FRONTEND / "views.css").read_text(encoding="utf-8")
_HEAD_VIEW = st.components.v2.component(
    "attention_head_view", css=_CSS, js=_read("head_view_single.js"))
_MODEL_VIEW = st.components.v2.component(
    "attention_model_view", css=_CSS, js=_read("model_view.js"))
_VIEWS = st.components.v2.component("attention_views", css=_CSS, js=_read("views.js"))


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
