"""The load benchmark's pure helpers (bench/load_stream.py, load_monitor.py, load_report.py):
the BackMsg a protocol visitor sends equals what Chromium sent (a recorded DevTools frame), the
widget states it holds, the query string it writes, what it reads back from a run."""

import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.load_monitor import _tree
from bench.load_report import CrossTalk, check_words, coverage, split
from bench.load_stream import (Run, add_delta, component_data, page_assets, rerun_msg,
                               widget_states, with_param)

ID = "$$ID-{}-{}"
# The widgets of the Attention page, as Chromium 1.67's frontend sent them with a layer change
# to 3 (Network.webSocketFrameSent, decoded as a BackMsg; ids shortened).
RECORDED = {
    "queryString": "a=Visitor+x+says+the+apple+was+lovely.&layer=3",
    "widgetStates": {"widgets": [
        {"id": ID.format("36ec", "model"), "stringValue": "all-MiniLM-L6-v2 (embedded)"},
        {"id": ID.format("48bf", "mode"), "stringValue": "One text"},
        {"id": ID.format("aff5", "a"), "stringValue": "Visitor x says the apple was lovely."},
        {"id": ID.format("8c8a", "layer"), "stringValue": "3"},
        {"id": ID.format("f6ad", "head"), "stringValue": "1"},
        {"id": ID.format("fd89", "level"), "stringValue": "token"},
        {"id": ID.format("d1d5", "view"), "stringArrayValue": {"data": ["Head view"]}},
        {"id": ID.format("ff96", "nospecial"), "boolValue": False}]},
    "pageScriptHash": "b2caf644de1e9b43cd87108174143563",
    "cachedMessageHashes": ["94c3b26b15222c1242cb705d43720f28"],
    "contextInfo": {"timezone": "UTC", "timezoneOffset": 0, "locale": "en-US",
                    "url": "http://127.0.0.1:8765/", "isEmbedded": False,
                    "colorScheme": "light"},
}


def _element(kind: str, **fields) -> Element:
    e = Element()
    w = getattr(e, kind)
    for k, v in fields.items():
        if k == "options" and kind == "button_group":
            for content in v:
                w.options.add(content=content)
        elif isinstance(v, list):
            getattr(w, k).extend(v)
        else:
            setattr(w, k, v)
    return e


def _attention_page() -> dict:
    """The Attention page's widgets as a run draws them after the visitor typed (text area:
    no default once the text is in the session; layer drawn with its default)."""
    main, side = 0, 1
    return {
        (side, 0): _element("selectbox", id=ID.format("36ec", "model"), label="Model",
                            default=0, options=["all-MiniLM-L6-v2 (embedded)", "Example"]),
        (side, 3): _element("radio", id=ID.format("48bf", "mode"), label="Input", default=0,
                            options=["One text", "Sentence pair"]),
        (side, 4): _element("text_area", id=ID.format("aff5", "a"), label="Text", default=""),
        (main, 4, 0, 0): _element("button_group", id=ID.format("d1d5", "view"), label="View",
                                  options=["Head view", "Model view", "Heatmap"], default=[0]),
        (main, 4, 1, 0): _element("selectbox", id=ID.format("8c8a", "layer"), label="Layer",
                                  default=0, options=[str(n) for n in range(1, 7)]),
        (main, 4, 2, 0): _element("selectbox", id=ID.format("f6ad", "head"), label="Head",
                                  default=0, options=[str(n) for n in range(1, 13)]),
        (main, 4, 3, 0): _element("radio", id=ID.format("fd89", "level"), label="Level",
                                  default=0, options=["token", "word"]),
        (main, 4, 4, 0): _element("checkbox", id=ID.format("ff96", "nospecial"),
                                  label="No specials"),
        (main, 10): _element("button", id=ID.format("4e56", "report-add"), label="Add"),
        (main, 11): _element("selectbox", id=ID.format("9999", "in-form"), label="F",
                             default=0, options=["x"], form_id="form"),
    }


def test_layer_change_sends_what_chromium_sent():
    held = {ID.format("aff5", "a"): ("string_value", "Visitor x says the apple was lovely.")}
    states = widget_states(_attention_page(), held)
    states[ID.format("8c8a", "layer")] = ("string_value", "3")
    query = with_param("a=Visitor+x+says+the+apple+was+lovely.", "layer", "3")
    msg = rerun_msg(states, RECORDED["pageScriptHash"], query, "http://127.0.0.1:8765/",
                    RECORDED["cachedMessageHashes"])
    got = MessageToDict(msg)["rerunScript"]
    # the frontend lists its widgets in the order they mounted; the server reads them by id
    by_id = {w["id"]: w for w in got.pop("widgetStates")["widgets"]}
    want = dict(RECORDED)
    assert by_id == {w["id"]: w for w in want.pop("widgetStates")["widgets"]}
    assert got == want


