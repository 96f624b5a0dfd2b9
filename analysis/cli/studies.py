"""The registry of studies: every study package's ``STUDY`` (:mod:`analysis.core.study`), found
by name. Only the CLI tier may import every study (.importlinter), so the registry lives here;
each study is imported when it is asked for (``python -m analysis --help`` loads none)."""

from __future__ import annotations

import importlib

# every study's one name (its page URL, package, CLI command and test prefix), in the order
# of the pages
NAMES = ("attention", "noop", "aspects", "drift", "syntax", "attribution", "representations",
         "importance", "patching", "search")


def study(name: str):
    """The ``STUDY`` of the study ``name``, or None while its package has none yet."""
    if name not in NAMES:
        raise KeyError(name)
    # lazy: loads the study only when it is asked for (fast `python -m analysis --help`)
    return getattr(importlib.import_module(f"analysis.{name}"), "STUDY", None)


def registered() -> dict:
    """Name -> ``STUDY`` of every study that has one."""
    found = {name: study(name) for name in NAMES}
    return {name: s for name, s in found.items() if s is not None}


def with_example() -> dict:
    """Name -> ``STUDY`` of the studies whose page opens on the example checkpoint (an
    ``example`` of inputs): the ones with a precomputed result."""
    return {name: s for name, s in registered().items() if s.example is not None}
