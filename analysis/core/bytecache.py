"""Caches bounded by the bytes they hold, not by a number of entries (issue 50).

A count says nothing of memory: eight search indexes of the bundled treebank are a few MB, eight
of a 600 KB upload were 790 MB. :class:`ByteCache` keeps its entries oldest first out under two
budgets: ``max_bytes`` for all of them (the server's) and ``owner_bytes`` for the entries one
owner put there (a visitor's key: one visitor's uploads make way for each other before they
push out anyone else's). An entry larger than its budget is handed back and not kept. Sizes come
from :func:`nbytes` unless the caller knows better (a faiss index: its vectors).

Thread-safe (one lock); :meth:`ByteCache.get_or_make` builds a missing entry once when several
threads ask for it at the same time; :meth:`ByteCache.sweep` drops the entries left unused for a
while (the server's memory comes back once its visitors have gone). No Streamlit here: the
pages' caches use it through ``ui.server.caches``."""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Callable, Hashable

import numpy as np

MISSING = object()
_DEPTH = 6  # nbytes looks this deep into containers and objects


def nbytes(obj, _seen: set | None = None, _depth: int = 0) -> int:
    """An estimate of the memory ``obj`` holds: numpy arrays (a memory-mapped file's pages are
    the kernel's page cache, not the process's: 0), torch tensors and pandas tables by their
    buffers, text and bytes by length, containers, dataclasses and plain objects by what they
    hold (each object counted once, :data:`_DEPTH` levels deep)."""
    seen = set() if _seen is None else _seen
    if obj is None or isinstance(obj, (bool, int, float, complex)):
        return 0
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.memmap):
        return 0
    if isinstance(obj, np.ndarray):
        if isinstance(obj.base, (np.memmap, memoryview)) or type(obj.base).__name__ == "mmap":
            return 0  # a view of a mapped file
        return int(obj.nbytes)
    if isinstance(obj, (str, bytes, bytearray, memoryview)):
        return sys.getsizeof(obj)
    module = type(obj).__module__ or ""
    if module.startswith("torch") and hasattr(obj, "element_size") and hasattr(obj, "nelement"):
        return int(obj.element_size() * obj.nelement())
    if module.startswith("pandas") and hasattr(obj, "memory_usage"):
        try:
            usage = obj.memory_usage(deep=True)
            return int(usage.sum() if hasattr(usage, "sum") else usage)
        except Exception:  # noqa: BLE001 - an object pandas cannot size: its shell only
            return sys.getsizeof(obj)
    if _depth >= _DEPTH:
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(nbytes(k, seen, _depth + 1) + nbytes(v, seen, _depth + 1)
                                        for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sys.getsizeof(obj) + sum(nbytes(v, seen, _depth + 1) for v in obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return sys.getsizeof(obj) + sum(nbytes(getattr(obj, f.name, None), seen, _depth + 1)
                                        for f in fields(obj))
    held = getattr(obj, "__dict__", None)
    if isinstance(held, dict):
        return sys.getsizeof(obj) + nbytes(held, seen, _depth + 1)
    return sys.getsizeof(obj)


@dataclass
class _Entry:
    value: Any
    size: int
    owner: str
    used: float = 0.0  # when it was last put or got (the cache's clock)


class ByteCache:
    """Entries under a byte budget, oldest (least recently used) first out; see the module
    docstring. ``max_bytes``: all entries together; ``owner_bytes``: one owner's entries
    (None: no per-owner budget); ``size(value)``: the default measure (:func:`nbytes`)."""

    def __init__(self, max_bytes: int, owner_bytes: int | None = None,
                 size: Callable[[Any], int] = nbytes, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.max_bytes = int(max_bytes)
        self.owner_bytes = None if owner_bytes is None else int(owner_bytes)
        self.size = size
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.RLock()
        self._making: dict[Hashable, threading.Event] = {}
        self.total = 0
        self.evicted = 0  # entries pushed out so far (a measure for benchmarks)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key) -> bool:
        return key in self._entries

    def keys(self) -> list:
        """The keys held, oldest first (a snapshot)."""
        with self._lock:
            return list(self._entries)

    def owner_total(self, owner: str) -> int:
        with self._lock:
            return sum(e.size for e in self._entries.values() if e.owner == owner)

    def get(self, key, default=MISSING):
        """The entry's value (now the most recently used), or ``default``."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return default
            self._entries.move_to_end(key)
            entry.used = self.clock()
            return entry.value

    def put(self, key, value, owner: str = "", size: int | None = None) -> list:
        """Keep ``value`` under ``key`` for ``owner``; returns the keys pushed out (the entry
        itself when it is larger than a budget: it is not kept)."""
        n = int(self.size(value) if size is None else size)
        with self._lock:
            self._drop(key)
            limits = [self.max_bytes] + ([self.owner_bytes] if owner and
                                         self.owner_bytes is not None else [])
            if n > min(limits):
                return [key]
            gone = []
            if owner and self.owner_bytes is not None:
                mine = [k for k, e in self._entries.items() if e.owner == owner]
                held = sum(self._entries[k].size for k in mine)
                for k in mine:
                    if held + n <= self.owner_bytes:
                        break
                    held -= self._entries[k].size
                    gone.append(k)
                    self._drop(k)
            while self._entries and self.total + n > self.max_bytes:
                k = next(iter(self._entries))
                gone.append(k)
                self._drop(k)
            self._entries[key] = _Entry(value, n, owner, self.clock())
            self.total += n
            self.evicted += len(gone)
            return gone

    def _drop(self, key) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.total -= entry.size

    def pop(self, key, default=None):
        with self._lock:
            entry = self._entries.get(key)
            self._drop(key)
            return default if entry is None else entry.value

    def sweep(self, idle_s: float) -> list:
        """Drop the entries nobody put or got for ``idle_s`` seconds; returns their keys (the
        server's janitor: what its visitors left behind goes once they are gone)."""
        with self._lock:
            now = self.clock()
            gone = [k for k, e in self._entries.items() if now - e.used >= idle_s]
            for k in gone:
                self._drop(k)
            return gone

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.total = 0

    def get_or_make(self, key, make: Callable[[], Any], owner: str = "",
                    size: Callable[[Any], int] | None = None):
        """The value under ``key``, made by ``make()`` (once, whichever threads ask at the same
        time) and kept when it fits; ``size(value)`` overrides the cache's measure."""
        while True:
            with self._lock:
                value = self.get(key)
                if value is not MISSING:
                    return value
                waiting = self._making.get(key)
                if waiting is None:
                    done = self._making[key] = threading.Event()
                    break
            waiting.wait()
            with self._lock:  # made meanwhile, unless it did not fit or failed: make it here
                value = self.get(key)
                if value is not MISSING:
                    return value
                if key not in self._making:
                    done = self._making[key] = threading.Event()
                    break
        try:
            value = make()
            self.put(key, value, owner, None if size is None else size(value))
            return value
        finally:
            with self._lock:
                self._making.pop(key, None)
            done.set()
