"""Helpers shared by the Chromium tests (tests/browser; tests/integration's demo-mode and
hostile-text checks use them too): a Streamlit server on a free port, Debian's Chromium through
Playwright, waiting for a rerun to end, picking a select box option, reading the URL, counting
coloured pixels. The servers themselves are fixtures: tests/browser/conftest.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "tests" / "screenshots"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def need_chromium() -> None:
    """Skip, saying why, where Debian's Chromium or Playwright is absent."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium is not installed ({CHROMIUM} is absent): "
                    "apt-get install chromium to run the browser tests")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed: "
                        "pip install -r requirements-dev.txt to run the browser tests")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(script="app.py", env: dict | None = None, cwd=ROOT, timeout_s=120):
    """``streamlit run script`` headless on a free local port (``env`` added to this process's
    environment); yields its URL once /_stcore/health answers, stops it on exit. Its output
    goes to a log file (a pipe nobody reads could fill and stall the server), whose tail the
    failure shows."""
    port = _free_port()
    full_env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **(env or {})}
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1"],
            cwd=cwd, env=full_env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + timeout_s
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.time() > deadline:
                    log.seek(0)
                    out = log.read().decode(errors="replace")
                    pytest.fail(f"streamlit did not start on port {port}:\n{out[-2000:]}")
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update"]


def _plain_launch(playwright):
    """Debian's Chromium, headless, with no background traffic (the network is closed)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


class SharedChromium:
    """One Debian Chromium for a test module (tests/browser/conftest.py), whose pages share one
    on-disk profile: the Streamlit frontend's scripts are fetched and compiled once per module
    (the HTTP cache and V8's code cache live on disk; incognito contexts keep neither), so a
    page load costs ~1.8 CPU-seconds instead of ~2.9 with a Playwright and a Chromium per test.

    Each test still starts as a fresh visitor: :meth:`close` (what a test calls at its end, as
    it would close its own browser) closes the test's pages and clears what a browser keeps
    for a visitor: the cookies, every visited origin's storage (local storage, IndexedDB,
    service workers, Cache API: CDP ``Storage.clearDataForOrigin``) and granted permissions;
    session storage goes with each page. A page's viewport is set before it loads.
    :meth:`new_context` (several visitors at once, or options a shared profile cannot take)
    opens an incognito context of a second, plain Chromium, closed at the test's end too."""

    def __init__(self, playwright):
        self._p = playwright
        self._plain = None
        self._origins: set[str] = set()
        self._profile = tempfile.mkdtemp(prefix="chromium-profile-")
        self.context = playwright.chromium.launch_persistent_context(
            self._profile, executable_path=CHROMIUM, args=ARGS, accept_downloads=True)
        self._blank = self.context.pages[0] if self.context.pages else self.context.new_page()
        self._cdp = self.context.new_cdp_session(self._blank)
        self.context.on("page", lambda page: page.on("framenavigated", self._seen))

    def _seen(self, frame) -> None:
        url = urlparse(frame.url)
        if url.scheme in ("http", "https"):
            self._origins.add(f"{url.scheme}://{url.netloc}")

    def new_page(self, viewport: dict | None = None, accept_downloads: bool = True,
                 **options):
        if options or not accept_downloads:
            return self.new_context(viewport=viewport, accept_downloads=accept_downloads,
                                    **options).new_page()
        page = self.context.new_page()
        page.set_viewport_size(viewport or {"width": 1280, "height": 720})
        return page

    def new_context(self, **options):
        if self._plain is None:
            self._plain = _plain_launch(self._p)
        return self._plain.new_context(**options)

    def close(self) -> None:
        """The end of a test: its pages and contexts closed, the visitor's traces cleared."""
        for page in self.context.pages:
            if page is not self._blank:
                page.close()
        for origin in sorted(self._origins):
            self._cdp.send("Storage.clearDataForOrigin", {"origin": origin,
                                                          "storageTypes": "all"})
        self._origins.clear()
        self.context.clear_cookies()
        self.context.clear_permissions()
        if self._plain is not None:
            for context in self._plain.contexts:
                context.close()

    def shutdown(self) -> None:
        import shutil

        try:
            self.close()
        finally:
            self.context.close()
            if self._plain is not None:
                self._plain.close()
            shutil.rmtree(self._profile, ignore_errors=True)


_MODULE: dict = {}  # the running test module's Playwright and SharedChromium (conftest.py)


@contextmanager
def playwright_session():
    """The test module's Playwright, started at its first use and kept to the module's end
    (tests/browser/conftest.py ``_one_chromium_per_module``); Playwright's own session outside
    tests/browser."""
    if "module" not in _MODULE:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            yield p
        return
    if "playwright" not in _MODULE:
        from playwright.sync_api import sync_playwright

        _MODULE["playwright"] = sync_playwright().start()
    yield _MODULE["playwright"]


def _launch(playwright):
    """The module's :class:`SharedChromium` where ``playwright`` is the module's session (its
    ``close()`` ends the test's part), else a Chromium of its own."""
    if playwright is not _MODULE.get("playwright"):
        return _plain_launch(playwright)
    if "chromium" not in _MODULE:
        _MODULE["chromium"] = SharedChromium(playwright)
    return _MODULE["chromium"]


