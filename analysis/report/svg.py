"""Charts in a report are SVG text (rendered by vl-convert). Before an SVG goes into a report --
and above all when it comes back from an uploaded report JSON -- it is rebuilt from a parse with
only the elements and attributes a chart needs: no script, no event handler, no link, no
external reference (a ``url(...)`` may only name a fragment of the same SVG, ``url(#clip1)``),
no style sheet. Anything else is dropped; text content is escaped on output."""

from __future__ import annotations

import re
from xml.etree.ElementTree import Element, SubElement, tostring

from defusedxml.ElementTree import fromstring
from defusedxml.common import DefusedXmlException

from analysis.errors import DataError

SVG_NS = "http://www.w3.org/2000/svg"
MAX_SVG_CHARS = 4_000_000
ELEMENTS = {"svg", "g", "path", "rect", "line", "text", "tspan", "circle", "ellipse",
            "polyline", "polygon", "title", "desc", "defs", "clipPath", "linearGradient",
            "radialGradient", "stop"}
ATTRIBUTES = {"aria-hidden", "aria-label", "aria-roledescription", "class", "d", "display",
              "fill", "fill-opacity", "font-family", "font-size", "font-style", "font-weight",
              "height", "opacity", "pointer-events", "role", "stroke", "stroke-opacity",
              "stroke-width", "stroke-dasharray", "stroke-dashoffset", "stroke-linecap",
              "stroke-linejoin", "stroke-miterlimit", "text-anchor", "dominant-baseline",
              "transform", "version", "viewBox", "width", "x", "y", "x1", "x2", "y1", "y2",
              "cx", "cy", "r", "rx", "ry", "dx", "dy", "points", "id", "clip-path",
              "offset", "stop-color", "stop-opacity", "gradientUnits", "gradientTransform",
              "fx", "fy", "letter-spacing"}
_URL = re.compile(r"url\(([^)]*)\)", re.I)
_FRAGMENT = re.compile(r"^\s*['\"]?#[A-Za-z0-9_.:-]+['\"]?\s*$")


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def _safe_value(value: str) -> bool:
    low = value.lower()
    if "javascript:" in low or "expression(" in low or "@import" in low:
        return False
    return all(_FRAGMENT.match(m) for m in _URL.findall(value))


def _copy(src, dst_parent) -> None:
    for child in src:
        tag = _local(child.tag)
        if tag not in ELEMENTS or tag == "svg":
            continue
        node = SubElement(dst_parent, tag, _attributes(child))
        node.text = child.text
        _copy(child, node)
        node.tail = child.tail if tag in ("tspan",) else None


def _attributes(el) -> dict:
    out = {}
    for name, value in el.attrib.items():
        local = _local(name)
        if "}" in name or local not in ATTRIBUTES or not _safe_value(value):
            continue
        out[local] = value
    return out


def clean_svg(text: str) -> str:
    """``text`` rebuilt as a safe, self-contained SVG (see the module's text); a DataError when
    it is not an SVG document or is too large."""
    if not isinstance(text, str) or not text.strip():
        raise DataError("A chart in the report is empty.")
    if len(text) > MAX_SVG_CHARS:
        raise DataError("A chart in the report is too large.")
    try:
        root = fromstring(text)
    except (DefusedXmlException, SyntaxError, ValueError) as exc:
        raise DataError("A chart in the report is not a readable SVG image.") from exc
    if _local(root.tag) != "svg":
        raise DataError("A chart in the report is not an SVG image.")
    out = Element("svg", {"xmlns": SVG_NS, **_attributes(root)})
    _copy(root, out)
    return tostring(out, encoding="unicode")
