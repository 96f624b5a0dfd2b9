"""Escaping for any text placed into custom HTML (token text is user input)."""

from __future__ import annotations

import html as _html


def esc(text) -> str:
    """HTML-escape text, quotes included."""
    return _html.escape(str(text), quote=True)


def token_chips(tokens, segments, special, limit: int = 160) -> str:
    """[CLS]/[SEP] structure as escaped token chips coloured by segment (A, B, special)."""
    chips = []
    for tok, seg, sp in list(zip(tokens, segments, special))[:limit]:
        cls = "sp" if sp else ("b" if seg else "a")
        chips.append(f"<span class='tok {cls}'>{esc(tok)}</span>")
    more = f" &hellip; (+{len(tokens) - limit} tokens)" if len(tokens) > limit else ""
    return "<div class='tokens'>" + "".join(chips) + more + "</div>"
