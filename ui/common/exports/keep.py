"""The pinned findings kept in the visitor's own browser, so that a reload (a new Streamlit
session) finds them again.

Where: the browser's ``localStorage`` of the app's address, under :data:`STORAGE_KEY`. Each
visitor's browser holds only their own report, so one visitor never sees another's findings,
and nothing is written on the server. What comes back from the browser is visitor input like an
uploaded report: it goes through ``analysis.report.report_from_json`` (checked, capped at
:data:`MAX_KEPT_BYTES`), and a report that does not load is dropped with one plain line on the
Report page; no text of it reaches the page as HTML.

How: :func:`keep_report` draws an invisible component (no height). A new session first asks the
browser for what it kept (``restore``: a browser that kept a report answers with a trigger, the
session takes the report when it has none of its own yet, and the page reruns; a browser that
kept nothing does not answer, so a first visit is not rerun); after that, whenever the
report differs from what the browser was last sent (a finding added, edited, moved or removed,
a report reopened), the run sends it (``save``); an empty report clears the browser's copy.
:func:`keep_report` runs at the start of every run (``app.py``: what an earlier run changed)
and right after a change in the page (``add_button``, the Report page), each call site under its
own key, so that a reload straight after a click still finds the finding."""

from __future__ import annotations

import json
import secrets

import streamlit as st

from analysis.core.errors import DataError
from analysis.report import report_from_json
from ui.common.exports import state
from ui.common.exports.state import report, set_report

STORAGE_KEY = "attention-dashboard.report"
MAX_KEPT_BYTES = 5 * 2**20  # about what a browser's localStorage holds for one address
TOO_LARGE = ("The report is too large to keep in this browser across reloads: download it as "
             "JSON below to keep it.")

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const key = String(data.storage_key);
  if (data.restore === data.nonce && globalThis.__dashboardKeptAsked !== data.nonce) {
    globalThis.__dashboardKeptAsked = data.nonce;  // ask once per session, not per render
    let text = "";
    try { text = window.localStorage.getItem(key) || ""; } catch (e) { text = ""; }
    // nothing kept: no answer, so a first visit is not rerun (a rerun would restart its job)
    if (text) setTriggerValue("kept", { nonce: data.nonce, text });
  }
  if (typeof data.save === "string" && globalThis.__dashboardKeptSaved !== data.stamp) {
    globalThis.__dashboardKeptSaved = data.stamp;
    try {
      if (data.save) window.localStorage.setItem(key, data.save);
      else window.localStorage.removeItem(key);
    } catch (e) {
      setTriggerValue("refused", data.stamp);  // over the browser's quota: said on the Report page
    }
  }
}
"""
_COMPONENT = None


def _component():
    global _COMPONENT
    if _COMPONENT is None:
        _COMPONENT = st.components.v2.component("keep_report", js=_JS)
    return _COMPONENT


def signature(rep) -> str:
    """What the browser was last sent, in short: changes with any edit a visitor can make
    (title, order, captions, titles, numbers, removal, a reopened report)."""
    parts = [rep.title, rep.created]
    for f in rep.findings:
        parts += [str(id(f)), f.title, f.caption, json.dumps(f.numbers, sort_keys=True),
                  str(len(f.rows)), str(len(f.svg))]
    return str(hash("\x00".join(parts)))


def _restored(key: str) -> None:
    """The browser's answer to ``restore``: its kept report, taken when this session has no
    findings of its own yet."""
    answer = getattr(st.session_state[key], "kept", None)
    if not isinstance(answer, dict) or answer.get("nonce") != st.session_state.get(
            state.KEPT_NONCE):
        return
    text = answer.get("text")
    if not isinstance(text, str) or not text or report().findings:
        return
    try:
        rep = report_from_json(text, max_bytes=MAX_KEPT_BYTES)
    except DataError as exc:
        st.session_state[state.KEPT_NOTE] = f"The report kept in this browser was not " \
                                            f"reopened: {exc}"
        return
    set_report(rep)  # the next run sends it back (a run before the answer may have cleared it)


def _refused(key: str) -> None:
    st.session_state[state.KEPT_NOTE] = TOO_LARGE


def keep_report(key: str) -> None:
    """Ask the browser for its kept report (a new session), or send it the report when it
    changed since it was last sent (see the module's text). ``key``: this call site's."""
    nonce = st.session_state.setdefault(state.KEPT_NONCE, secrets.token_hex(8))
    data: dict = {"storage_key": STORAGE_KEY, "nonce": nonce}
    if not st.session_state.get(state.KEPT_ASKED):
        # asked once, in the session's first run; the browser answers only when it kept a
        # report. Until this session's report changes nothing is sent, so the browser's copy
        # is not cleared before its answer arrives.
        data["restore"] = nonce
        st.session_state[state.KEPT_ASKED] = True
        st.session_state[state.KEPT_SENT] = signature(report())
    else:
        rep = report()
        stamp = signature(rep)
        if stamp != st.session_state.get(state.KEPT_SENT):
            text = rep.json_text() if rep.findings else ""
            if len(text.encode("utf-8")) > MAX_KEPT_BYTES:
                st.session_state[state.KEPT_NOTE] = TOO_LARGE
            else:
                data.update(save=text, stamp=f"{nonce}-{stamp}")
                if st.session_state.get(state.KEPT_NOTE) == TOO_LARGE:  # it fits again
                    del st.session_state[state.KEPT_NOTE]
            st.session_state[state.KEPT_SENT] = stamp
    _component()(key=key, data=data, on_kept_change=lambda: _restored(key),
                 on_refused_change=lambda: _refused(key))


def kept_note() -> str | None:
    """Why the browser does not keep this report (too large, or a kept one did not load)."""
    return st.session_state.get(state.KEPT_NOTE)
