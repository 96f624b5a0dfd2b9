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


def _launch(playwright):
    """Debian's Chromium, headless, with no background traffic (the network is closed)."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update"],
    )


def scroll_into_view(locator, tries: int = 5) -> None:
    """Scroll ``locator``'s element into view, again when the element it found was replaced
    meanwhile (a component redraws its root when its frame is laid out again after a run, on a
    busy machine: "Element is not attached to the DOM")."""
    from playwright.sync_api import Error

    for _ in range(tries - 1):
        try:
            locator.scroll_into_view_if_needed(timeout=15_000)
            return
        except Error as exc:
            if "not attached" not in str(exc):
                raise
            locator.page.wait_for_timeout(300)
    locator.scroll_into_view_if_needed()


def _wait_idle(page, timeout=120_000):
    # a rerun starts shortly after an interaction; give it a moment, then wait for the end
    page.wait_for_timeout(400)
    page.wait_for_selector(IDLE, timeout=timeout)


def _pick(page, label: str, option: str):
    """Choose ``option`` in the page's selectbox labelled ``label``."""
    box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text(label, exact=True))
    box.first.click()
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
