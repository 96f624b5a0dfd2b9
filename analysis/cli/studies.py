"""The registry of studies: every study package's ``STUDY`` (:mod:`analysis.core.study`), found
by name. Only the CLI tier may import every study (.importlinter), so the registry lives here;
each study is imported when it is asked for (``python -m analysis --help`` loads none)."""

from __future__ import annotations

import importlib
from dataclasses import fields

# every study's one name (its page URL, package, CLI command and test prefix), in the order
# of the pages. The Head atlas, Predictions and Features ship their example's result with
# commands of their own (data/precomputed/README.md: rounded facts, a second model, trained
# dictionaries), so precompute does not run them.
NAMES = ("attention", "noop", "aspects", "drift", "syntax", "attribution", "representations",
         "importance", "patching", "search")


def study(name: str):
    """The ``STUDY`` its package ``analysis.<name>`` exports, or None (none yet)."""
    if name not in NAMES:
        raise KeyError(name)
    # lazy: loads the study only when it is asked for (fast `python -m analysis --help`)
    return getattr(importlib.import_module(f"analysis.{name}"), "STUDY", None)


def registered() -> dict:
    """Name -> ``STUDY`` of every study that has one."""
    found = {name: study(name) for name in NAMES}
    return {name: s for name, s in found.items() if s is not None}


def on_example(inputs) -> bool:
    """Whether ``inputs`` name the example checkpoint (a field equal to ``"example"``: the
    model, the classifier, the model after fine-tuning)."""
    # lazy: the core's model names (light, but only when asked)
    from analysis.core.models import EXAMPLE_SPEC

    return any(getattr(inputs, f.name) == EXAMPLE_SPEC for f in fields(inputs))


def with_example() -> dict:
    """Name -> ``STUDY`` of the studies whose page opens on the example checkpoint (an
    ``example`` of inputs naming it): the ones with a precomputed result. An example view on
    the embedded model (No-op statistics, Syntax) needs none: it is computed at once."""
    return {name: s for name, s in registered().items()
            if s.example is not None and on_example(s.example())}
