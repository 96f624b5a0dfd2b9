"""A model's download .zip built once and shared, and few built at once.

Every click on "Download the model (.zip)" made the whole .zip again (the model's weights in
half precision, a copy in a temporary folder, the compressed bytes): sixteen visitors clicking
at once held sixteen copies, 2.68 GB (issue 34). :class:`ZipCache` builds each model's .zip
once (the other clicks on it wait for that build and get the same bytes), keeps the last
:attr:`ZipCache.keep` .zips (a model's entry goes with the model), and lets at most
:attr:`ZipCache.builds` builds run at a time, whatever the models. :data:`shared_zips` is the
server's one cache. Thread-safe; no Streamlit."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from analysis.absa.checkpoints import json_text
from analysis.absa.pipeline import checkpoint_zip

BUILDS = 2  # .zips made at the same time (each holds a copy of its model's weights)
KEEP = 4    # finished .zips kept (about 42 MB each for the example checkpoint)


class ZipCache:
    """``get(model, tokenizer, card)``: the .zip of :func:`analysis.absa.pipeline.
    checkpoint_zip` (``make``), built once per (model, card, precision)."""

    def __init__(self, builds: int = BUILDS, keep: int = KEEP, make: Callable | None = None):
        self.builds, self.keep = int(builds), int(keep)
        self._make = make
        self._slots = threading.BoundedSemaphore(self.builds)
        self._lock = threading.RLock()  # (a model's weakref callback may run while it is held)
        self._done: OrderedDict[tuple, bytes] = OrderedDict()
        self._building: dict[tuple, threading.Lock] = {}
        self._models: dict[tuple, weakref.ref] = {}

    def _forget(self, key: tuple) -> None:
        with self._lock:
            self._done.pop(key, None)
            self._models.pop(key, None)

    def get(self, model, tokenizer, card: dict, half: bool = True) -> bytes:
        key = (id(model), json_text(card), bool(half))
        while True:
            with self._lock:
                ref = self._models.get(key)
                if key in self._done and ref is not None and ref() is model:
                    self._done.move_to_end(key)
                    return self._done[key]
                building = self._building.get(key)
                if building is None:  # this caller builds it
                    building = self._building[key] = threading.Lock()
                    building.acquire()
                    break
            with building:  # another caller builds it: wait, then look again
                pass
        try:
            with self._slots:
                data = (self._make or checkpoint_zip)(model, tokenizer, card, half=half)
            with self._lock:
                self._done[key] = data
                self._models[key] = weakref.ref(model, lambda _, k=key: self._forget(k))
                while len(self._done) > self.keep:
                    old, _ = self._done.popitem(last=False)
                    self._models.pop(old, None)
            return data
        finally:
            with self._lock:
                del self._building[key]
            building.release()


shared_zips = ZipCache()
