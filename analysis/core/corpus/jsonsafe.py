"""The one bounded JSON reader of the project: every JSON the project reads from a visitor, a
file or a command line (report JSON, JSONL corpora and labels, ABSA JSON, checkpoint cards and
configs) goes through :func:`loads`.

Python's ``json`` has no limits: a document nested 100,000 levels deep raises RecursionError
(or exhausts the stack of whatever walks the result later), and a 1,000,000-digit integer
raises ValueError from ``int()`` after seconds of work. :func:`loads` first measures the
nesting depth and the longest number literal in one linear scan (:func:`_scan`: strings
skipped, no recursion, no backtracking pattern, bounded memory) and refuses a document deeper
than ``max_depth`` or with a number longer than ``max_number_chars`` characters; the parse
checks the numbers again before converting them. Every problem is a :class:`JSONError` (a
:class:`analysis.core.errors.DataError`) with one plain line.

The scan and the parse are linear but still hold the interpreter while they run (about
10-20 ms a megabyte): callers bound the bytes first (every reader has a size cap; a
safetensors header is read only up to :data:`analysis.core.sizes.MAX_HEADER_BYTES`)."""

from __future__ import annotations

import json

import numpy as np

from analysis.core.errors import DataError

MAX_DEPTH = 64            # every JSON this project writes is at most 6 levels deep
MAX_NUMBER_CHARS = 100    # a float's repr needs at most 24 characters
_CHUNK = 1 << 20
_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_STEP = np.zeros(256, np.int64)     # +1 opens an array or object, -1 closes one
_STEP[[ord("["), ord("{")]], _STEP[[ord("]"), ord("}")]] = 1, -1
_BRACKET = _STEP != 0
_NUMBER = np.zeros(256, bool)       # the characters of a JSON number literal
_NUMBER[list(b"0123456789+-.eE")] = True


class JSONError(DataError):
    """A JSON document that cannot be read as given (one plain line)."""


def _outside(positions, quotes, in_string: int):
    """The ``positions`` of a chunk outside strings: an even number of string quotes (the
    chunk's unescaped ``quotes``, plus ``in_string`` carried) before them."""
    if not quotes.size:
        return positions[:0] if in_string else positions
    return positions[(np.searchsorted(quotes, positions) + in_string) % 2 == 0]


def _scan(data: bytes | str) -> tuple[int, int]:
    """(the deepest nesting, the longest number literal) of ``data``: one pass in chunks over
    the bytes, with the string, escape, depth and number state carried from chunk to chunk.
    Every step is a vectorised pass over the chunk or over the positions of its quotes,
    brackets and number characters, so the time is linear in the length whatever the bytes
    (no pattern that backtracks) and the memory is a few times :data:`_CHUNK`. Brackets and
    number characters inside strings are not counted; a quote is escaped when an odd number
    of backslashes precede it. Outside a string the scan agrees with the JSON grammar up to
    the first byte a parser refuses, so it never reports less than a parser would meet."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    level = peak = longest = run = 0  # run: the number literal still open at a chunk's end
    in_string, backslashes = 0, 0     # backslashes: the run of them a chunk ended with
    for start in range(0, len(raw), _CHUNK):
        a = np.frombuffer(raw, np.uint8, count=min(_CHUNK, len(raw) - start), offset=start)
        quotes = np.flatnonzero(a == _QUOTE)
        is_bs = a == _BACKSLASH
        if is_bs.any() or backslashes:
            # last[i]: the last position <= i that is not a backslash (the carried run sits
            # just before the chunk), so quote q follows q - 1 - last[q - 1] backslashes
            last = np.maximum.accumulate(
                np.where(is_bs, -1 - backslashes, np.arange(a.size, dtype=np.int64)))
            if quotes.size:
                before = np.concatenate(([-1 - backslashes], last))[quotes]
                quotes = quotes[(quotes - 1 - before) % 2 == 0]
            backslashes = int(a.size - 1 - last[-1]) if is_bs[-1] else 0
        brackets = _outside(np.flatnonzero(_BRACKET[a]), quotes, in_string)
        if brackets.size:
            levels = np.cumsum(_STEP[a[brackets]], dtype=np.int64) + level
            peak, level = max(peak, int(levels.max())), int(levels[-1])
        digits = _outside(np.flatnonzero(_NUMBER[a]), quotes, in_string)
        if digits.size:
            breaks = np.flatnonzero(np.diff(digits) != 1)
            starts = np.concatenate(([0], breaks + 1))
            ends = np.concatenate((breaks, [digits.size - 1]))
            lengths = ends - starts + 1
            if digits[0] == 0:
                lengths[0] += run
            longest = max(longest, int(lengths.max()))
            run = int(lengths[-1]) if digits[-1] == a.size - 1 else 0
        else:
            run = 0
        in_string = (in_string + quotes.size) % 2
    return peak, longest


def json_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays and objects in ``data`` (brackets inside strings are not
    counted); :func:`_scan`: linear time, memory that does not grow with the depth."""
    return _scan(data)[0]


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
    depth, longest = _scan(data)
    if depth > max_depth:
        raise JSONError(f"{what} is nested {depth:,} levels deep; at most {max_depth} are read.")
    if longest > max_number_chars:
        raise JSONError(f"{what} holds a number of {longest:,} characters (at most "
                        f"{max_number_chars}).")
    try:
        return json.loads(text, parse_int=lambda s: _INT(s, max_number_chars),
                          parse_float=lambda s: _FLOAT(s, max_number_chars))
    except JSONError as exc:
        raise JSONError(f"{what} {exc}.") from None
    except json.JSONDecodeError as exc:
        raise JSONError(f"{what} is not valid JSON (line {exc.lineno}).") from None
    except (RecursionError, ValueError, OverflowError) as exc:  # defence in depth
        raise JSONError(f"{what} cannot be read ({type(exc).__name__}).") from None
