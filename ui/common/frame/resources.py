"""Cached, shared resources. Models are loaded once per spec and shared by every page and
session: treat them as read-only (train a deep copy). In demo mode only the host's listed
models load (``ui.common.settings``): any other spec is refused before anything looks at the
disk."""

from __future__ import annotations

import gc
import sys
import threading
import time
import weakref
from dataclasses import replace
from pathlib import Path

import streamlit as st
from huggingface_hub import try_to_load_from_cache
from streamlit import config
from streamlit.runtime import Runtime

from analysis.absa.checkpoints import clean_stale, clean_temps
from analysis.core.corpus.jsonsafe import loads
from analysis.core.models import (DEFAULT_SPEC, LoadedModel, ModelLoadError, checkpoint_stamp,
                             example_folder, load_model, resolve_spec)
from analysis.core.sizes import (MAX_CONFIG_BYTES, MAX_PARAMS, WEIGHT_BYTES, ModelCost,
                            config_params, gigabytes, visitor_peak, working_bytes)
from ui.common.jobs import visitor_keys
from ui.common.settings import SERVER_UPLOAD_MB, settings

NOT_OFFERED = "This model is not offered here."


@st.cache_resource(show_spinner="Loading model...", max_entries=4)
def _load(spec: str, stamp: str) -> LoadedModel:
    return load_model(spec)


def check_listed(spec: str) -> None:
    """Demo mode: ModelLoadError unless ``spec`` is one of the host's models (a string
    comparison; nothing on the disk is looked at)."""
    conf = settings()
    if conf.demo and conf.model_name(spec) is None:
        raise ModelLoadError(NOT_OFFERED)


def get_model(spec: str) -> LoadedModel:
    """Load (once per spec) the tokenizer + encoder; raises ModelLoadError on failure. A local
    folder written again (a new checkpoint in the same place) is loaded anew."""
    clean_leftovers()
    session_upload_cap()
    note_visitor()
    check_listed(spec)
    return _load(spec, checkpoint_stamp(spec))


def embedded_model() -> LoadedModel:
    """The embedded default model (the last resort when nothing else loads, listed or not)."""
    return _load(DEFAULT_SPEC, "")


REFREEZE_S = 60.0  # cyclic garbage among frozen objects (ended sessions) waits at most this
_frozen = {"modules": 0, "at": float("-inf")}
_freeze_lock = threading.Lock()


def freeze_long_lived(now: float | None = None) -> bool:
    """Keep the long-lived heap out of the full collection Streamlit runs after every script
    run (``runner.postScriptGC``: ``gc.collect(2)`` walks every tracked object, ~190 ms a
    visitor action with torch, transformers and the default model's ~410,000 objects;
    bench/README.md, "Server CPU per action"). After a rerun that imported modules (a page's
    first visit, a model's first load), and at most every ``REFREEZE_S`` s otherwise: unfreeze,
    collect everything, freeze what is alive (``gc.freeze``), so a rerun's collection walks only
    the objects made since. Frozen objects are still freed by reference counting (models are:
    they hold no cycles); cyclic garbage among them (an ended session's) is collected at the
    next refreeze. True when it froze."""
    now = time.monotonic() if now is None else now
    n = len(sys.modules)

    def due() -> bool:
        return n > _frozen["modules"] or now - _frozen["at"] >= REFREEZE_S

    if not due():
        return False
    with _freeze_lock:
        if not due():
            return False
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _frozen.update(modules=n, at=now)
    return True


def token_capped(loaded: LoadedModel) -> LoadedModel:
    """The model with at most the server's tokens per input (demo mode: ``max_tokens``) as its
    ``max_length``; the same weights and tokenizer (a shallow copy)."""
    cap = settings().cap("max_tokens", loaded.max_length)
    return loaded if cap == loaded.max_length else replace(loaded, max_length=cap)


# ---------------------------------------------------------------------------------------------
# Leftovers, the upload cap and each visitor's models (issue 24)


@st.cache_resource(show_spinner=False)
def clean_leftovers() -> list[str]:
    """Once per server start: remove the temporary folders a killed process left (uploads
    being unpacked, .zips being made, checkpoint saves; by name pattern and age)."""
    return clean_temps() + clean_stale(example_folder().parent)


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


def _listed_config(spec: str) -> dict | None:
    """The config.json of a listed model (None when it cannot be found without loading or
    downloading it, or is not a JSON object)."""
    try:
        source = Path(resolve_spec(spec)[0])
        if not source.is_dir():
            cached = try_to_load_from_cache(str(source), "config.json")
            source = Path(cached).parent if isinstance(cached, str) else None
        if source is None:
            return None
        with open(source / "config.json", "rb") as fh:
            config = loads(fh.read(MAX_CONFIG_BYTES))
        return config if isinstance(config, dict) else None
    except Exception:  # an unbuilt example, an uncached hub id, a bad config: not counted
        return None


def _listed_params(spec: str) -> int | None:
    """The parameters of a listed model from its config.json alone (None when unknown)."""
    try:
        config = _listed_config(spec)
        return config_params(config, spec) if config is not None else None
    except Exception:  # a config that names no size: not counted
        return None


