"""A report as one self-contained offline HTML file (charts as inline SVG, tables, captions,
numbers, links, provenance; a Content-Security-Policy that forbids every network load) and as
Markdown with PNG images in a .zip (with the report's JSON, which reopens in the app)."""

from __future__ import annotations

import html
import io
import re
import zipfile
from urllib.parse import urljoin

from analysis.report.findings import Report, now
from analysis.report.provenance import package_versions
from analysis.report.raster import MAX_PIXELS, png_scale, render_pngs, svg_png  # noqa: F401

DECIMALS = 3
CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2rem auto;
max-width:1100px;padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem}h2{margin-top:2.4rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta{color:#666;font-size:.9rem}.caption{white-space:pre-wrap}
figure{margin:1rem 0;overflow-x:auto}figure svg{max-width:100%;height:auto}
table{border-collapse:collapse;font-size:.88rem;margin:.8rem 0}
th,td{border:1px solid #ddd;padding:2px 8px;text-align:left}td.n{text-align:right;
font-variant-numeric:tabular-nums}th{background:#f5f5f5}
dl.numbers{display:grid;grid-template-columns:max-content auto;gap:2px 16px}
dl.numbers dt{color:#555}dl.numbers dd{margin:0;font-weight:600}
.link{word-break:break-all;font-size:.88rem}.source{font-size:.82rem;color:#444}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def fmt(value, column: str = "") -> str:
    """A table cell as text: floats with :data:`DECIMALS` decimals (one in a percent or points
    column), the rest as they are."""
    if value is None:
        return ""
    if isinstance(value, float):
        places = 1 if str(column).endswith(("%", "(points)")) else DECIMALS
        return f"{value:.{places}f}"
    return str(value)


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _table(columns, rows, cls: str = "") -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(
            f"<td class='n'>{_e(fmt(v, c))}</td>" if isinstance(v, (int, float))
            and not isinstance(v, bool) else f"<td>{_e(fmt(v, c))}</td>"
            for c, v in zip(columns, r)) + "</tr>"
        for r in rows)
    return f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def absolute(link: str, base: str | None) -> str:
    """``link`` as an address a browser can open from the exported file: a relative link
    ("./importance?head=5", made without a public_url) joined to ``base``, the dashboard's
    address where the report was exported (issue 49: relative links were dead in the file);
    an absolute one, or one without a base, as it is."""
    if not link or not base or link.lower().startswith(("http://", "https://")):
        return link
    return urljoin(base if base.endswith("/") else base + "/", link)


def _link_html(link: str) -> str:
    if not link:
        return ""
    if link.lower().startswith(("http://", "https://")):
        return (f"<p class='link'>Open this view in the dashboard: "
                f"<a href='{_e(link)}'>{_e(link)}</a></p>")
    return (f"<p class='link'>Link to this view (relative to the dashboard's address): "
            f"<code>{_e(link)}</code></p>")


def _finding_html(k: int, f, base: str | None = None) -> str:
    parts = [f"<section class='finding' id='finding-{k}'><h2>{k}. {_e(f.title)}</h2>",
             f"<p class='meta'>{_e(f.page or 'Dashboard')} &middot; {_e(f.kind)} &middot; "
             f"added {_e(f.added)}</p>"]
    if f.caption:
        parts.append(f"<p class='caption'>{_e(f.caption)}</p>")
    if f.svg:
        parts.append(f"<figure>{f.svg}</figure>")  # rebuilt by clean_svg when the finding was made
    if f.reading:
        parts.append("<ul class='reading'>" + "".join(f"<li>{_e(s)}</li>" for s in f.reading)
                     + "</ul>")
    if f.numbers:
        parts.append("<dl class='numbers'>" + "".join(
            f"<dt>{_e(k2)}</dt><dd>{_e(v)}</dd>" for k2, v in f.numbers.items()) + "</dl>")
    if f.columns:
        parts.append(_table(f.columns, f.rows))
    parts.append(_link_html(absolute(f.link, base)))
    if f.source:
        parts.append(_table(["provenance", ""], list(f.source.items()), "source"))
    return "".join(parts) + "</section>"


def to_html(report: Report, versions: dict | None = None, exported: str | None = None,
            base: str | None = None) -> str:
    """The report as one HTML file that needs no network (nothing is loaded from anywhere);
    ``base``: the dashboard's address, which its relative links are joined to
    (:func:`absolute`)."""
    versions = versions if versions is not None else package_versions()
    body = "".join(_finding_html(k + 1, f, base) for k, f in enumerate(report.findings))
    if not report.findings:
        body = "<p>This report has no findings yet.</p>"
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{_e(report.title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{_e(report.title)}</h1><p class='meta'>{len(report.findings)} "
        f"finding(s) &middot; started {_e(report.created)} &middot; exported "
        f"{_e(exported or now())}</p></header>{body}"
        "<footer><h2>Software</h2>"
        + _table(["package", "version"], list(versions.items()), "source")
        + "</footer></body></html>")


def _md_text(text: str) -> str:
    """One line of visitor text for Markdown: HTML and link brackets escaped."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", str(text)).replace("\n", " ")


def _md_table(columns, rows) -> str:
    out = ["| " + " | ".join(_md_text(c) for c in columns) + " |",
           "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(_md_text(fmt(v, c)) for c, v in zip(columns, r)) + " |"
            for r in rows]
    return "\n".join(out)


def to_markdown(report: Report, images: dict[int, str],
                versions: dict | None = None, exported: str | None = None,
                base: str | None = None) -> str:
    """The report as Markdown; ``images`` maps a finding's number to its image file; ``base``
    as for :func:`to_html`."""
    versions = versions if versions is not None else package_versions()
    out = [f"# {_md_text(report.title)}", "",
           f"{len(report.findings)} finding(s), started {report.created}, exported "
           f"{exported or now()}.", ""]
    for k, f in enumerate(report.findings, 1):
        out += [f"## {k}. {_md_text(f.title)}", "",
                f"*{_md_text(f.page or 'Dashboard')}, {f.kind}, added {_md_text(f.added)}*", ""]
        if f.caption:
            out += [_md_text(f.caption), ""]
        if images.get(k):
            out += [f"![{_md_text(f.title)}]({images[k]})", ""]
        elif k in images:
            out += ["*(The chart could not be drawn within the server's limits; the HTML "
                    "export shows it.)*", ""]
        out += [f"- {_md_text(s)}" for s in f.reading] + ([""] if f.reading else [])
        out += [f"- **{_md_text(n)}**: {_md_text(v)}" for n, v in f.numbers.items()]
        out += [""] if f.numbers else []
        if f.columns:
            out += [_md_table(f.columns, f.rows), ""]
        if f.link:
            out += [f"Link to this view: <{absolute(f.link, base)}>", ""]
        if f.source:
            out += [_md_table(["provenance", ""], list(f.source.items())), ""]
    out += ["## Software", "", _md_table(["package", "version"], list(versions.items())), ""]
    return "\n".join(out)


def to_markdown_zip(report: Report, versions: dict | None = None,
                    timeout_s: float | None = None, base: str | None = None) -> bytes:
    """A .zip with report.md, images/finding-NN.png for every chart and report.json. The PNGs
    are drawn by :func:`analysis.report.raster.render_pngs` (bounded in pixels, memory and
    time, in a child process); a chart it could not draw is said so in report.md."""
    buf = io.BytesIO()
    charts = [k for k, f in enumerate(report.findings, 1) if f.svg]
    pngs = render_pngs([report.findings[k - 1].svg for k in charts], timeout_s=timeout_s)
    images = {}
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for k, png in zip(charts, pngs):
            images[k] = f"images/finding-{k:02d}.png" if png is not None else None
            if png is not None:
                z.writestr(images[k], png)
        z.writestr("report.md", to_markdown(report, images, versions, base=base))
        z.writestr("report.json", report.json_text())
    return buf.getvalue()
