"""Who a visitor is, for the per-visitor caps (jobs, uploads, memory): their session, and their
client address where the host allows telling it (settings ``visitor_address``)."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.server.settings import settings

def forwarded_address(values) -> str:
    """The client address the trusted proxy in front of the server wrote in X-Forwarded-For
    (``values``: every such header line): the last entry. The entries before it came from
    the client itself, who can write anything there (a new "address" per request would
    escape every per-address cap)."""
    entries = [e.strip() for v in values for e in str(v).split(",")]
    return entries[-1] if entries else ""


def visitor_keys() -> tuple[str, ...]:
    """The keys a visitor is counted under: their session, and their client address when the
    host allows telling it (``visitor_address``: the connection's peer, or behind a proxy the
    address the proxy appended to X-Forwarded-For, :func:`forwarded_address`); no address on
    a local connection."""
    ctx = get_script_run_ctx()
    keys = [f"session:{ctx.session_id}"] if ctx is not None else []
    mode = settings().visitor_address
    try:
        if mode == "forwarded":
            address = forwarded_address(st.context.headers.get_all("X-Forwarded-For"))
        elif mode == "connection":
            address = st.context.ip_address or ""
        else:
            address = ""
    except Exception:  # no request context (a bare script run, a test)
        address = ""
    if address:
        keys.append(f"address:{address[:64]}")
    return tuple(keys)
