"""Escaping for any text placed into custom HTML (token text is user input)."""

from __future__ import annotations

import html as _html


def esc(text) -> str:
    """HTML-escape text, quotes included."""
    return _html.escape(str(text), quote=True)
