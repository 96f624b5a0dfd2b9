"""The Chromium tier's servers, one of each kind per test process (session scope), started on
first use and shared by every module (Streamlit's own e2e suite shares its app servers the same
way): starting a server and computing each page's first view is most of a browser test's time.

- ``streamlit_app(**kind)``: the factory; one server per distinct kind, kept to the session's end.
- ``server``: the app as a first visitor finds it on a fresh machine: an empty cache folder, no
  example checkpoint (the pages fall back to the embedded default model).
- ``example_server``: the app with the tiny stand-in example checkpoint in its cache
  (tests/importance_util.py's ``stand_in_example``), for the pages that read the example.

A test that needs another app (its own script, demo mode, settings) starts it with
``browser_util.streamlit_server``. Tests share a server, never a browser session: each opens its
own Chromium page, so state kept in the session (the report, widget values) starts empty. They
share one Chromium per module (``_one_chromium_per_module``), which clears each test's cookies
and storage at its end."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

import browser_util
from browser_util import need_chromium, one_chromium_per_module, streamlit_server


@pytest.fixture(scope="module", autouse=True)
def _one_chromium_per_module():
    """One Playwright and one Chromium (browser_util.SharedChromium: one on-disk profile, so the
    frontend's scripts are compiled once) for each module, started at a test's first
    ``_launch``; each test still ends as its own browser would (its pages closed, its
    cookies and storage cleared)."""
    with one_chromium_per_module():
        yield


@pytest.fixture(autouse=True)
def _fresh_visitor():
    """After every test, whatever way it ended: its pages closed, its traces cleared."""
    yield
    chromium = browser_util._MODULE.get("chromium")
    if chromium is not None:
        chromium.close()


@pytest.fixture(scope="session")
def streamlit_app(tmp_path_factory):
    """``streamlit_app(example=False, finetuned=None)`` -> the URL of app.py started with a cache
    folder of its own: empty, or holding the stand-in example checkpoint (``example=True``), or
    a copy of a fine-tuned checkpoint folder as the example (``finetuned=folder``)."""
    servers: dict[tuple, str] = {}
    with ExitStack() as stack:

        def start(example: bool = False, finetuned=None) -> str:
            key = (example, str(finetuned) if finetuned else None)
            if key not in servers:
                need_chromium()
                cache = tmp_path_factory.mktemp("app-cache")
                if example:
                    from importance_util import stand_in_example

                    stand_in_example(cache)
                if finetuned is not None:
                    from builders import example_cache_from

                    example_cache_from(finetuned, cache)
                servers[key] = stack.enter_context(streamlit_server(
                    env={"DASHBOARD_CACHE": str(cache), "DASHBOARD_EXAMPLE_AUTOBUILD": "0"}))
            return servers[key]

        yield start


@pytest.fixture(scope="session")
def server(streamlit_app):
    """The app on an empty cache: the default model, no example checkpoint."""
    return streamlit_app()


@pytest.fixture(scope="session")
def example_server(streamlit_app):
    """The app with the tiny stand-in example checkpoint in its cache."""
    return streamlit_app(example=True)
