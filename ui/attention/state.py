"""Every session-state key, widget key, URL parameter and cache key of the Attention page, named
once, with typed read/write helpers (no other module spells them).

URL: the page's widgets are bound to the parameters of the same name (``view``, ``layer``,
``head``, ``level``, ``nospecial``; the neuron view's query token ``q``); the component's state
has three more: ``heads=1,3,5`` (1-indexed), ``pin=4`` (query 4) or ``pin=to:4`` (key 4),
``seg=A->B``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import streamlit as st

# ---- widget keys, each bound to the URL parameter of the same name
VIEW = "view"
LAYER = "layer"
HEAD = "head"
LEVEL = "level"
NO_SPECIAL = "nospecial"
QUERY = "q"  # the neuron view's query token (ui/attention/blocks.py query_picker)

# ---- URL parameters of the component's state (written by the reducer, read back on a link)
HEADS = "heads"
PIN = "pin"
SEG = "seg"

# ---- session-state keys of the page
COMPONENT = "attention_views"  # the component's key: its reported value lives here
LAST_GOOD = "_attention_last_good"  # (spec, AttentionResult) of the last input that worked
DIMS = "_attention_dims"  # (layers, heads, labels) of the last run, to check reported state
ASKED = "_attention_asked"  # the state the page last asked the component for
QUERY_SEEN = "_q_url"  # the URL's q last applied to the query token (a new link applies again)

# ---- element keys (links, downloads, report)
COPY_LINK = "attention_copy"
VIEWS_CSV = "views-csv"
HEATMAP_DOWNLOADS = "heatmap-dl"
NEURON_SCORES = "neuron-scores"  # the neuron view's dot product | softmax chart
REPORT_ADD = "attention"  # ui/common/exports/findings: the button's key is report-add-attention

# ---- cache entries (ui/attention/component.py: the results in the server's byte-bounded cache,
# ui.server.caches.byte_cached; the payloads in st.cache_resource); the cache key of each is
# its arguments without a leading underscore: (spec, text, pair, max_length[, level,
# hide_special])
PAYLOAD_CACHE_ENTRIES = 8


class Dims(NamedTuple):
    """What a reported state is checked against: the run's layers, heads and labels."""
    n_layers: int
    n_heads: int
    n: int


# ---- URL values <-> the component's values (pure: tests call them directly)

def heads_from_url(raw: str, n_heads: int) -> list[int] | None:
    """``1,3,5`` (1-indexed) -> sorted 0-indexed heads; anything invalid -> None (all)."""
    try:
        heads = sorted({int(h) - 1 for h in raw.split(",")})
    except ValueError:
        return None
    return heads if heads and all(0 <= h < n_heads for h in heads) else None


def heads_to_url(heads: list[int] | None) -> str | None:
    return ",".join(str(h + 1) for h in sorted(heads)) if heads else None


def pin_from_url(raw: str, n: int) -> dict | None:
    """``4`` (query 4, 1-indexed) or ``to:4`` (key 4) -> ``{"side", "index"}`` (0-indexed)."""
    side, _, pos = raw.rpartition(":") if ":" in raw else ("from", "", raw)
    if side not in ("from", "to") or not pos.isdigit() or not 1 <= int(pos) <= n:
        return None
    return {"side": side, "index": int(pos) - 1}


def pin_to_url(pin: dict | None) -> str | None:
    if pin is None:
        return None
    return f"{pin['index'] + 1}" if pin["side"] == "from" else f"to:{pin['index'] + 1}"


def segment_from_url(raw: str, segments: list[str]) -> str:
    return raw if raw in segments else "All"


def segment_to_url(segment: str) -> str | None:
    return None if segment == "All" else segment


# ---- the URL

def url_heads(n_heads: int) -> list[int] | None:
    return heads_from_url(st.query_params.get(HEADS, ""), n_heads)


def url_pin(n: int) -> dict | None:
    return pin_from_url(st.query_params.get(PIN, ""), n)


def url_segment(segments: list[str]) -> str:
    return segment_from_url(st.query_params.get(SEG, "All"), segments)


def set_param(name: str, value: str | None) -> None:
    """Set a URL parameter (None: remove it); unchanged values are not written again."""
    if value is None:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value


# ---- session state

def view_chosen() -> bool:
    """The View widget has a value already (in the session or from the URL)."""
    return VIEW in st.session_state or VIEW in st.query_params


def set_widgets(view: str | None = None, layer: int | None = None,
                head: int | None = None) -> None:
    """Set the page's widgets (before they exist: in a callback or above them); None: keep."""
    for key, value in ((VIEW, view), (LAYER, layer), (HEAD, head)):
        if value is not None:
            st.session_state[key] = value


def reported() -> dict | None:
    """The state the component reported last (``{"view", "layer", ...}``) or None."""
    value = st.session_state.get(COMPONENT) or {}
    state = value.get("state") if isinstance(value, dict) else None
    return state if isinstance(state, dict) else None


def dims() -> Dims | None:
    value = st.session_state.get(DIMS)
    return Dims(*value) if value is not None else None


def set_dims(value: Dims) -> None:
    st.session_state[DIMS] = tuple(value)


def asked() -> dict:
    return st.session_state.get(ASKED, {})


def set_asked(ui: dict) -> None:
    st.session_state[ASKED] = ui


def query_token_from_url(n: int) -> None:
    """Before the neuron view's Query token widget: a new ``q`` in the URL sets it (one that is
    not a position 1..n leaves the URL); a value out of range falls back to token 2."""
    raw = st.query_params.get(QUERY)
    if raw is not None and raw != st.session_state.get(QUERY_SEEN):
        st.session_state[QUERY_SEEN] = raw
        if raw.strip().isdigit() and 1 <= int(raw) <= n:
            st.session_state[QUERY] = int(raw)
        else:
            del st.query_params[QUERY]
    if st.session_state.get(QUERY) not in range(1, n + 1):
        st.session_state[QUERY] = min(2, n)


def query_token_to_url() -> None:
    """The Query token widget's callback: its value goes to the URL."""
    value = str(st.session_state[QUERY])
    st.query_params[QUERY] = st.session_state[QUERY_SEEN] = value


def last_good(spec: str) -> Any | None:
    """The AttentionResult of the last input that worked with this model, or None."""
    last = st.session_state.get(LAST_GOOD)
    return last[1] if last is not None and last[0] == spec else None


def set_last_good(spec: str, result: Any) -> None:
    st.session_state[LAST_GOOD] = (spec, result)
