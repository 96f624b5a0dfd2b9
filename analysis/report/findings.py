"""A findings report: what a visitor pinned from the pages (a chart, a table or a view), with
its numbers, the link that reopens it, a caption and where it came from, and its JSON form.

The JSON written by :meth:`Report.to_json` reopens with :func:`report_from_json`, which trusts
nothing: size and count caps, types checked, strings cut, charts rebuilt by
:func:`analysis.report.svg.clean_svg`, links kept only when they are http(s) or relative."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from analysis.core.corpus.jsonsafe import JSONError, loads
from analysis.core.errors import DataError
from analysis.core.study import Field, Schema, StudyResult
from analysis.report.svg import clean_svg

FORMAT = "attention-dashboard-report"
VERSION = 1
KINDS = ("chart", "table", "view")
MAX_JSON_BYTES = 25 * 2**20
MAX_FINDINGS = 60
MAX_TITLE, MAX_CAPTION, MAX_TEXT = 200, 4000, 2000
MAX_ROWS, MAX_COLUMNS, MAX_NUMBERS, MAX_CELL = 500, 40, 40, 300
_LINK = re.compile(r"^(https?://|\./|/|\?)[^\s<>\"']*$", re.I)


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _cell(value):
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    return str(value)[:MAX_CELL]


def safe_link(link) -> str:
    """The link if it is an http(s), absolute-path or relative app link; else ''."""
    link = str(link or "").strip()[:MAX_TEXT * 4]
    return link if _LINK.match(link) else ""


@dataclass
class Finding:
    """One pinned result. ``numbers``: label -> the number as shown (text); ``table``: columns
    and rows; ``svg``: the chart as a cleaned SVG; ``source``: page, model, weights hash, data,
    settings (label -> text)."""

    title: str
    kind: str = "chart"
    caption: str = ""
    page: str = ""
    link: str = ""
    numbers: dict = field(default_factory=dict)
    columns: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    svg: str = ""
    reading: list = field(default_factory=list)
    source: dict = field(default_factory=dict)
    added: str = field(default_factory=now)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise DataError(f"A finding's kind must be one of {', '.join(KINDS)}.")
        self.title = str(self.title or "Untitled finding")[:MAX_TITLE]
        self.caption = str(self.caption or "")[:MAX_CAPTION]
        self.page = str(self.page or "")[:MAX_TITLE]
        self.link = safe_link(self.link)
        self.numbers = {str(k)[:MAX_TITLE]: str(v)[:MAX_CELL]
                        for k, v in list(dict(self.numbers or {}).items())[:MAX_NUMBERS]}
        self.columns = [str(c)[:MAX_CELL] for c in list(self.columns or [])[:MAX_COLUMNS]]
        width = len(self.columns)
        self.rows = [[_cell(v) for v in list(r)[:width]] + [None] * (width - len(list(r)[:width]))
                     for r in list(self.rows or [])[:MAX_ROWS]]
        self.reading = [str(s)[:MAX_TEXT] for s in list(self.reading or [])[:20]]
        self.source = {str(k)[:MAX_TITLE]: str(v)[:MAX_TEXT]
                       for k, v in list(dict(self.source or {}).items())[:MAX_NUMBERS]}
        self.svg = clean_svg(self.svg) if self.svg else ""
        self.added = str(self.added or "")[:40]

    @classmethod
    def from_frame(cls, title: str, df, **kw) -> "Finding":
        """A table finding from a pandas DataFrame (first :data:`MAX_ROWS` rows)."""
        head = df.head(MAX_ROWS)
        return cls(title=title, kind=kw.pop("kind", "table"),
                   columns=[str(c) for c in head.columns],
                   rows=head.astype(object).where(head.notna(), None).values.tolist(), **kw)


@dataclass
class Report(StudyResult):
    """The findings of a report; its JSON (the page's "Report data" download, the .zip's
    report.json, the copy kept in the browser): :data:`SCHEMA`; it reopens with
    :meth:`from_json` (:func:`report_from_json` from the file's bytes)."""

    SCHEMA = Schema((
        Field("format", f"always '{FORMAT}'"),
        Field("version", "the report format's version"),
        Field("title", "the report's title"),
        Field("created", "when it was started (UTC)"),
        Field("findings", "each pinned result: {title, kind (chart, table or view), caption, "
                          "page, link, numbers: label -> the number as shown, columns, rows, "
                          "svg (the chart, cleaned), reading, source: page, model, weights "
                          "hash, data, settings, added}"),
    ))

    title: str = "Findings"
    findings: list = field(default_factory=list)
    created: str = field(default_factory=now)

    def json_fields(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "title": self.title,
                "created": self.created, "findings": [asdict(f) for f in self.findings]}

    def json_text(self) -> str:
        """The JSON as the saved file's text (indented, non-ASCII kept)."""
        return json.dumps(self.to_json(), ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, data) -> "Report":
        """A report from its parsed JSON, trusting nothing (the module docstring): DataError
        with one plain line for anything that is not a report of this format."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError("The file is not a report saved by this dashboard.")
        if data.get("version") != VERSION:
            raise DataError(f"The report's format version {str(data.get('version'))[:20]} is "
                            f"not supported (this dashboard reads version {VERSION}).")
        items = data.get("findings")
        if not isinstance(items, list):
            raise DataError("The report has no list of findings.")
        if len(items) > MAX_FINDINGS:
            raise DataError(f"The report has {len(items)} findings; at most {MAX_FINDINGS} "
                            "load.")
        title = data.get("title") if isinstance(data.get("title"), str) else "Findings"
        created = data.get("created") if isinstance(data.get("created"), str) else now()
        return cls(title=title[:MAX_TITLE], created=created[:40],
                   findings=[_finding(f, k + 1) for k, f in enumerate(items)])


def _finding(raw, k: int) -> Finding:
    if not isinstance(raw, dict):
        raise DataError(f"Finding {k} in the report is not an object.")
    kw = {}
    for name, kind in (("title", str), ("kind", str), ("caption", str), ("page", str),
                       ("link", str), ("svg", str), ("added", str), ("numbers", dict),
                       ("source", dict), ("columns", list), ("rows", list), ("reading", list)):
        value = raw.get(name)
        if value is None:
            continue
        if not isinstance(value, kind):
            raise DataError(f"Finding {k} in the report has a bad '{name}'.")
        kw[name] = value
    if any(not isinstance(r, list) for r in kw.get("rows", [])):
        raise DataError(f"Finding {k} in the report has a bad table.")
    return Finding(**{"title": "", **kw})


def report_from_json(data: bytes | str, max_bytes: int = MAX_JSON_BYTES) -> Report:
    """A report from its JSON text (as written by :meth:`Report.json_text`), checked;
    DataError with one plain line otherwise. ``max_bytes``: the size cap (a server may set a
    lower one)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    max_bytes = min(max_bytes, MAX_JSON_BYTES)
    if len(data) > max_bytes:
        mb = f"{max_bytes / 2**20:.1f}".rstrip("0").rstrip(".")
        raise DataError(f"The report file is larger than {mb} MB.")
    try:
        raw = loads(data, "The report file")
    except JSONError as exc:
        if "not valid JSON" in str(exc) or "not UTF-8" in str(exc):
            raise DataError("The file is not a report saved by this dashboard (not JSON).") \
                from None
        raise
    return Report.from_json(raw)
