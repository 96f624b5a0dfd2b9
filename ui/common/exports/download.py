"""The one download button of every page: the file is made when clicked and saved by the
browser from the bytes it is handed, never fetched from a server-side file id.

Why not ``st.download_button``: its file (given or made on a click, ``data=callable``) lives
under an id that Streamlit drops at the end of the next run of the page
(``MediaFileManager.remove_orphaned_files``: ids the newer run did not register). A click that
still holds the old id -- the page is rerunning after an edit (Report: a caption, Tab, then
"Report (offline HTML)") -- gets "Deferred file ... not found" on the server and, in the
browser, no file (tests/test_download_browser.py shows it on the real Report page).

Here a click sends a trigger with a fresh nonce; the button's own fragment reruns, the
callback makes the bytes (``make()``), and the run hands them to the browser under that nonce
(base64 in the component's data; the slot is emptied once sent). The browser saves them as a
Blob. The nonce belongs to the click, not to a run, so no rerun can orphan it; a failure is
said in plain words beside the button, which stays to try again; a click nobody answered
says so after a minute (``download/download.js``)."""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

import streamlit as st

from analysis.core.errors import DataError, InputError
from ui.common.exports.state import download_answer_key

_LOG = logging.getLogger(__name__)
_JS = Path(__file__).with_name("download") / "download.js"
_CSS = """
.dl-root{display:inline-flex;flex-wrap:wrap;align-items:center;gap:6px;max-width:100%;
 font-family:inherit}
.dl-button{font:inherit;font-size:.9rem;line-height:1.6;padding:3px 12px;border-radius:8px;
 cursor:pointer;border:1px solid rgba(49,51,63,.25);background:transparent;color:inherit;
 white-space:nowrap;max-width:100%;overflow:hidden;text-overflow:ellipsis}
.dl-root.dl-stretch,.dl-stretch .dl-button{width:100%}
.dl-button:hover{border-color:#3b6fd8;color:#3b6fd8}
.dl-root[data-state=waiting] .dl-button{opacity:.7;cursor:progress}
.dl-said{font-size:.8rem;opacity:.8;white-space:normal}
.dl-root[data-state=failed] .dl-said,.dl-root[data-state=late] .dl-said{color:#bd4043;opacity:1}
"""
TEXTS = {
    "waiting": "Preparing the file…",
    "failed": "The file could not be made.",
    "again": "Click the button to try again.",
    "late": "The file has not arrived yet (the page may be busy). Click the button to try again.",
}
WAIT_S = 60  # a click unanswered this long says so (the answer is still saved if it comes)
_COMPONENT = None


class ExportError(Exception):
    """A file could not be made (``ui.common.exports.export``: a chart that could not be
    drawn); its message is for visitors and is shown beside the button."""


def _component():
    global _COMPONENT
    if _COMPONENT is None:
        _COMPONENT = st.components.v2.component("download_button", js=_JS.read_text(),
                                                css=_CSS)
    return _COMPONENT


def file_bytes(data) -> bytes:
    """What ``make()`` returned as bytes (text as UTF-8)."""
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"a download must be bytes or text, not {type(data).__name__}")


def answer(nonce: str, make: Callable) -> dict:
    """The browser's answer to the click ``nonce``: the file's bytes (base64), or the reason
    in plain words why there is none (an error's own message when it is one for visitors,
    i.e. ``ExportError`` / ``InputError`` / ``DataError``; else its kind, logged in full)."""
    try:
        raw = file_bytes(make())
    except (ExportError, InputError, DataError) as exc:
        return {"nonce": nonce, "error": str(exc)}
    except Exception as exc:  # any failure: said beside the button, never nothing
        _LOG.exception("download failed")
        return {"nonce": nonce, "error": f"The file could not be made ({type(exc).__name__})."}
    return {"nonce": nonce, "b64": base64.b64encode(raw).decode("ascii")}


def _asked(key: str, make: Callable) -> None:
    """The click's callback: make the file now and keep it for the button's run."""
    nonce = getattr(st.session_state[key], "ask", None)
    if isinstance(nonce, str) and nonce:
        st.session_state[download_answer_key(key)] = answer(nonce, make)


@dataclass(frozen=True)
class Download:
    """One button: ``label``, the file ``make()`` returns (bytes or text), its name and MIME
    type, the widget ``key``, an optional tooltip ``help``."""

    label: str
    make: Callable
    file_name: str
    mime: str
    key: str
    help: str | None = None


def _draw(d: Download, stretch: bool) -> None:
    data = {"key": d.key, "label": d.label, "file_name": d.file_name, "mime": d.mime,
            "texts": TEXTS, "help": d.help or "", "stretch": stretch, "wait_ms": int(1000 * WAIT_S),
            "answer": st.session_state.pop(download_answer_key(d.key), None)}
    _component()(key=d.key, data=data, on_ask_change=partial(_asked, d.key, d.make),
                 width="stretch" if stretch else "content", height="content")


@st.fragment
def _buttons(row: tuple[Download, ...], note: str | None, stretch: bool) -> None:
    if len(row) == 1 and not note:
        _draw(row[0], stretch)
        return
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        for d in row:
            _draw(d, stretch)
        if note:
            st.caption(note)


def download_button(label: str, make: Callable, file_name: str, mime: str, key: str,
                    width: str = "content", help: str | None = None) -> None:
    """A button saving the file ``make()`` returns (bytes or text) as ``file_name``; ``make``
    runs only when the button is clicked (in the button's own fragment: the page does not
    rerun). ``label``, ``help`` (the button's tooltip) and ``file_name`` reach the browser as
    text; ``width`` is "content" or "stretch"."""
    _buttons((Download(label, make, file_name, mime, key, help),), None, width == "stretch")


def download_row(row: list[Download], note: str | None = None) -> None:
    """Buttons side by side (one fragment: a click reruns only this row), then ``note``."""
    _buttons(tuple(row), note, False)
