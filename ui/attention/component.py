"""The Attention page's side of the attention views (the component itself, its payload check
and constants: ``ui.common.attention``): what the page asks the component for, the state it
reports and the reducer that turns it into widget values and URL parameters, and the page's two
caches.
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

import analysis.attention.views
from analysis.attention import AttentionResult, level_view
from analysis.attention.study import STUDY, Inputs
from ui.attention import state
from ui.server.caches import byte_cached
from ui.common.attention.views import PIN_SIDES, SEGMENTS, VIEW_NAMES, attention_views


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


# ---- the page's caches: shared objects, not cache_data: a rerun gets the cached maps
# without unpickling a copy (72 MB for a 512-token pair: ~200 ms a rerun); they are shared,
# so made read-only; the results are kept by their bytes (ui.server.caches)

@byte_cached(spinner="Running the model...")  # by bytes: 19 MB a result at 256 tokens
def compute(spec: str, text: str, pair: str | None, max_length: int, _loaded) -> AttentionResult:
    # one forward pass, in this run (not queued: the landing page's light work never waits
    # behind a visitor's corpus job, nor counts against their job limit)
    result = STUDY.run(Inputs(spec, text, pair, max_length), models=_loaded)
    result.attentions.setflags(write=False)
    return result


def views_data(spec: str, max_length: int, level: str, hide_special: bool,
               result: AttentionResult) -> dict:
    """The views' payload of ``result``, cached server-wide under the text and pair the result
    was computed from (never the sidebar's: a visitor whose box is empty or refused is shown
    their own last good result, which must not be another visitor's payload cached under the
    same empty text)."""
    return _views_data(spec, result.encoding.text, result.encoding.pair, max_length, level,
                       hide_special, result)


@st.cache_resource(max_entries=state.PAYLOAD_CACHE_ENTRIES,
                   show_spinner="Packing every layer for the browser...")
def _views_data(spec: str, text: str, pair: str | None, max_length: int, level: str,
                hide_special: bool, _result: AttentionResult) -> dict:
    labels, maps, segments, special = level_view(_result, level, hide_special)
    return analysis.attention.views.views_payload(labels, maps, segments, special,
                                                  is_pair=_result.encoding.is_pair)
