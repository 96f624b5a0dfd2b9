"""Report: the findings pinned from the pages -- reorder, remove, title and caption them; export
as one offline HTML file, as Markdown + PNG in a .zip, or as JSON that reopens here; and the
glossary of the terms the pages use. Blocks: ui/report/blocks.py; keys: ui/report/state.py."""

from __future__ import annotations

import streamlit as st

from ui.common.exports.findings import example_finding
from ui.common.frame.explain import glossary_block
from ui.common.errors import plain
from ui.common.exports.keep import keep_report, kept_note
from ui.common.frame.links import copy_link
from ui.common.frame.sidebar import context
from ui.report import blocks as B
from ui.report import state as K


def render() -> None:
    """The page, top to bottom (pages/report.py calls it on every run)."""
    ctx = context()
    rep = K.report()
    st.title("Report")
    st.caption("Collect findings from every page with their **Add to report** buttons, give them "
               "titles and captions here, and hand them over as one file that opens offline.")
    copy_link(K.COPY, note="A link opens the page's current view; the findings themselves "
              "stay in this browser (a reload keeps them): download the report (HTML, .zip or "
              "JSON) to share them.")
    if kept_note():
        st.caption(plain(kept_note()))

    if not rep.findings:
        st.info("No findings yet. Under each chart, table and view of the other pages, **Add to "
                "report** pins it here with its numbers, its link and its provenance (model, "
                "weights hash, data, settings). Or start with an example finding from the "
                "sidebar's text, or reopen a report saved as JSON below.", icon=":material/info:")
        if st.button("Add an example finding", key=K.EXAMPLE, icon=":material/add:"):
            rep.findings.append(example_finding(ctx))
            st.rerun()
    else:
        rep.title = st.text_input("Report title", value=rep.title, key=K.TITLE,
                                  max_chars=200) or "Findings"
        for k, f in enumerate(list(rep.findings)):
            B.finding_editor(k, f, len(rep.findings))
        st.subheader("Export")
        B.exports(rep)

    st.subheader("Reopen a saved report")
    B.reopen()
    keep_report(K.KEEP)  # this run's edits, kept in the browser before a reload can lose them

    st.subheader("Glossary")
    with st.expander("Every term the pages use, in everyday words", icon=":material/menu_book:"):
        glossary_block()
