"""The server's caches bounded by bytes (issue 50), server-wide and per visitor, oldest first out
(:class:`analysis.core.bytecache.ByteCache`).

Streamlit's own caches count entries (``max_entries``), which says nothing of memory: eight
search indexes of uploads held 790 MB where eight of the bundled treebank hold a few. The caches
whose entries grow with what a visitor sends are held here instead, each under its share of the
host's ``cache_mb`` (settings; default :data:`DEFAULT_CACHE_MB`) and, per visitor,
``visitor_cache_mb``:

- :func:`charts` (:mod:`ui.common.chart_cache`): built charts and their Vega-Lite specs with
  their data (an attention map at 512 tokens: 262,144 rows);
- :func:`indexes` (:mod:`ui.search.blocks`): opened search indexes (their pieces, labels and
  sentences; their vectors stay memory-mapped, and the faiss searchers have their own budget,
  :data:`analysis.search.index.searchers`);
- :func:`results`: the results of a page's function decorated with :func:`byte_cached` (in
  place of ``st.cache_resource(max_entries=...)``: one input's attention maps, Drift's example
  maps: tens of MB each at the token cap).

An entry is charged to the visitor who made it (:func:`owner`: their address where the host
tells it, else their session); one visitor's entries make way for each other before they push
out anyone else's. An entry unused for ``cache_idle_s`` (settings; default 120 s) is dropped by
the server's janitor (:func:`sweep`), so the memory comes back once the visitors have gone;
:func:`drop_all` empties them all."""

from __future__ import annotations

import functools
import inspect
from typing import Callable

import streamlit as st

from analysis.core.bytecache import ByteCache
from analysis.search import index as search_index
from ui.server.settings import settings
from ui.server.visitors import visitor_keys

DEFAULT_CACHE_MB = 512          # all the bounded caches together
DEFAULT_VISITOR_CACHE_MB = 128  # what one visitor's entries may hold of them
SHARES = {"charts": 0.3, "results": 0.3, "indexes": 0.15, "searchers": 0.25}


@functools.lru_cache(maxsize=1)
def _caches() -> dict[str, ByteCache]:
    conf = settings()
    total = conf.cache_mb * 2**20
    visitor = conf.visitor_cache_mb * 2**20
    out = {name: ByteCache(int(total * share), int(min(visitor, total * share)))
           for name, share in SHARES.items() if name != "searchers"}
    search_index.searchers.max_bytes = int(total * SHARES["searchers"])
    return out


def charts() -> ByteCache:
    return _caches()["charts"]


def indexes() -> ByteCache:
    return _caches()["indexes"]


def results() -> ByteCache:
    return _caches()["results"]


def hashable(value):
    """``value`` with its lists, sets and dicts turned into tuples (a cache key)."""
    if isinstance(value, dict):
        return tuple((hashable(k), hashable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(hashable(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(map(repr, value)))
    return value


def arguments_key(sig: inspect.Signature, args: tuple, kwargs: dict) -> tuple:
    """A call's key as Streamlit's caches make it: every argument by name, defaults filled in,
    but those whose names start with "_" (:func:`hashable` values)."""
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple((k, hashable(v)) for k, v in bound.arguments.items() if not k.startswith("_"))


def byte_cached(spinner: str | None = None) -> Callable:
    """A decorator for a page's function whose results are kept in :func:`results` (bounded by
    bytes, per visitor too; shared across sessions as ``st.cache_resource``'s are: keep them
    read-only), keyed by the function and its arguments but those whose names start with "_"
    (as Streamlit's caches are); ``spinner``: shown while a result is computed. The wrapped
    function's ``clear()`` forgets its results."""

    def wrap(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        name = f"{fn.__module__}.{fn.__qualname__}"

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            key = (name,) + arguments_key(sig, args, kwargs)

            def make():
                if spinner is None:
                    return fn(*args, **kwargs)
                with st.spinner(spinner):
                    return fn(*args, **kwargs)

            return results().get_or_make(key, make, owner=owner())

        def clear() -> None:
            cache = results()
            for key in [k for k in cache.keys() if k and k[0] == name]:
                cache.pop(key)

        cached.clear = clear
        return cached

    return wrap


def owner() -> str:
    """The visitor an entry made now is charged to: their address when the host tells it, else
    their session ('' outside a session: a background job's, charged to nobody)."""
    keys = visitor_keys()
    return next((k for k in keys if k.startswith("address:")), keys[0] if keys else "")


def sweep() -> list:
    """Drop the entries of every bounded cache unused for the host's ``cache_idle_s``: what a
    visitor left goes once they are gone (the server's janitor, ``ui.server.housekeeping``)."""
    idle = settings().cache_idle_s
    gone = [k for cache in _caches().values() for k in cache.sweep(idle)]
    return gone + search_index.searchers.sweep(idle)


def drop_all() -> None:
    """Every bounded cache emptied."""
    for cache in _caches().values():
        cache.clear()
    search_index.searchers.clear()
