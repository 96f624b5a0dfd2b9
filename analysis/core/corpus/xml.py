"""The one XML helper: safe streaming parsing (defusedxml) and SemEval review sentences."""

from __future__ import annotations

import io
from xml.etree.ElementTree import ParseError

import defusedxml
from defusedxml.ElementTree import fromstring, iterparse

from analysis.core.errors import DataError


def _refused(label: str) -> DataError:
    return DataError(f"{label} declares XML entities (possible entity bomb or external "
                     "reference); refused.")


def parse_xml(data: bytes, label: str):
    """The root element of XML ``data``, parsed with defusedxml: entity declarations and
    external references are refused (no entity bomb, no file or network read)."""
    try:
        return fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException:
        raise _refused(label) from None
    except ParseError as exc:
        raise DataError(f"{label} is not well-formed XML ({exc}).") from None


def iter_xml(data: bytes, label: str, release: tuple[str, ...] = ()):
    """Stream ``(event, element)`` pairs ("start" / "end") of XML ``data`` with defusedxml's
    iterparse (the same refusals as :func:`parse_xml`). An element whose tag is in ``release``
    is emptied and detached from its parent once its "end" event has been handled, so the tree
    never holds more than one such element: memory stays bounded by the largest one."""
    stack = []
    try:
        for event, elem in iterparse(io.BytesIO(data), events=("start", "end"),
                                     forbid_dtd=False, forbid_entities=True,
                                     forbid_external=True):
            if event == "start":
                stack.append(elem)
                yield event, elem
                continue
            stack.pop()
            yield event, elem
            if elem.tag in release:
                elem.clear()
                if stack:
                    stack[-1].remove(elem)
    except defusedxml.DefusedXmlException:
        raise _refused(label) from None
    except ParseError as exc:
        raise DataError(f"{label} is not well-formed XML ({exc}).") from None


def review_texts(data: bytes, label: str):
    """SemEval-2014/2016 review sentences (``<sentence><text>``), streamed: yields the text of
    each sentence (``""`` for an empty one); raises DataError when the file has none."""
    found = False
    for event, elem in iter_xml(data, label, release=("sentence",)):
        if event != "end" or elem.tag != "sentence":
            continue
        node = elem.find("text")
        if node is None:
            continue
        found = True
        yield (node.text or "").strip()
    if not found:
        raise DataError(
            f"{label} has no <sentence><text> elements (expected SemEval-2014/2016 review XML)."
        )
