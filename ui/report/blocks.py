"""The Report page's blocks: one finding's editor and preview, the exports, the reopen box.

Everything that came from a report file, a page or a URL (titles, captions, numbers, table
cells, links, provenance) is shown as plain text: in text boxes, in data frames (never
Markdown), or through ``plain``; charts are the cleaned SVG as an image. Numbers are a
two-column table rather than ``st.metric`` (whose label and value render Markdown: an image
or a link in a shared report would load or link)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.core.errors import DataError
from analysis.report import MAX_JSON_BYTES, Finding, to_html, to_markdown_zip
from analysis.report.study import STUDY, Inputs
from ui.common.exports.download import download_button
from ui.common.errors import plain, show_error
from ui.common.exports.findings import move, remove
from ui.server.settings import settings
from ui.report import state as K


def numbers_frame(numbers: dict) -> pd.DataFrame:
    """A finding's numbers as a table of text (label, value)."""
    return pd.DataFrame({"number": [str(k) for k in numbers],
                         "value": [str(v) for v in numbers.values()]})


def finding_preview(f: Finding) -> None:
    """The finding as the report will show it: chart, reading, numbers, table, link, source."""
    if f.svg:
        st.image(f.svg, width="content")
    for line in f.reading:
        st.markdown(f"- {plain(line)}")
    if f.numbers:
        st.dataframe(numbers_frame(f.numbers), hide_index=True, key=K.finding_key("numbers", f))
    if f.columns:
        st.dataframe(pd.DataFrame(f.rows, columns=f.columns), hide_index=True,
                     key=K.finding_key("table", f))
    if f.link:
        st.caption(plain(f"Link: {f.link}"))
    if f.source:
        st.caption(plain(" · ".join(f"{k}: {v}" for k, v in f.source.items())))


def finding_editor(k: int, f: Finding, n: int) -> None:
    """Title, move up / down, remove and caption of finding ``k`` of ``n``, then its preview."""
    with st.container(border=True):
        c = st.columns([4.5, 1, 1.1, 1.3], vertical_alignment="bottom")
        f.title = c[0].text_input(f"Finding {k + 1}: title", value=f.title,
                                  key=K.finding_key("title", f), max_chars=200) or f.title
        c[1].button("Up", key=K.finding_key("up", f), icon=":material/arrow_upward:",
                    disabled=k == 0, on_click=move, args=(k, -1))
        c[2].button("Down", key=K.finding_key("down", f), icon=":material/arrow_downward:",
                    disabled=k == n - 1, on_click=move, args=(k, 1))
        c[3].button("Remove", key=K.finding_key("remove", f), icon=":material/delete:",
                    on_click=remove, args=(k,))
        f.caption = st.text_area("Caption", value=f.caption, key=K.finding_key("caption", f),
                                 max_chars=4000, height=80,
                                 placeholder="What this shows, in your words.")
        finding_preview(f)


def app_address(url: str | None) -> str | None:
    """The dashboard's own address from this page's (``st.context.url``: "http://host:8501/
    report" -> "http://host:8501/"; a path prefix kept)."""
    if not url:
        return None
    head, _, last = url.rstrip("/").rpartition("/")
    return f"{head}/" if last == K.URL_PATH and "//" in head else url


def exports(rep) -> None:
    """The three downloads, made when clicked (``ui.common.exports.download``: a click during a
    rerun still gets its file). The PNG images of the .zip are bounded in
    pixels and drawn one at a time server-wide (``analysis.report.export.svg_png``)."""
    # the links in the files open the dashboard: its public address (the settings), else the
    # one this browser reached it at (relative links were dead in a file: issue 49)
    base = settings().public_url or app_address(st.context.url)
    e1, e2, e3 = st.columns(3)
    with e1:
        download_button("Report (offline HTML)", lambda: to_html(rep, base=base), "report.html",
                        "text/html", K.HTML, width="stretch")
    with e2:
        download_button("Markdown + PNG (.zip)", lambda: to_markdown_zip(rep, base=base),
                        "report.zip", "application/zip", K.ZIP, width="stretch")
    with e3:
        download_button("Report data (JSON, reopens here)", rep.json_text, "report.json",
                        "application/json", K.JSON, width="stretch")


def upload_limit() -> int:
    """The bytes a reopened report may have: the reader's cap, lowered by the demo's."""
    return min(MAX_JSON_BYTES, settings().max_upload_bytes or MAX_JSON_BYTES)


def reopen() -> None:
    """The box that reopens a saved report.json (read in memory; the reader checks its cap
    on the bytes it gets, whatever reached the server)."""
    limit = upload_limit()
    up = st.file_uploader("A report.json saved from this page (it replaces the findings "
                          "above; read in memory, never stored)", type=["json"], key=K.UPLOAD,
                          max_upload_size=max(1, -(-limit // 2**20)))
    if up is not None and st.button("Open this report", key=K.OPEN,
                                    icon=":material/upload_file:"):
        try:
            K.set_report(STUDY.run(Inputs(up.getvalue(), max_bytes=limit)))  # in this run
        except DataError as exc:
            show_error(exc)
        else:
            st.rerun()
