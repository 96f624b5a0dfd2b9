"""Streamlit's websocket protocol as the load benchmark's protocol visitors speak it (pure
helpers, no I/O): the ``rerun_script`` BackMsg the 1.67 frontend sends, the widget states it
sends with it, and what a visitor reads back from a run's ForwardMsgs (bench/README.md).

Checked against Chromium (a DevTools dump of the frames a real visitor sends on the Attention
page, bench/README.md "Protocol visitors"): a rerun on the same page sends the value of every
widget the last run drew (selectbox / radio: the option's text; text area: the text; segmented
control: the list of the chosen options' texts; checkbox: a bool), the changed one with its new
value, the page's current query string (a widget bound to a query parameter writes its new value
there first) and the hashes of the cacheable messages the browser holds; a switch to another page
sends only the sidebar's widgets, with the target page's script hash. Buttons send a trigger
only when pressed; widgets in a form and custom components that have reported nothing send
nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

SIDEBAR = 1  # delta_path[0] of the sidebar's elements (0: the main area)
DONE = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
        ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
CONTEXT = {"timezone": "UTC", "timezone_offset": 0, "locale": "en-US", "is_embedded": False,
           "color_scheme": "light"}


def widget_value(element) -> tuple[str, object] | None:
    """(WidgetState field, value) of a widget element as the frontend holds it after the run
    that drew it, or None for an element that sends no state (not a widget, a button, a widget
    in a form)."""
    kind = element.WhichOneof("type")
    w = getattr(element, kind) if kind else None
    if w is None or not getattr(w, "id", "") or getattr(w, "form_id", ""):
        return None
    if kind in ("selectbox", "radio"):
        if w.set_value and w.HasField("raw_value"):
            return "string_value", w.raw_value
        return ("string_value", w.options[w.default]) if w.HasField("default") else None
    if kind in ("text_area", "text_input"):
        return "string_value", w.value if w.set_value else w.default
    if kind == "checkbox":
        return "bool_value", w.value if w.set_value else w.default
    if kind == "button_group":
        chosen = list(w.raw_values) if w.set_value else [w.options[i].content for i in w.default]
        return "string_array_value", chosen
    if kind == "number_input":
        v = w.value if w.set_value else w.default
        return ("int_value", int(v)) if w.data_type == w.INT else ("double_value", v)
    if kind == "slider":
        v = list(w.value) if w.set_value else list(w.default)
        return ("int_array_value", [int(x) for x in v]) if w.data_type in (w.INT,) else \
            ("double_array_value", v)
    return None


def widget_states(elements: dict[tuple, object], held: dict[str, tuple] | None = None,
                  sidebar_only: bool = False) -> dict[str, tuple]:
    """{widget id: (field, value)}: what the frontend holds for the widgets among ``elements``
    ({delta path: Element}, one run's) after that run, the sidebar's first, then in page order
    (as the frontend lists them). ``held``: what it held before (the values the visitor set); a
    widget keeps its held value unless the run set it (``set_value``), a new one takes the value
    the run drew it with. ``sidebar_only``: the sidebar's alone (what a page switch sends)."""
    held = held or {}
    out = {}
    for path in sorted(elements, key=lambda p: (p[0] != SIDEBAR, p)):
        if sidebar_only and path[0] != SIDEBAR:
            continue
        got = widget_value(elements[path])
        if got is None:
            continue
        w = getattr(elements[path], elements[path].WhichOneof("type"))
        out[w.id] = held[w.id] if w.id in held and not w.set_value else got
    return out


def find_widget(elements: dict[tuple, object], kind: str, label: str):
    """The first ``kind`` widget labelled ``label`` (its proto), or None."""
    for path in sorted(elements):
        e = elements[path]
        if e.WhichOneof("type") == kind and getattr(e, kind).label == label:
            return getattr(e, kind)
    return None


def rerun_msg(states: dict[str, tuple], page_hash: str, query: str, url: str,
              cached: list[str] = (), trigger: str | None = None,
              fragment: str | None = None) -> BackMsg:
    """The ``rerun_script`` BackMsg: ``states`` ({id: (field, value)}), ``trigger``: the id of
    a pressed button (trigger_value true), ``fragment``: the id of a fragment the server asked
    to rerun every few seconds (``auto_rerun``; the frontend sends it with is_auto_rerun)."""
    msg = BackMsg()
    cs = msg.rerun_script
    cs.query_string = query
    cs.page_script_hash = page_hash
    if fragment is not None:
        cs.fragment_id, cs.is_auto_rerun = fragment, True
    cs.cached_message_hashes.extend(cached)
    for k, v in CONTEXT.items():
        setattr(cs.context_info, k, v)
    cs.context_info.url = url
    cs.widget_states.SetInParent()
    for wid, (fld, value) in states.items():
        ws = cs.widget_states.widgets.add(id=wid)
        if fld.endswith("_array_value"):
            getattr(ws, fld).data.extend(value)
        else:
            setattr(ws, fld, value)
    if trigger is not None:
        cs.widget_states.widgets.add(id=trigger, trigger_value=True)
    return msg


def with_param(query: str, key: str, value) -> str:
    """``query`` with ``key`` set to ``value`` (a list: its first item; the segmented control's
    one choice), as the frontend writes a bound widget's new value into the URL."""
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != key]
    pairs.append((key, value[0] if isinstance(value, list) else str(value)))
    return urlencode(pairs)


