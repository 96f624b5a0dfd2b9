"""The one XML helper: safe parsing (defusedxml) and SemEval review sentences."""

from __future__ import annotations

from analysis.errors import DataError


def parse_xml(data: bytes, label: str):
    """The root element of XML ``data``, parsed with defusedxml: entity declarations and
    external references are refused (no entity bomb, no file or network read)."""
    from xml.etree.ElementTree import ParseError

    import defusedxml
    from defusedxml.ElementTree import fromstring

    try:
        return fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException:
        raise DataError(
            f"{label} declares XML entities (possible entity bomb or external reference); "
            "refused."
        ) from None
    except ParseError as exc:
        raise DataError(f"{label} is not well-formed XML ({exc}).") from None


def review_texts(data: bytes, label: str):
    """SemEval-2014/2016 review sentences (``<sentence><text>``) -> (texts, pairs, n_blank)."""
    root = parse_xml(data, label)
    texts, blank = [], 0
    found = False
    for sent in root.iter("sentence"):
        node = sent.find("text")
        if node is None:
            continue
        found = True
        t = (node.text or "").strip()
        if not t:
            blank += 1
            continue
        texts.append(t)
    if not found:
        raise DataError(
            f"{label} has no <sentence><text> elements (expected SemEval-2014/2016 review XML)."
        )
    return texts, [None] * len(texts), blank
