"""Streamlit glue for the interactive attention views (offline components, JS in ui/frontend/).

Payloads come from ``analysis.views`` (``head_view_payload`` / ``model_view_payload``); the
views render token labels as text nodes only, so pass labels raw (never HTML-escaped).
Both components are registered once, at import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import streamlit as st

FRONTEND = Path(__file__).resolve().parent / "frontend"


def _read(name: str) -> str:
    return (FRONTEND / name).read_text(encoding="utf-8")


_CSS = _read("views.css")
_COMMON = _read("common.js")

_HEAD_VIEW = st.components.v2.component(
    "attention_head_view", css=_CSS, js=_COMMON + "\n" + _read("head_view.js"),
)
_MODEL_VIEW = st.components.v2.component(
    "attention_model_view", css=_CSS, js=_COMMON + "\n" + _read("model_view.js"),
)


def _noop() -> None:
    return None


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
