"""The example checkpoint on a running server: built once in the background when it is missing
(one job per server process, behind a lock; demo mode too; a background job of
``ui.common.jobs``: the queue's background lane, whose slot is its own, so that no visitor's
job waits behind the build but a fine-tune, one training process at a time for memory; at the
lowest priority, in a child process of its own), its progress for the pages, and the block
that shows that progress and reruns the page once the example is ready. The pages that need no
example (No-op statistics, Syntax, Attribution on the sidebar's model, Representations) run
their work meanwhile.

``example_status()`` is what a page asks: ``ready`` (load the spec ``"example"``), else
``building`` with ``fraction`` and ``text`` ("Building the example checkpoint: epoch 2/8, step
37/96"), else ``error`` (the build failed; one line) or neither (building is switched off:
``DASHBOARD_EXAMPLE_AUTOBUILD=0``, which the tests set). The build itself is
:func:`analysis.absa.example.build_example`, written to the cache folder atomically
(:mod:`analysis.core.example` says where it lives).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import streamlit as st

from analysis.core.example import BUILD_COMMAND, example_ready
from ui.common.errors import first_line, plain
from ui.common.jobs import BACKGROUND_NICE, TRAINING, start_background_job
from ui.common.state import EXAMPLE_BUILD_JOB
from analysis.absa import example as example_build
from analysis.core.execution.placements import Away
from ui.server.settings import settings

AUTOBUILD_ENV = "DASHBOARD_EXAMPLE_AUTOBUILD"
PREFIX = "Building the example checkpoint"

_LOCK = threading.Lock()
_BUILD: dict = {"thread": None, "fraction": 0.0, "text": "", "error": None, "first": None}


@dataclass(frozen=True)
class ExampleStatus:
    ready: bool
    building: bool = False
    fraction: float = 0.0
    text: str = ""  # "Building the example checkpoint: epoch 2/8, step 37/96"
    error: str | None = None
    left_s: float | None = None  # time left, estimated from the steps done (None: too early)

    @property
    def message(self) -> str:
        """One line for a page that waits for the example (plain text)."""
        if self.ready:
            return "The example checkpoint is ready."
        if self.building:
            return f"{self.text}. {time_left(self.left_s)} The page opens on it when it is ready."
        if self.error:
            return f"The example checkpoint could not be built: {self.error}"
        return "The example checkpoint is not built yet."


def time_left(seconds: float | None) -> str:
    """'About 3 minutes left.' in words (a first estimate needs a few steps done)."""
    if seconds is None:
        return "Estimating the time left from the first steps..."
    if seconds < 60:
        return "Less than a minute left."
    minutes = round(seconds / 60)
    return f"About {minutes} minute{'s' if minutes != 1 else ''} left."


def estimate_left(fraction: float, elapsed_s: float, since: float = 0.0) -> float | None:
    """Seconds left at the speed so far: the time since the first step (``since``: the
    fraction done then, so loading the model does not count as training) per fraction done,
    times the fraction left; None before 2% of the work is done past ``since``."""
    done = fraction - since
    if done < 0.02 or elapsed_s <= 0:
        return None
    return elapsed_s / done * max(0.0, 1.0 - fraction)


def autobuild() -> bool:
    """Whether a missing example is built in the background (``DASHBOARD_EXAMPLE_AUTOBUILD``,
    default on; ``0`` turns it off)."""
    return os.environ.get(AUTOBUILD_ENV, "1").strip() not in ("0", "false", "no", "off")


def _progress(fraction: float, text: str) -> None:
    if _BUILD["first"] is None and fraction > 0:  # the first step: training time starts here
        _BUILD["first"] = (time.monotonic(), float(fraction))
    _BUILD["fraction"], _BUILD["text"] = float(fraction), f"{PREFIX}: {text}"


def _left() -> float | None:
    first = _BUILD["first"]
    if first is None:
        return None
    return estimate_left(_BUILD["fraction"], time.monotonic() - first[0], first[1])


def _build(progress) -> None:
    """The build in a process of its own on this server, whatever the server's placement
    (:class:`analysis.core.execution.placements.Away` without an address: a child process; the
    example is written to this server's cache, and its job stays in the background lane): the
    server keeps its interpreter lock and cores for the visitors meanwhile."""
    try:
        Away()(example_build.build_example, on_message=progress, send_as="progress",
               nice=BACKGROUND_NICE)
    except Exception as exc:  # noqa: BLE001 - kept for the pages as one line
        _BUILD["error"] = first_line(exc)


def start_build() -> bool:
    """Start the background build when the example is missing and none runs or failed in this
    process; True when a build runs now. It takes the background lane of the server-wide job
    queue (``ui.common.jobs``: a visitor's job never waits behind it, save a fine-tune, as one
    training process runs at a time), in its own lowest-priority thread."""
    with _LOCK:
        thread = _BUILD["thread"]
        if thread is not None and thread.is_alive():
            return True
        if _BUILD["error"] or example_ready() or not autobuild():
            return False
        _BUILD.update(fraction=0.0, text=f"{PREFIX}: starting", error=None, first=None)
        job = start_background_job(PREFIX, _build, key=EXAMPLE_BUILD_JOB, on_progress=_progress,
                                   kind="Example checkpoint build", exclusive=TRAINING)
        _BUILD["thread"] = job.thread
        return True


def example_status(start: bool = True) -> ExampleStatus:
    """Where the example checkpoint stands; with ``start`` a missing one starts building."""
    if example_ready():
        return ExampleStatus(ready=True)
    building = start_build() if start else bool(
        _BUILD["thread"] is not None and _BUILD["thread"].is_alive())
    if building:
        return ExampleStatus(False, True, _BUILD["fraction"], _BUILD["text"], left_s=_left())
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
        local_build_hint()
    return False


def local_build_hint() -> None:
    """How to build the example from the command line: for local users only, under an
    expander (a demo's visitors get no command to run)."""
    if settings().demo:
        return
    with st.expander("For local users: build it from the command line"):
        st.markdown(f"Run `{BUILD_COMMAND}` once (or start the dashboard with "
                    f"`{AUTOBUILD_ENV}` unset and let it build the example in the background).")
