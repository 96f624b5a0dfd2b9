"""The attention views' one owner: the payload schema (versioned and checked), the components
(offline, JavaScript in ui/attention/frontend/), the state the page's component reports and the
reducer that turns it into widget values and URL parameters, and the page's two caches.

Payloads come from ``analysis.attention.views``; the views render token labels as text nodes
only, so pass labels raw (never HTML-escaped). Components are registered once, at import:

- ``attention_views``: the Attention page's one component (head view, model view and the
  canvas heatmap of long inputs), every layer in its payload, so it switches layers, heads,
  segment filter, pinned token and view in the browser and reports its state back;
- ``head_view`` / ``model_view``: one layer / the grid alone (the aspect and syntax pages).

The JavaScript is ES modules; ``ui.attention.bundle`` joins the ones a component needs into
the one module Streamlit loads, with ``frontend/constants.js`` generated here
(``constants_js``), so Python and JavaScript share SEGMENTS, the view kinds, the state keys and
the payload versions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

import streamlit as st

import analysis.attention
import analysis.attention.views
from analysis.attention import AttentionResult, level_view
from analysis.attention.views import PAYLOAD_VERSION, SCALE, VIEWS_VERSION
from ui.attention import state
from ui.attention.bundle import bundle, read_from

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
    lines = ["// Generated from ui/attention/component.py (constants_js): edit it there; the",
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


# ---- the Attention page's component: what it is asked, what it reports, the reducer

def page_ui(view: str, layer: int, dims: state.Dims) -> dict:
    """What the page asks the component for: its View widget's ``view`` (a PAGE_VIEWS name),
    ``layer`` (0-indexed) and the URL's heads, pin and segment (invalid ones: the defaults)."""
    kind = {name: k for k, name in VIEW_NAMES.items()}.get(view, "head")
    return {"view": kind, "layer": int(layer), "heads": state.url_heads(dims.n_heads),
            "pin": state.url_pin(dims.n), "segment": state.url_segment(SEGMENTS)}


class Follow(NamedTuple):
    """What a report changes: widget values (None: unchanged) and URL parameters (name ->
    value, None: removed; absent: unchanged)."""
    view: str | None = None
    layer: int | None = None  # 1-indexed, as the widget
    head: int | None = None  # 1-indexed
    params: dict = {}


def reduce_report(report: dict, asked: dict, dims: state.Dims) -> Follow:
    """The reducer: the component's reported state -> the widgets and URL parameters that
    follow it. Only the keys the user changed in the view (``report["changed"]``; without it,
    those that differ from what the page ``asked``) count, so a widget set meanwhile keeps its
    value; values the component could not have sent (out of range, unknown) change nothing
    (heads, pin, segment: their parameter leaves the URL)."""
    changed = report.get("changed")
    if isinstance(changed, list):
        report = {k: v for k, v in report.items() if k in changed}
    else:
        report = {k: v for k, v in report.items() if asked.get(k, "unset") != v}
    view = VIEW_NAMES.get(report.get("view")) if isinstance(report.get("view"), str) else None
    layer, head, params = None, None, {}
    if isinstance(report.get("layer"), int) and 0 <= report["layer"] < dims.n_layers:
        layer = report["layer"] + 1
    if "heads" in report:
        heads = report["heads"]
        valid = isinstance(heads, list) and heads and all(
            isinstance(h, int) and 0 <= h < dims.n_heads for h in heads)
        if valid and len(heads) == 1:
            head = heads[0] + 1
        params[state.HEADS] = state.heads_to_url(heads) if valid else None
    if "pin" in report:
        pin = report["pin"]
        ok = (isinstance(pin, dict) and pin.get("side") in PIN_SIDES
              and isinstance(pin.get("index"), int) and 0 <= pin["index"] < dims.n)
        params[state.PIN] = state.pin_to_url(pin) if ok else None
    if "segment" in report:
        seg = report["segment"]
        params[state.SEG] = state.segment_to_url(seg) if seg in SEGMENTS else None
    return Follow(view, layer, head, params)


def follow_component() -> None:
    """The component reported its state: the widgets and the URL follow (runs as its
    callback, before the script, so widget state is set before the widgets exist; nothing is
    recomputed)."""
    report, dims = state.reported(), state.dims()
    if report is None or dims is None:
        return
    follow = reduce_report(report, state.asked(), dims)
    state.set_widgets(follow.view, follow.layer, follow.head)
    for name, value in follow.params.items():
        state.set_param(name, value)


def show_views(payload: dict, ui: dict, dims: state.Dims) -> None:
    """The page's component with what the page asks for; its reports go through the reducer."""
    state.set_dims(dims)
    state.set_asked(ui)
    attention_views(payload, key=state.COMPONENT, ui=ui, on_change=follow_component)


# ---- the page's caches: cache_resource, not cache_data: a rerun gets the cached maps
# without unpickling a copy (72 MB for a 512-token pair: ~200 ms a rerun); they are shared,
# so made read-only

@st.cache_resource(max_entries=state.RESULT_CACHE_ENTRIES, show_spinner="Running the model...")
def compute(spec: str, text: str, pair: str | None, max_length: int, _loaded) -> AttentionResult:
    # looked up at call time: a test counts the calls (none on a cached rerun)
    result = analysis.attention.attention_for(_loaded, text, pair)
    result.attentions.setflags(write=False)
    return result


@st.cache_resource(max_entries=state.PAYLOAD_CACHE_ENTRIES,
                   show_spinner="Packing every layer for the browser...")
def views_data(spec: str, text: str, pair: str | None, max_length: int, level: str,
               hide_special: bool, _result: AttentionResult) -> dict:
    labels, maps, segments, special = level_view(_result, level, hide_special)
    return analysis.attention.views.views_payload(labels, maps, segments, special,
                                                  is_pair=_result.encoding.is_pair)
