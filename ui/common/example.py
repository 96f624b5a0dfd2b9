"""The example checkpoint on a running server: built once in the background when it is missing
(one thread per server process, behind a lock; demo mode too), its progress for the pages, and
the block that shows that progress and reruns the page once the example is ready.

``example_status()`` is what a page asks: ``ready`` (load the spec ``"example"``), else
``building`` with ``fraction`` and ``text`` ("Building the example checkpoint: epoch 2/8, step
37/96"), else ``error`` (the build failed; one line) or neither (building is switched off:
``DASHBOARD_EXAMPLE_AUTOBUILD=0``, which the tests set). The build itself is
:func:`analysis.aspects.example.build_example`, written to the cache folder atomically.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import streamlit as st

from analysis.aspects.example import BUILD_COMMAND, example_ready
from ui.common.errors import first_line, plain

AUTOBUILD_ENV = "DASHBOARD_EXAMPLE_AUTOBUILD"
PREFIX = "Building the example checkpoint"

_LOCK = threading.Lock()
_BUILD: dict = {"thread": None, "fraction": 0.0, "text": "", "error": None}


@dataclass(frozen=True)
class ExampleStatus:
    ready: bool
    building: bool = False
    fraction: float = 0.0
    text: str = ""  # "Building the example checkpoint: epoch 2/8, step 37/96"
    error: str | None = None

    @property
    def message(self) -> str:
        """One line for a page that waits for the example (plain text)."""
        if self.ready:
            return "The example checkpoint is ready."
        if self.building:
            return f"{self.text}. The page opens on it when it is ready (a few minutes)."
        if self.error:
            return f"The example checkpoint could not be built: {self.error}"
        return (f"The example checkpoint is not built yet; run {BUILD_COMMAND} once to build "
                "it.")


def autobuild() -> bool:
    """Whether a missing example is built in the background (``DASHBOARD_EXAMPLE_AUTOBUILD``,
    default on; ``0`` turns it off)."""
    return os.environ.get(AUTOBUILD_ENV, "1").strip() not in ("0", "false", "no", "off")


def _progress(fraction: float, text: str) -> None:
    _BUILD["fraction"], _BUILD["text"] = float(fraction), f"{PREFIX}: {text}"


def _build() -> None:
    from analysis.aspects.example import build_example

    try:
        try:
            from ui.common.jobs import lower_priority
            from ui.common.settings import settings

            lower_priority(settings().job_nice)  # visitors' clicks get the cores first
        except Exception:  # noqa: BLE001 - priority is a courtesy, not a requirement
            pass
        build_example(progress=_progress)
    except Exception as exc:  # noqa: BLE001 - kept for the pages as one line
        _BUILD["error"] = first_line(exc)


def start_build() -> bool:
    """Start the background build when the example is missing and none runs or failed in this
    process; True when a build runs now."""
    with _LOCK:
        thread = _BUILD["thread"]
        if thread is not None and thread.is_alive():
            return True
        if _BUILD["error"] or example_ready() or not autobuild():
            return False
        _BUILD.update(fraction=0.0, text=f"{PREFIX}: starting", error=None)
        thread = threading.Thread(target=_build, name="example-build", daemon=True)
        _BUILD["thread"] = thread
        thread.start()
        return True


def example_status(start: bool = True) -> ExampleStatus:
    """Where the example checkpoint stands; with ``start`` a missing one starts building."""
    if example_ready():
        return ExampleStatus(ready=True)
    building = start_build() if start else bool(
        _BUILD["thread"] is not None and _BUILD["thread"].is_alive())
    if building:
        return ExampleStatus(False, True, _BUILD["fraction"], _BUILD["text"])
    return ExampleStatus(False, error=_BUILD["error"])


@st.fragment(run_every=2.0)
def _watch() -> None:
    status = example_status()
    if status.ready:
        st.rerun(scope="app")
    if status.building:
        st.progress(min(max(status.fraction, 0.0), 1.0), text=plain(status.message))
    else:
        st.info(plain(status.message), icon=":material/info:")


def wait_for_example(hint: str = "") -> bool:
    """True when the example is ready; otherwise its progress (updated every 2 s; the page
    reruns by itself once it is ready) or why it is not there after ``hint``, and False."""
    status = example_status()
    if status.ready:
        return True
    if status.building:
        _watch()
    else:
        st.info(plain(f"{hint} {status.message}".strip()), icon=":material/info:")
    return False
