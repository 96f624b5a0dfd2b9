"""Error display and plain text: one line in an error box, never a traceback, and text from a
visitor, a file, a URL or an exception shown literally (no Markdown, no HTML, no links, no
images, no icons, no LaTeX).

Streamlit renders the body of ``st.error`` / ``st.info`` / ``st.warning`` / ``st.caption`` /
``st.markdown`` as Markdown with extensions (GitHub tables, strikethrough and autolinks,
``$...$`` LaTeX, ``:red[...]`` directives, ``:material/...:`` icons, ``:smile:`` emoji,
``->`` arrows). :func:`plain` makes any text inert in two steps:

1. a backslash before every character that starts a Markdown construct anywhere in a line
   (`` \\ ` * _ ~ [ ] < > & $ : | ``) and before the markers that only count at the start of
   a line (``#``, ``-``, ``+``, ``=``, ``1.`` / ``1)``); CommonMark shows an escaped punctuation
   character as itself;
2. an invisible WORD JOINER (U+2060) inside the patterns that Streamlit and GitHub Markdown
   look for in the text *after* escapes are resolved: web addresses (``://``, ``www.``), e-mail
   addresses (``@``), ``:name:`` icons/emoji and the ``->``/``--``/``>=`` typography. The text
   reads the same; a copied address holds the invisible joiner.

Line breaks are kept as Markdown hard breaks, and leading spaces as no-break spaces (so an
indented line is not a code block).
"""

from __future__ import annotations

import logging
import re

import streamlit as st

_LOG = logging.getLogger(__name__)
WORD_JOINER = "\u2060"
_ALWAYS = re.compile(r"([\\`*_~\[\]<>&$:|])")
_LEAD = re.compile(r"^[ \t]+")
_MARKER = re.compile(r"^(?:[#+=-]|\d+(?=[.)]))")
# patterns matched on the parsed text (escapes already resolved): broken with a joiner
_BREAK = [
    (re.compile(r":(?=//)"), ":" + WORD_JOINER),                 # https://, ftp://
    (re.compile(r"(?i)www(?=\.)"), lambda m: m.group(0) + WORD_JOINER),  # www.example.com
    (re.compile(r"@"), "@" + WORD_JOINER),                       # user@example.com
    (re.compile(r":(?=[\w+-])"), ":" + WORD_JOINER),             # :material_x: :smile:
    (re.compile(r"<->|->|<-|--|>=|<=|~="),                       # arrows, dashes
     lambda m: m.group(0)[0] + WORD_JOINER + m.group(0)[1:]),
]


def _line(line: str) -> str:
    for pattern, repl in _BREAK:
        line = pattern.sub(repl, line)
    lead = _LEAD.match(line)
    if lead:
        line = line[lead.end():]
        lead = lead.group(0).replace(" ", "\u00a0").replace("\t", "\u00a0" * 4)
    line = _ALWAYS.sub(r"\\\1", line)
    m = _MARKER.match(line)
    if m:  # a heading, list item or setext underline at the start of a line
        k = m.end()
        line = line[:k] + "\\" + line[k:] if m.group(0)[0].isdigit() else "\\" + line
    return (lead or "") + line


def plain(text) -> str:
    """``text`` (any object; ``str()`` of it) as Markdown that Streamlit shows literally."""
    text = "" if text is None else str(text)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\\\n".join(_line(line) for line in lines)


def first_line(exc: BaseException | str) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def show_error(exc: BaseException | str, prefix: str = "") -> None:
    """An error box with the first line of ``exc`` (``prefix`` before it, e.g. "After model: "),
    shown as plain text."""
    st.error(plain(prefix + first_line(exc)), icon=":material/error:")


def unreadable(what: str, exc: BaseException, detail: bool = True) -> str:
    """One line for a reader's unexpected failure on a visitor's file (a library's own error,
    e.g. pyarrow's ``ArrowInvalid``, rather than the readers' ``DataError``): what could not be
    read and the error's kind, with its first line when ``detail`` (a demo says only the kind:
    a library's message may name server paths). The server's log gets one line too, never a
    traceback (a visitor's file is not the server's fault)."""
    line = first_line(exc)[:160]
    _LOG.warning("%s could not be read: %s: %s", what, type(exc).__name__, line)
    said = f"{type(exc).__name__}: {line}" if detail and line != type(exc).__name__ \
        else type(exc).__name__
    return f"{what} could not be read ({said}). Check its format, or try another file."
