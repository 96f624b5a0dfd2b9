"""Every CSV a visitor downloads, with its formula cells neutralised (issue 50).

A spreadsheet opening a CSV runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula (OWASP, "CSV Injection"; a tab or a carriage return first does the same in some
programs). The tables the pages export hold text from visitors (tokens, corpus sentences,
labels of an uploaded file), so a label ``=HYPERLINK(...)`` or ``@SUM(1+1)`` would run in the
next person's spreadsheet. :func:`csv_text` writes every text cell and column name that starts
with one of those characters with a single quote before it (``'=SUM(1+1)``: shown as text, the
quote visible), OWASP's advice; numbers stay numbers (a negative number is a number cell, not
text). Every CSV download goes through it (``ui.common.exports.export``; a layout test keeps
``to_csv`` out of every other module of ``ui/``)."""

from __future__ import annotations

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """``value`` with a quote before it when it is text that a spreadsheet would read as a
    formula; anything else as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def neutralised(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and column names are :func:`neutralise`\\ d (numeric
    and boolean columns untouched)."""
    out = df.copy()
    for k, col in enumerate(df.columns):
        series = df.iloc[:, k]
        if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
            out.isetitem(k, series.astype(object).map(neutralise))
    out.columns = [neutralise(c) for c in df.columns]
    return out


def csv_text(df: pd.DataFrame) -> str:
    """``df`` as CSV text (no index), formula cells neutralised, lines ended by CR LF as RFC
    4180 says: a cell holding a carriage return is then quoted (with a bare LF ending the
    lines, pandas leaves it unquoted and the file's rows come apart in a reader)."""
    return neutralised(df).to_csv(index=False, lineterminator="\r\n")
