"""Charts in a report are SVG text (rendered by vl-convert). Before an SVG goes into a report --
and above all when it comes back from an uploaded report JSON -- it is rebuilt from a parse with
only the elements and attributes a chart needs: no script, no event handler, no link, no
external reference, no style sheet. Anything else is dropped; text content is escaped on output.

Attribute values are not searched for bad words (CSS escapes such as ``\75 rl(``, comments
``u/**/rl(`` and functions such as ``image-set(`` defeat any such search): every value must be
made of allowed pieces only (:func:`safe_value`): numbers, lengths, colours (``#hex``, a name,
``rgb()``/``rgba()``/``hsl()``/``hsla()`` of numbers), path and point data, transform functions
of numbers, plain font names, and ``url(#id)`` naming a fragment of the same SVG. A value with a
backslash, a slash, a colon, a semicolon, an ``@``, a brace or any other function is dropped.
Labels for screen readers (``aria-label``...) are plain text and kept as such. Nesting deeper
than :data:`MAX_DEPTH` or more than :data:`MAX_ELEMENTS` elements is refused; the root's
``width`` and ``height`` must be plain pixel numbers (what :func:`raster_size` bounds)."""

from __future__ import annotations

import re
from xml.etree.ElementTree import Element, SubElement, tostring

from defusedxml.ElementTree import fromstring
from defusedxml.common import DefusedXmlException

from analysis.core.errors import DataError

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
TEXT_ATTRIBUTES = {"aria-label", "aria-roledescription"}  # plain text, never CSS or a URL
MAX_DEPTH = 64          # a vl-convert chart nests about 10 deep
MAX_ELEMENTS = 300_000  # a 40,000-cell heatmap with its axes: about 45,000
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_CLASS = re.compile(r"^[A-Za-z0-9_ -]*$")
_FUNC = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\(([^()]*)\)")
_NUMBERS = re.compile(r"^[0-9eE.,%\s+-]*$")
_URL_ARG = re.compile(r"^\s*(['\"]?)#[A-Za-z_][A-Za-z0-9_.-]*\1\s*$")
_PLAIN = re.compile(r"^[A-Za-z0-9#.,%\s+'\"_-]*$")
_FUNCTIONS = {"rgb", "rgba", "hsl", "hsla", "matrix", "translate", "scale", "rotate", "skewx",
              "skewy"}
_PIXELS = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(px)?\s*$")


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def safe_value(name: str, value: str) -> bool:
    """Whether attribute ``name`` may keep ``value``: built only of allowed pieces (see the
    module's text); anything not understood is refused."""
    if name in TEXT_ATTRIBUTES:
        return True
    if name == "id":
        return bool(_ID.match(value))
    if name == "class":
        return bool(_CLASS.match(value))
    if len(value) > 100_000 or "\\" in value:
        return False
    for m in _FUNC.finditer(value):
        fn, args = m.group(1).lower(), m.group(2)
        if fn == "url":
            if not _URL_ARG.match(args):
                return False
        elif fn not in _FUNCTIONS or not _NUMBERS.match(args):
            return False
    return bool(_PLAIN.match(_FUNC.sub(" ", value)))


def _copy(src, dst_parent, depth: int, count: list) -> None:
    if depth > MAX_DEPTH:
        raise DataError(f"A chart in the report is nested more than {MAX_DEPTH} levels deep.")
    for child in src:
        tag = _local(child.tag) if isinstance(child.tag, str) else ""
        if tag not in ELEMENTS or tag == "svg":
            continue
        count[0] += 1
        if count[0] > MAX_ELEMENTS:
            raise DataError(f"A chart in the report has more than {MAX_ELEMENTS:,} elements.")
        node = SubElement(dst_parent, tag, _attributes(child))
        node.text = child.text
        _copy(child, node, depth + 1, count)
        node.tail = child.tail if tag in ("tspan",) else None


def _attributes(el, root: bool = False) -> dict:
    out = {}
    for name, value in el.attrib.items():
        local = _local(name)
        if "}" in name or local not in ATTRIBUTES or not safe_value(local, value):
            continue
        if root and local in ("width", "height") and not _PIXELS.match(value):
            continue
        out[local] = value
    return out


def raster_size(svg: str) -> tuple[float, float]:
    """(width, height) in pixels of a cleaned SVG at scale 1: its root's width and height, or
    its viewBox's, or 100 (what the renderer takes when neither is given)."""
    root = fromstring(svg)
    box = [float(v) for v in re.split(r"[\s,]+", root.get("viewBox", "").strip()) if v] \
        if _NUMBERS.match(root.get("viewBox", "")) else []
    size = []
    for k, attr in enumerate(("width", "height")):
        m = _PIXELS.match(root.get(attr, ""))
        size.append(float(m.group(1)) if m else box[2 + k] if len(box) == 4 else 100.0)
    return size[0], size[1]


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
    out = Element("svg", {"xmlns": SVG_NS, **_attributes(root, root=True)})
    _copy(root, out, 1, [0])
    return tostring(out, encoding="unicode")
