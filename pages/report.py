"""Report: the findings pinned from the pages -- reorder, remove, title and caption them; export
as one offline HTML file, as Markdown + PNG in a .zip, or as JSON that reopens here; and the
glossary of the terms the pages use."""

from __future__ import annotations

import streamlit as st

from analysis.errors import DataError
from analysis.report import MAX_JSON_BYTES, report_from_json, to_html, to_markdown_zip
from ui.common.errors import show_error
from ui.common.links import copy_link
from ui.common.findings import (example_finding, finding_preview, glossary_block, move, remove, report,
                       set_report)
from ui.common.settings import settings
from ui.common.sidebar import context

ctx = context()
rep = report()
st.title("Report")
st.caption("Collect findings from every page with their **Add to report** buttons, give them "
           "titles and captions here, and hand them over as one file that opens offline.")
copy_link("report_copy", note="A link opens the page's current view; the findings themselves "
          "stay in this browser session: download the report (HTML, .zip or JSON) to share them.")

if not rep.findings:
    st.info("No findings yet. Under each chart, table and view of the other pages, **Add to "
            "report** pins it here with its numbers, its link and its provenance (model, "
            "weights hash, data, settings). Or start with an example finding from the "
            "sidebar's text, or reopen a report saved as JSON below.", icon=":material/info:")
    if st.button("Add an example finding", key="report_example", icon=":material/add:"):
        rep.findings.append(example_finding(ctx))
        st.rerun()
else:
    rep.title = st.text_input("Report title", value=rep.title, key="report_title",
                              max_chars=200) or "Findings"
    for k, f in enumerate(list(rep.findings)):
        with st.container(border=True):
            c = st.columns([4.5, 1, 1.1, 1.3], vertical_alignment="bottom")
            f.title = c[0].text_input(f"Finding {k + 1}: title", value=f.title,
                                      key=f"report_t_{id(f)}", max_chars=200) or f.title
            c[1].button("Up", key=f"report_up_{id(f)}", icon=":material/arrow_upward:",
                        disabled=k == 0, on_click=move, args=(k, -1))
            c[2].button("Down", key=f"report_down_{id(f)}", icon=":material/arrow_downward:",
                        disabled=k == len(rep.findings) - 1, on_click=move, args=(k, 1))
            c[3].button("Remove", key=f"report_rm_{id(f)}", icon=":material/delete:",
                        on_click=remove, args=(k,))
            f.caption = st.text_area("Caption", value=f.caption, key=f"report_c_{id(f)}",
                                     max_chars=4000, height=80,
                                     placeholder="What this shows, in your words.")
            finding_preview(f)

    st.subheader("Export")
    e1, e2, e3 = st.columns(3)
    e1.download_button("Report (offline HTML)", data=lambda: to_html(rep).encode("utf-8"),
                       file_name="report.html", mime="text/html", key="report_html",
                       icon=":material/description:", on_click="ignore", width="stretch")
    e2.download_button("Markdown + PNG (.zip)", data=lambda: to_markdown_zip(rep),
                       file_name="report.zip", mime="application/zip", key="report_zip",
                       icon=":material/folder_zip:", on_click="ignore", width="stretch")
    e3.download_button("Report data (JSON, reopens here)", data=lambda: rep.to_json().encode(),
                       file_name="report.json", mime="application/json", key="report_json",
                       icon=":material/data_object:", on_click="ignore", width="stretch")

st.subheader("Reopen a saved report")
limit = min(MAX_JSON_BYTES, settings().max_upload_bytes or MAX_JSON_BYTES)
up = st.file_uploader("A report.json saved from this page (it replaces the findings above; "
                      "read in memory, never stored)", type=["json"], key="report_upload",
                      max_upload_size=max(1, -(-limit // 2**20)))
if up is not None and st.button("Open this report", key="report_open",
                                icon=":material/upload_file:"):
    try:
        set_report(report_from_json(up.getvalue(), max_bytes=limit))
    except DataError as exc:
        show_error(exc)
    else:
        st.rerun()

st.subheader("Glossary")
with st.expander("Every term the pages use, in everyday words", icon=":material/menu_book:"):
    glossary_block()
