"""The exports' state, named once: the download buttons' keys and answer slots, the findings
report in the session (:func:`report`, :func:`set_report`) and its copy kept in the visitor's
browser (``ui.common.exports.keep``)."""

from __future__ import annotations

import streamlit as st

from analysis.report import Report

# -- the report ---------------------------------------------------------------------------------
REPORT = "_report"                # the pinned findings (analysis.report.Report)
# the report kept in the visitor's browser (ui.common.exports.keep)
KEPT_NONCE = "_kept_nonce"        # this session's ask (the browser answers it once)
KEPT_ASKED = "_kept_asked"        # the browser answered: saving may begin
KEPT_SENT = "_kept_sent"          # the signature of the report the browser was last sent
KEPT_NOTE = "_kept_note"          # why the browser does not keep it (one line), or absent
KEEP_RUN, KEEP_ADD, KEEP_PAGE = "keep_report_run", "keep_report_add", "keep_report_page"
# -- keys with a part: TEMPLATE.format(part) -----------------------------------------------
REPORT_ADD, FINDING_TABLE = "report-add-{}", "report_df_{}"


def report() -> Report:
    """This session's report (created empty on first use)."""
    rep = st.session_state.get(REPORT)
    if not isinstance(rep, Report):
        rep = st.session_state[REPORT] = Report()
    return rep


def set_report(rep: Report) -> None:
    st.session_state[REPORT] = rep


# -- downloads ----------------------------------------------------------------------------------


def download_answer_key(key: str) -> str:
    """The session slot holding the file a click on download button ``key`` asked for, until
    the button's next run hands it to the browser (``ui.common.exports.download``)."""
    return f"_download_answer_{key}"


def download_keys(key: str) -> tuple[str, str, str]:
    """The PNG, SVG and CSV download buttons' keys of a chart whose key is ``key``."""
    return f"{key}-png", f"{key}-svg", f"{key}-csv"
