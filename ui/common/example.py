"""The example checkpoint on a running server: built once in the background when it is missing
(one job per server process, behind a lock, started on the server's first request whatever the
page: app.py; demo mode too; none while another process on this machine builds it, the
command line's, whose progress the pages show instead; a background job of ``ui.common.jobs``:
the queue's background lane, whose slot is its own, so that no visitor's job waits behind the
build but a fine-tune, one training process at a time for memory; at the lowest priority, in a
child process of its own), its progress for the pages, and the block that shows that progress
and reruns the page once the example is ready. The pages that need no example (No-op
statistics, Syntax, Attribution on the sidebar's model, Representations) run their work
meanwhile; the pages that open on it show its precomputed results (:func:`precomputed_result`,
labelled by :func:`precomputed_note`).

``example_status()`` is what a page asks: ``ready`` (load the spec ``"example"``), else
``building`` with ``fraction``, ``text`` ("Building the example checkpoint: epoch 2/8, step
37/96") and ``estimate`` (the one estimate of :func:`analysis.core.example.estimate_words`, the
number every message says), else ``error`` (the build failed; one line) or neither (building is
switched off: ``DASHBOARD_EXAMPLE_AUTOBUILD=0``, which the tests set). The build itself is
:func:`analysis.absa.example.build_example`, written to the cache folder atomically, which stops
when the checkpoint is built meanwhile by another process (:mod:`analysis.core.example` says
where it lives).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import streamlit as st

from analysis.core.example import BUILD_COMMAND, build_estimate, build_progress, \
    estimate_words, example_ready, precomputed, precomputed_label, precomputed_path
from ui.common.errors import first_line, plain
from ui.common.jobs import BACKGROUND_NICE, TRAINING, start_background_job
from ui.common.state import EXAMPLE_BUILD_JOB
from analysis.absa import example as example_build
from analysis.core.execution.placements import Away
from ui.server.settings import settings

AUTOBUILD_ENV = "DASHBOARD_EXAMPLE_AUTOBUILD"
PREFIX = "Building the example checkpoint"
BUILD_KIND = "The example checkpoint's build"  # its public name in the queue's "waiting behind"

_LOCK = threading.Lock()
_BUILD: dict = {"thread": None, "fraction": 0.0, "text": "", "error": None, "first": None}


@dataclass(frozen=True)
class ExampleStatus:
    ready: bool
    building: bool = False
    fraction: float = 0.0
    text: str = ""  # "Building the example checkpoint: epoch 2/8, step 37/96"
    error: str | None = None
    estimate: str = ""  # the one estimate in words (analysis.core.example.estimate_words)

    @property
    def message(self) -> str:
        """One line for a page that waits for the example (plain text)."""
        if self.ready:
            return "The example checkpoint is ready."
        if self.building:
            return (f"{self.text}: {self.estimate}. The page opens on it by itself when it is "
                    "ready.")
        if self.error:
            return f"The example checkpoint could not be built: {self.error}"
        return "The example checkpoint is not built yet."


def autobuild() -> bool:
    """Whether a missing example is built in the background (``DASHBOARD_EXAMPLE_AUTOBUILD``,
    default on; ``0`` turns it off)."""
    return os.environ.get(AUTOBUILD_ENV, "1").strip() not in ("0", "false", "no", "off")


def _progress(fraction: float, text: str) -> None:
    _BUILD["fraction"], _BUILD["text"] = float(fraction), f"{PREFIX}: {text}"


def _build(progress) -> None:
    """The build in a process of its own on this server, whatever the server's placement
    (:class:`analysis.core.execution.placements.Away` without an address: a child process; the
    example is written to this server's cache, and its job stays in the background lane): the
    server keeps its interpreter lock and cores for the visitors meanwhile. The build stops by
    itself when the checkpoint is built meanwhile by another process (the command line) and
    keeps that one (:func:`analysis.absa.example.build_example`)."""
    try:
        Away()(example_build.build_example, on_message=progress, send_as="progress",
               nice=BACKGROUND_NICE)
    except Exception as exc:  # noqa: BLE001 - kept for the pages as one line
        _BUILD["error"] = first_line(exc)


def _ours() -> bool:
    thread = _BUILD["thread"]
    return thread is not None and thread.is_alive()


def _left_s() -> float | None:
    """The build's time left for the queue's "waiting behind" line: the same number as the
    pages' (:func:`analysis.core.example.build_estimate`)."""
    return build_estimate(build_progress() or {"fraction": _BUILD["fraction"]})[0]


def start_build() -> bool:
    """Start the background build when the example is missing and none runs or failed in this
    process; True when a build runs now (this server's, or another process's on this machine:
    the command line's, which this server then waits for instead of building a second one).
    It takes the background lane of the server-wide job queue (``ui.common.jobs``: a visitor's
    job never waits behind it, save a fine-tune, as one training process runs at a time), in its
    own lowest-priority thread. Called on every page's run (app.py), so that a fresh server
    starts building on its first request, whichever page it is for."""
    with _LOCK:
        if _ours():
            return True
        if _BUILD["error"] or example_ready() or not autobuild():
            return False
        if build_progress() is not None:  # another process builds it (the command line)
            return True
        _BUILD.update(fraction=0.0, text=f"{PREFIX}: starting", error=None, first=None)
        job = start_background_job(PREFIX, _build, key=EXAMPLE_BUILD_JOB, on_progress=_progress,
                                   kind=BUILD_KIND, exclusive=TRAINING, estimate=_left_s)
        _BUILD["thread"] = job.thread
        return True


def example_status(start: bool = True) -> ExampleStatus:
    """Where the example checkpoint stands; with ``start`` a missing one starts building."""
    if example_ready():
        return ExampleStatus(ready=True)
    building = start_build() if start else (_ours() or build_progress() is not None)
    if building:
        record = build_progress()
        if record is not None and not _ours():  # another process's build: its own words
            fraction, text = float(record.get("fraction") or 0.0), \
                f"{PREFIX} (by another process): {record.get('text') or 'starting'}"
        else:
            fraction, text = _BUILD["fraction"], _BUILD["text"]
        return ExampleStatus(False, True, fraction, text,
                             estimate=estimate_words(record or {"fraction": fraction}))
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


@st.cache_resource(max_entries=16, show_spinner=False)
def _precomputed(study: str, stamp: tuple, _result_type, options: tuple):
    record = precomputed(study)
    if record is None:
        return None
    try:
        return record, _result_type.from_json(record["result"], **dict(options))
    except (ValueError, KeyError, TypeError, IndexError):  # a file that does not fit the schema
        return None


def precomputed_result(study: str, result_type, **options):
    """``(record, result)`` of the example's precomputed result of ``study``
    (:func:`analysis.core.example.precomputed`: None when there is none, or it was made with
    another recipe or does not fit the result's schema), read back with
    ``result_type.from_json(record["result"], **options)``; read once per file version."""
    path = precomputed_path(study)
    try:
        st_ = path.stat()
    except OSError:
        return None
    return _precomputed(study, (str(path), st_.st_size, st_.st_mtime_ns), result_type,
                        tuple(sorted(options.items())))


def precomputed_note(record: dict) -> None:
    """The label every precomputed result is shown under (what it is, its recipe, when it
    was made; the live result replaces it)."""
    st.info(plain(precomputed_label(record)), icon=":material/history:")


def local_build_hint() -> None:
    """How to build the example from the command line: for local users only, under an
    expander (a demo's visitors get no command to run)."""
    if settings().demo:
        return
    with st.expander("For local users: build it from the command line"):
        st.markdown(f"Run `{BUILD_COMMAND}` once (or start the dashboard with "
                    f"`{AUTOBUILD_ENV}` unset and let it build the example in the background): "
                    f"{estimate_words()}.")
