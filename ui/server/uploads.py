"""The upload cap (issue 24, 34): Streamlit keeps every uploaded file in memory until its
session ends, so one session, one visitor's sessions and all sessions together hold at most
so many bytes (:func:`cap_uploads`, installed once per server by :func:`session_upload_cap`);
:func:`note_visitor` tells the upload handler which visitor a session belongs to."""

from __future__ import annotations

import threading

import streamlit as st
from streamlit import config
from streamlit.runtime import Runtime

from ui.server.settings import SERVER_UPLOAD_MB, settings
from ui.server.visitors import visitor_keys

def _refusal(text: str) -> Exception:
    """An upload the server cannot hold now: HTTP 413 (the upload route is Starlette's: its
    exception becomes the answer's status; the browser's upload box says it failed)."""
    try:  # at call time: the server may not be Starlette's
        from starlette.exceptions import HTTPException

        return HTTPException(status_code=413, detail=text)
    except ImportError:  # pragma: no cover - another server
        return RuntimeError(text)


UPLOAD_BUSY = "The server holds as many uploaded files as it can; try again in a few minutes."
UPLOAD_VISITOR_BUSY = ("Your other tabs on this dashboard already hold as many uploaded files as "
                       "one visitor may; close them, or wait a few minutes, and try again.")

# session id -> the visitor key its pages ran under ("address:..."; only where the host tells
# visitors apart by address, ``visitor_address``): the upload handler is told the session only
_SESSION_VISITOR: dict[str, str] = {}
_SESSION_VISITOR_MAX = 4096


def note_visitor() -> None:
    """Remember which visitor this session's page runs belong to, for the upload cap (a
    visitor's tabs are sessions of their own; :func:`cap_uploads`)."""
    keys = visitor_keys()
    session = next((k.split(":", 1)[1] for k in keys if k.startswith("session:")), None)
    address = next((k for k in keys if k.startswith("address:")), None)
    if session and address:
        if len(_SESSION_VISITOR) >= _SESSION_VISITOR_MAX and session not in _SESSION_VISITOR:
            _SESSION_VISITOR.pop(next(iter(_SESSION_VISITOR)))  # the oldest session noted
        _SESSION_VISITOR[session] = address


def cap_uploads(mgr, cap: int, total_cap: int | None = None,
                visitor_of=_SESSION_VISITOR.get) -> bool:
    """Wrap the upload manager's ``add_file`` so that one session holds at most ``cap`` bytes
    of uploaded files: a new file first evicts that session's oldest others. Streamlit keeps
    every file PUT to ``/_stcore/upload_file/<session>/<id>`` in memory until the session
    ends, whether or not a widget asked for it (issue 24: twelve 40 MB PUTs, +480 MB). With
    ``total_cap``, all sessions together hold at most that many bytes: a file beyond it is
    refused (HTTP 413; nobody else's files are dropped), so many sessions (one visitor's many
    tabs, many visitors) cannot add up past it (issue 34). One visitor's sessions together
    (``visitor_of``: a session's visitor key, None when unknown) hold at most ``cap`` too: a
    file beyond it is refused (HTTP 413, :data:`UPLOAD_VISITOR_BUSY`), so opening tabs does not
    multiply a visitor's share. False where the manager is not Streamlit's in-memory one
    (nothing is changed)."""
    if not hasattr(mgr, "file_storage") or getattr(mgr, "_session_cap", None) is not None:
        return False
    add = mgr.add_file
    lock = threading.Lock()

    def add_file(session_id, file):
        with lock:
            held = [(fid, len(f.data)) for fid, f in list(mgr.file_storage.get(session_id, {})
                                                           .items()) if fid != file.file_id]
            visitor = visitor_of(session_id)
            mine = 0 if visitor is None else sum(  # the visitor's other tabs
                len(f.data) for sid, files in list(mgr.file_storage.items())
                if sid != session_id and visitor_of(sid) == visitor for f in list(files.values()))
            room = cap - mine
            total, evict = sum(n for _, n in held) + len(file.data), []
            for fid, n in held:  # oldest first (insertion order)
                if total <= room:
                    break
                evict.append(fid)
                total -= n
            if visitor is not None and total > room:  # their other tabs hold the rest
                raise _refusal(UPLOAD_VISITOR_BUSY)
            if total_cap is not None:
                others = sum(len(f.data) for sid, files in list(mgr.file_storage.items())
                             if sid != session_id for f in list(files.values()))
                if others + total > total_cap:
                    raise _refusal(UPLOAD_BUSY)  # (this session's own files kept too)
            for fid in evict:
                mgr.remove_file(session_id, fid)
            add(session_id, file)

    mgr.add_file, mgr._session_cap, mgr._total_cap = add_file, cap, total_cap
    return True


UPLOAD_SESSIONS = 4  # the server-wide cap: this many sessions' worth of uploads at once


@st.cache_resource(show_spinner=False)
def session_upload_cap() -> bool:
    """Once per server: each session may hold one checkpoint .zip (the server's
    ``maxUploadSize``) and four other uploads' worth of bytes, all sessions together
    :data:`UPLOAD_SESSIONS` times that (:func:`cap_uploads`)."""
    conf = settings()
    cap = config.get_option("server.maxUploadSize") * 2**20 \
        + 4 * (conf.max_upload_bytes or 2**20 * SERVER_UPLOAD_MB)
    return Runtime.exists() and cap_uploads(Runtime.instance().uploaded_file_mgr, cap,
                                            UPLOAD_SESSIONS * cap)