def _listed_working(spec: str, tokens: int) -> int:
    try:
        config = _listed_config(spec)
        return working_bytes(config, tokens, spec) if config is not None else 0
    except Exception:  # a config that names no size: not counted
        return 0


@st.cache_resource(show_spinner=False)
def _default_upload_params(specs: tuple) -> int:
    sizes = [n for n in map(_listed_params, specs) if n]
    return 2 * max(sizes) if sizes else MAX_PARAMS


def upload_param_cap() -> int:
    """The most parameters an uploaded checkpoint may declare: the host's max_upload_params,
    else twice the largest listed model (from their configs)."""
    conf = settings()
    return conf.max_upload_params or _default_upload_params(tuple(conf.models.values()))


def _token_cap(loaded: LoadedModel | None = None) -> int:
    """The tokens per input the server's pages work on (demo mode: ``max_tokens``)."""
    return int(settings().cap("max_tokens", loaded.max_length if loaded is not None else 512))


@st.cache_resource(show_spinner=False)
def _default_visitor_bytes(specs: tuple, tokens: int, upload_params: int) -> int:
    working = max((_listed_working(spec, tokens) for spec in specs), default=0)
    return 2 * (WEIGHT_BYTES * upload_params + working)


def visitor_memory_cap() -> int:
    """The most memory (bytes) the models one visitor holds in their sessions may need at their
    peak (:func:`analysis.core.sizes.visitor_peak`): the host's ``max_visitor_mb``, else twice what
    an upload at the parameter cap would need (its weights, and the largest listed model's
    working memory at the token cap)."""
    conf = settings()
    if conf.max_visitor_mb:
        return conf.max_visitor_mb * 2**20
    return _default_visitor_bytes(tuple(conf.models.values()), _token_cap(), upload_param_cap())


def model_cost(loaded: LoadedModel) -> ModelCost:
    """What ``loaded`` costs a visitor who holds it: its weights, and its working memory at
    the server's token cap (from its config's shape)."""
    tokens = _token_cap(loaded)
    try:
        return ModelCost.of(loaded.model.config.to_dict(), loaded.n_params, tokens)
    except Exception:  # no config, or one whose shape cannot be read: its weights alone
        return ModelCost.of(None, loaded.n_params, tokens)


class VisitorModels:
    """Process-wide count of the models visitors hold in their sessions (uploads, fine-tunes),
    per visitor key, each by its :class:`ModelCost`; an entry goes when its model is
    garbage-collected (its session ended or it was replaced)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._held: dict[str, dict[int, ModelCost]] = {}

    def costs(self, visitor: str) -> list[ModelCost]:
        with self._lock:
            return list(self._held.get(visitor, {}).values())

    def held(self, visitor: str) -> int:
        """The peak memory (bytes) of the models ``visitor`` holds."""
        return visitor_peak(self.costs(visitor))

    def admit(self, visitors, cost: ModelCost, cap: int, max_params: int | None = None) -> None:
        """ModelLoadError with one line when a model of ``cost`` would take any of
        ``visitors`` (session and address keys) above ``cap`` bytes at their peak, or above
        ``max_params`` parameters where the host set that cap."""
        for v in visitors:
            costs = self.costs(v)
            need = visitor_peak([*costs, cost])
            if need > cap:
                working = (f", {gigabytes(cost.working)} more while a page works on it"
                           if cost.working else "")
                raise ModelLoadError(
                    f"Your session's models would need about {gigabytes(need)} of memory with "
                    f"this one ({gigabytes(cost.weights)} of weights{working}); this server "
                    f"allows {gigabytes(cap)} per visitor. Close other tabs that hold a model, "
                    "or reload this page to drop its models.")
            held = sum(c.params for c in costs)
            if max_params and held + cost.params > max_params:
                raise ModelLoadError(
                    f"Your session's models already hold {held / 1e6:,.1f}M parameters; with "
                    f"this one ({cost.params / 1e6:,.1f}M) they would pass this server's "
                    f"{max_params / 1e6:,.1f}M per visitor. Close other tabs that hold a "
                    "model, or reload this page to drop its models.")

    def add(self, visitors, model, cost: ModelCost) -> None:
        for v in visitors:
            with self._lock:
                self._held.setdefault(v, {})[id(model)] = cost
            weakref.finalize(model, self._drop, v, id(model))

    def _drop(self, visitor: str, key: int) -> None:
        with self._lock:
            entries = self._held.get(visitor, {})
            entries.pop(key, None)
            if not entries:
                self._held.pop(visitor, None)


@st.cache_resource(show_spinner=False)
def visitor_models() -> VisitorModels:
    return VisitorModels()


def hold_model(model, cost: ModelCost) -> None:
    """Count a session model for the current visitor (session and address)."""
    visitor_models().add(visitor_keys(), model, cost)


def admit_model(cost: ModelCost) -> None:
    """ModelLoadError unless the current visitor may hold another model of ``cost``."""
    visitor_models().admit(visitor_keys(), cost, visitor_memory_cap(),
                           settings().max_visitor_params)
