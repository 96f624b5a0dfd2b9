"""URL state in AppTests: which widgets are bound to the URL, under which key, with which value.

A widget created with ``bind="query-params"`` carries its URL key in its proto
(``query_param_key``); the browser writes the widget's value under that key whenever it changes
(the Chromium tests watch that happen). A choice bound by ``ui.common.frame.url_select`` (its
key is its URL key; the page writes ``st.query_params`` itself) is known by its kept-choice
session slot. ``open_page`` starts a fresh session from a URL."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.common.frame.state import kept_choice_key

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def bound(at) -> dict:
    """URL key -> the widget's current value, for every URL-bound widget of the page."""
    out = {}
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        tabs = proto.tab_container if hasattr(proto, "tab_container") and proto.HasField(
            "tab_container") else None
        if tabs is not None and tabs.query_param_key:  # the selected tab's label
            labels = [c.proto.label for c in node.children.values()]
            out[tabs.query_param_key] = labels[tabs.default_tab_index]
            continue
        key = getattr(proto, "query_param_key", "")
        if key:
            out[key] = getattr(node, "value", None)
            continue
        key = getattr(node, "key", None)
        if key and kept_choice_key(key) in at.session_state:  # url_select's choices
            out[key] = getattr(node, "value", None)
    return out


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def open_page(page: str, monkeypatch, timeout: int = 240, **params) -> AppTest:
    """A fresh session opened on ``page`` (e.g. "noop") by a link with ``params``."""

    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in params.items():
        at.query_params[k] = str(v)
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at
