"""What a long-running server does for itself: the long-lived heap kept out of Streamlit's
collection after every run (:func:`freeze_long_lived`), and the temporary folders a killed
process left removed once per start (:func:`clean_leftovers`)."""

from __future__ import annotations

import gc
import sys
import threading
import time

import streamlit as st

from analysis.absa.checkpoints import clean_stale, clean_temps
from analysis.core.models import example_folder

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


@st.cache_resource(show_spinner=False)
def clean_leftovers() -> list[str]:
    """Once per server start: remove the temporary folders a killed process left (uploads
    being unpacked, .zips being made, checkpoint saves; by name pattern and age)."""
    return clean_temps() + clean_stale(example_folder().parent)