def test_widget_states_held_values_set_values_and_sidebar():
    page = _attention_page()
    held = {ID.format("aff5", "a"): ("string_value", "typed"),
            ID.format("8c8a", "layer"): ("string_value", "5")}
    page[(0, 4, 1, 0)].selectbox.set_value = True  # the run sets the layer: its value wins
    page[(0, 4, 1, 0)].selectbox.raw_value = "2"
    got = widget_states(page, held)
    assert got[ID.format("aff5", "a")] == ("string_value", "typed")
    assert got[ID.format("8c8a", "layer")] == ("string_value", "2")
    assert got[ID.format("d1d5", "view")] == ("string_array_value", ["Head view"])
    assert ID.format("4e56", "report-add") not in got and ID.format("9999", "in-form") not in got
    assert list(widget_states(page, held, sidebar_only=True)) == [
        ID.format("36ec", "model"), ID.format("48bf", "mode"), ID.format("aff5", "a")]


def test_button_trigger_and_segmented_control_change():
    msg = rerun_msg({ID.format("d1d5", "view"): ("string_array_value", ["Model view"])},
                    "h", "view=Model+view", "http://x/", trigger="$$ID-b-train")
    widgets = MessageToDict(msg)["rerunScript"]["widgetStates"]["widgets"]
    assert widgets == [{"id": ID.format("d1d5", "view"),
                        "stringArrayValue": {"data": ["Model view"]}},
                       {"id": "$$ID-b-train", "triggerValue": True}]
    assert with_param("a=x&view=Head+view&layer=3", "view", ["Model view"]) == \
        "a=x&layer=3&view=Model+view"
    auto = MessageToDict(rerun_msg({}, "h", "", "http://x/", fragment="f1"))["rerunScript"]
    assert (auto["fragmentId"], auto["isAutoRerun"]) == ("f1", True)


def _delta(path, element: Element) -> ForwardMsg:
    msg = ForwardMsg()
    msg.metadata.delta_path.extend(path)
    msg.delta.new_element.CopyFrom(element)
    return msg


def test_run_reads_exceptions_progress_media_and_component_data():
    run = Run()
    comp = Element()
    comp.bidi_component.component_name = "ui.common.attention.views.attention_views"
    comp.bidi_component.json = '{"labels": ["[CLS]", "apple", "[SEP]"], "ui": {"layer": 2}}'
    mixed = Element()
    mixed.bidi_component.component_name = "x.attention_head_view"
    mixed.bidi_component.mixed.json = '{"labels": ["river"]}'
    img = Element()
    img.imgs.imgs.add(url="/media/abc123.png")
    exc = Element()
    exc.exception.type, exc.exception.message = "ValueError", "bad"
    prog = Element()
    prog.progress.value = 10
    for i, e in enumerate([comp, mixed, img, exc, prog, prog]):
        add_delta(run, _delta([0, i], e))
    assert component_data(run.elements, "attention_views") == {
        "labels": ["[CLS]", "apple", "[SEP]"], "ui": {"layer": 2}}
    assert component_data(run.elements, "attention_head_view") == {"labels": ["river"]}
    assert run.media == {"/media/abc123.png"}
    assert run.exceptions == ["ValueError: bad"]
    assert run.progress == 2


def test_process_tree_and_first_views_apart():
    parent = {10: 1, 11: 10, 12: 11, 13: 1, 14: 13}
    assert _tree(parent, 10) == {10, 11, 12}
    assert _tree(parent, 1) == {1, 10, 11, 12, 13, 14}
    first, inter = split({"first view": [1.0, 2.0], "layer": [0.1], "open No-op": [0.3, 0.2],
                          "server: layer": [9.0]})
    assert first == [1.0, 2.0] and sorted(inter) == [0.1, 0.2, 0.3]


def test_page_assets_what_the_browser_fetches_first():
    html = """<link rel="shortcut icon" href="./favicon.png" />
    <link
      rel="preload"
      href="./static/media/Font.woff2"
      as="font"
    />
    <link rel="service-desc" href="./_stcore/agent/openapi.json" />
    <script>window.prerenderReady = false</script>
    <script type="module" crossorigin src="./static/js/index.abc.js"></script>
    <link rel="modulepreload" crossorigin href="./static/js/chunk.def.js">
    <link rel="stylesheet" crossorigin href="./static/css/index.css">
    <a href="https://streamlit.io">x</a>"""
    assert page_assets(html) == ["favicon.png", "static/media/Font.woff2",
                                 "static/js/index.abc.js", "static/js/chunk.def.js",
                                 "static/css/index.css", "_stcore/health",
                                 "_stcore/host-config"]


def test_cross_talk_and_the_fine_tunes_coverage():
    check_words("v1", "apple", ["river"], ["[CLS]", "apple", "pie", "[SEP]"])  # its own word only
    check_words("idle", None, ["river"], ["river"])  # a visitor without a word checks nothing
    with pytest.raises(CrossTalk, match="visitor v1: its word 'apple' is not in its head view"):
        check_words("v1", "apple", [], ["[CLS]", "pear"])
    with pytest.raises(CrossTalk, match=r"visitor v1 sees another visitor's word \['river'\]"):
        check_words("v1", "apple", ["river", "castle"], ["apple", "river"])
    # runs (start, end; None = still running) over the window [10, 20]
    assert coverage([(5.0, 12.0), (14.0, 15.0), (18.0, None)], 10.0, 20.0) == pytest.approx(0.5)
    assert coverage([], 10.0, 20.0) == 0.0