@dataclass
class Run:
    """What one visitor action brought back: the elements the run drew ({delta path:
    Element}), the exceptions it showed, the media URLs to fetch, the final status."""
    elements: dict[tuple, object] = field(default_factory=dict)
    exceptions: list[str] = field(default_factory=list)
    media: set[str] = field(default_factory=set)
    progress: int = 0  # progress bars drawn (a fine-tune running shows one)
    status: int | None = None
    page_hash: str = ""  # the page the run drew (new_session)
    auto: dict[str, float] = field(default_factory=dict)  # fragment id -> rerun every s


def add_delta(run: Run, msg: ForwardMsg) -> None:
    """One ``delta`` ForwardMsg into ``run``."""
    path = tuple(msg.metadata.delta_path)
    d = msg.delta
    if d.WhichOneof("type") == "new_element":
        e = d.new_element
        kind = e.WhichOneof("type")
        run.elements[path] = e
        if kind == "exception":
            run.exceptions.append(f"{e.exception.type}: {e.exception.message}"[:200])
        elif kind == "progress":
            run.progress += 1
        elif kind in ("imgs", "audio", "video"):
            run.media.update(_media_urls(e))


def _media_urls(element) -> set[str]:
    """The server-relative media URLs an element points at (fetched over HTTP by a browser)."""
    text = str(element)
    return {"/media/" + part.split('"')[0] for part in text.split('"/media/')[1:]}


def component_data(elements: dict[tuple, object], name: str) -> dict | None:
    """The JSON data of the first custom component (components v2) whose name ends with
    ``name`` (what the component's JavaScript draws), or None."""
    for path in sorted(elements):
        e = elements[path]
        if e.WhichOneof("type") == "bidi_component" and \
                e.bidi_component.component_name.endswith(name):
            b = e.bidi_component
            raw = b.json if b.WhichOneof("data") == "json" else b.mixed.json
            return json.loads(raw) if raw else None
    return None


def headings(elements: dict[tuple, object]) -> list[str]:
    return [elements[p].heading.body for p in sorted(elements)
            if elements[p].WhichOneof("type") == "heading"]


def charts(elements: dict[tuple, object]) -> int:
    """How many Vega-Lite charts the run drew."""
    return sum(elements[p].WhichOneof("type") == "vega_lite_chart" for p in elements)


ASSET = re.compile(r'<(?:script|link)\b[^>]*?\b(?:src|href)="\./([^"]+)"[^>]*>')


def page_assets(html: str) -> list[str]:
    """The files the browser fetches for the app's page before it opens the websocket: the
    scripts, module preloads, stylesheet, font and icon ``index.html`` names (not the agent
    API's description, a link no browser follows), then the two requests the app's script
    makes first."""
    return [path for tag, path in ((m.group(0), m.group(1)) for m in ASSET.finditer(html))
            if 'rel="service-desc"' not in tag] + ["_stcore/health", "_stcore/host-config"]