@contextmanager
def one_chromium_per_module():
    """Marks a test module's span: :func:`playwright_session` and :func:`_launch` share one
    Playwright and one :class:`SharedChromium` inside it; both end with it."""
    _MODULE["module"] = True
    try:
        yield
    finally:
        chromium, pw = _MODULE.pop("chromium", None), _MODULE.pop("playwright", None)
        _MODULE.clear()
        try:
            if chromium is not None:
                chromium.shutdown()
        finally:
            if pw is not None:
                pw.stop()


def scroll_into_view(locator) -> None:
    """Scroll ``locator``'s element into view once the page is settled and its charts are
    still (:func:`wait_drawn`): a component redraws its root when its frame is laid out again
    after a run, on a busy machine, and an element found before that is no longer attached."""
    wait_drawn(locator.page)
    locator.scroll_into_view_if_needed(timeout=15_000)


QUIET_MS = 300  # how long the app must stay idle to count as settled

# True once the app's script state has been "notRunning" for QUIET_MS, as seen by this poll and
# the ones before it (the state and when it last changed are kept on the window), with something
# drawn in the page's main area. An interaction turns the state to "running" before
# Playwright's click returns; a run the app starts itself follows its first run within a few ms
# (st.rerun); a first visit's first run draws nothing (it leaves Streamlit's legacy pages mode:
# ui.common.frame.sidebar) and the second draws the page.
SETTLED = """(quiet) => {
  const app = document.querySelector("[data-testid='stApp']");
  const s = app ? app.getAttribute('data-test-script-state') : null;
  const now = performance.now();
  const w = window.__stIdle || (window.__stIdle = {s: null, t: now});
  if (s !== w.s) { w.s = s; w.t = now; }
  const drawn = document.querySelector("[data-testid='stMain'] [data-testid='stElementContainer']");
  return s === 'notRunning' && now - w.t >= quiet && drawn !== null;
}"""

# True once every chart on the screen is drawn (its canvas or SVG has a size) and no chart's
# box moved since the last poll: Vega draws after the run, and draws a container-wide chart
# again when its column is laid out again.
DRAWN = """(atLeast) => {
  const boxes = [];
  for (const el of document.querySelectorAll("[data-testid='stVegaLiteChart']")) {
    if (!el.offsetParent) continue;  // hidden (the other screen's version of a comparison)
    const m = el.querySelector('.vega-embed .marks');
    if (!m) return false;  // Streamlit sent it; Vega has not drawn it yet
    const b = m.getBoundingClientRect();
    if (b.width < 2 || b.height < 2) return false;
    boxes.push([b.x, b.y, b.width, b.height].map(Math.round).join(','));
  }
  const key = boxes.join(';');
  const same = window.__drawnKey === key;
  window.__drawnKey = key;
  return same && boxes.length >= atLeast;
}"""


# True once the page's URL holds every parameter of ``arg`` ({name: value}): a page writes its
# state to the URL in the run after an interaction.
URL_HAS = """(want) => {
  const q = new URLSearchParams(location.search);
  return Object.entries(want).every(([k, v]) => q.get(k) === v);
}"""


# Counts the app's script runs from now on in window.__runs (a run turns its state "running").
COUNT_RUNS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  window.__runs = 0;
  new MutationObserver(() => {
    if (app.getAttribute("data-test-script-state") === "running") window.__runs++;
  }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
}"""


def _wait_idle(page, timeout=120_000):
    """Wait until the app's run is over and it stayed idle :data:`QUIET_MS` (:data:`SETTLED`):
    polled on the app's own script state, never a fixed sleep."""
    page.evaluate("window.__stIdle = null")
    page.wait_for_function(SETTLED, arg=QUIET_MS, polling=50, timeout=timeout)


def wait_drawn(page, timeout=60_000, charts: int = 0):
    """Wait until the app is settled and every chart on the screen is drawn and still
    (:data:`DRAWN`), and at least ``charts`` of them are shown (a page whose charts come in a
    later run of its own: the component's first sync, a job's result)."""
    _wait_idle(page, timeout=timeout)
    page.evaluate("window.__drawnKey = null")
    page.wait_for_function(DRAWN, arg=charts, polling=150, timeout=timeout)


def selectbox(page, label: str):
    """The page's (first) selectbox labelled ``label``."""
    return page.get_by_test_id("stSelectbox").filter(
        has=page.get_by_text(label, exact=True)).first


def _pick(page, label: str, option: str):
    """Choose ``option`` in the page's selectbox labelled ``label``."""
    selectbox(page, label).click()
    page.get_by_role("option", name=option, exact=True).click()
    _wait_idle(page)


def _saturated_pixels(png: bytes) -> int:
    """Pixels of a screenshot that are clearly coloured (chart marks, not grey text/axes)."""
    import io

    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(1 for r, g, b in img.getdata() if max(r, g, b) - min(r, g, b) > 60)


def _query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}
