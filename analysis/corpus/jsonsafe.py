"""The one bounded JSON reader of the project: every JSON the project reads from a visitor, a
file or a command line (report JSON, JSONL corpora and labels, ABSA JSON, checkpoint cards and
configs) goes through :func:`loads`.

Python's ``json`` has no limits: a document nested 100,000 levels deep raises RecursionError
(or exhausts the stack of whatever walks the result later), and a 1,000,000-digit integer
raises ValueError from ``int()`` after seconds of work. :func:`loads` first measures the
nesting depth with a linear scan (strings skipped; no recursion, bounded memory) and refuses a
document deeper than ``max_depth``; while parsing, every number literal longer than
``max_number_chars`` characters is refused before it is converted. Every problem is a
:class:`JSONError` (a :class:`analysis.errors.DataError`) with one plain line."""

from __future__ import annotations

import json
import re

import numpy as np

from analysis.errors import DataError

MAX_DEPTH = 64            # every JSON this project writes is at most 6 levels deep
MAX_NUMBER_CHARS = 100    # a float's repr needs at most 24 characters
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_CHUNK = 1 << 20
_OPEN, _CLOSE = (ord("["), ord("{")), (ord("]"), ord("}"))


class JSONError(DataError):
    """A JSON document that cannot be read as given (one plain line)."""


def json_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays and objects in ``data`` (brackets inside strings are not
    counted); a linear scan in chunks, so its memory does not grow with the depth."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if b"[" not in raw and b"{" not in raw:
        return 0
    if b'"' in raw:
        raw = _STRING.sub(b'""', raw)
    level = peak = 0
    for start in range(0, len(raw), _CHUNK):
        a = np.frombuffer(raw, np.uint8, count=min(_CHUNK, len(raw) - start), offset=start)
        step = ((a == _OPEN[0]) | (a == _OPEN[1])).astype(np.int32) \
            - ((a == _CLOSE[0]) | (a == _CLOSE[1]))
        step = step[step != 0]
        if step.size:
            levels = np.cumsum(step, dtype=np.int64) + level
            peak, level = max(peak, int(levels.max())), int(levels[-1])
    return peak


def _number(kind):
    def parse(text: str, cap: int):
        if len(text) > cap:
            raise JSONError(f"holds a number of {len(text):,} characters (at most {cap})")
        return kind(text)
    return parse


_INT, _FLOAT = _number(int), _number(float)


def loads(data: bytes | str, what: str = "The JSON", *, max_depth: int = MAX_DEPTH,
          max_number_chars: int = MAX_NUMBER_CHARS):
    """``data`` (UTF-8 bytes or text) parsed as JSON, with bounded nesting and number size.
    ``what`` starts the one-line message of the :class:`JSONError` raised otherwise
    ("<what> is not valid JSON (line 3).", "<what> is nested 100,000 levels deep; ...")."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise JSONError(f"{what} is not UTF-8 text (byte {exc.start}).") from None
    else:
        text = data
    depth = json_depth(text)
    if depth > max_depth:
        raise JSONError(f"{what} is nested {depth:,} levels deep; at most {max_depth} are read.")
    try:
        return json.loads(text, parse_int=lambda s: _INT(s, max_number_chars),
                          parse_float=lambda s: _FLOAT(s, max_number_chars))
    except JSONError as exc:
        raise JSONError(f"{what} {exc}.") from None
    except json.JSONDecodeError as exc:
        raise JSONError(f"{what} is not valid JSON (line {exc.lineno}).") from None
    except (RecursionError, ValueError, OverflowError) as exc:  # defence in depth
        raise JSONError(f"{what} cannot be read ({type(exc).__name__}).") from None
