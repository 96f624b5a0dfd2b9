"""Error display: one line in an error box, never a traceback."""

from __future__ import annotations

import streamlit as st


def first_line(exc: BaseException | str) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def show_error(exc: BaseException | str, prefix: str = "") -> None:
    """An error box with the first line of ``exc`` (``prefix`` before it, e.g. "After model: ")."""
    st.error(prefix + first_line(exc), icon=":material/error:")
