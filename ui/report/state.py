"""Every session-state key of the Report page, named once. The page has no URL parameter of its
own (its findings live in the session, never in a link); the report itself is kept under
``ui.common.exports.state``' key (every page's "Add to report" writes there)."""

from __future__ import annotations

from ui.common.exports.state import KEEP_PAGE, report, set_report  # noqa: F401 (read / replace)

TITLE = "report_title"          # the report's title box
EXAMPLE = "report_example"      # "Add an example finding"
COPY = "report_copy"            # the Copy link button
HTML, ZIP, JSON = "report_html", "report_zip", "report_json"  # the three downloads
UPLOAD, OPEN = "report_upload", "report_open"  # reopen a saved report.json
PARAMS: tuple[str, ...] = ()    # URL parameters: none
KEEP = KEEP_PAGE                # the report kept in the browser after this page's edits


_FINDING = {"title": "t", "caption": "c", "up": "up", "down": "down", "remove": "rm",
            "numbers": "num", "table": "df"}


def finding_key(kind: str, finding) -> str:
    """The key of one finding's widget (``kind``: one of title, caption, up, down, remove,
    numbers, table), stable while the finding exists."""
    return f"report_{_FINDING[kind]}_{id(finding)}"


URL_PATH = "report"  # the page's url_path (app.py): the dashboard's address is what precedes it
