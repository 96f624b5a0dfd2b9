"""Chromium visitors of the load benchmark (bench/server/load.py): each
visitor is a Playwright browser context clicking through the pages; each action is timed from
the click to the page showing its result with the script idle (*wall*), and from the first
websocket frame the page sends to the last one it receives (*server side*, Chromium's DevTools
timestamps). On one machine the browsers' own work is in these times (bench/README.md)."""

from __future__ import annotations

import asyncio
import random
import time

from bench.server.load_report import CrossTalk, check_words, coverage
from deploy import check  # the pages, the idle selector

IDLE = check.IDLE
SERVER = "server: "  # kinds of server-side times (websocket) in the times dicts
RUNNING = "[data-testid='stApp'][data-test-script-state='running']"
TIMEOUT = 240_000  # ms; a page that waits behind the fine-tune in the queue shows it here
CHART = "[data-testid='stVegaLiteChart']"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-renderer-backgrounding",
               "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows"]





class Frames:
    """Timestamps of the app's websocket frames (/_stcore/stream) as Chromium's network stack
    saw them (DevTools protocol; CLOCK_MONOTONIC seconds, the clock of time.monotonic())."""

    def __init__(self):
        self.sockets: set[str] = set()
        self.sent: list[float] = []
        self.recv: list[float] = []

    async def attach(self, context, page) -> None:
        cdp = await context.new_cdp_session(page)
        cdp.on("Network.webSocketCreated", self._created)
        cdp.on("Network.webSocketFrameSent", lambda e: self._frame(e, self.sent))
        cdp.on("Network.webSocketFrameReceived", lambda e: self._frame(e, self.recv))
        await cdp.send("Network.enable")

    def _created(self, e: dict) -> None:
        if "/_stcore/stream" in e.get("url", ""):
            self.sockets.add(e["requestId"])

    def _frame(self, e: dict, into: list[float]) -> None:
        if e.get("requestId") in self.sockets:
            into.append(float(e["timestamp"]))

    def server_time(self, t0: float, t1: float) -> float | None:
        """First frame sent after ``t0`` to the last frame received before ``t1``: the server's
        share of an interaction (network included, the browser's own work left out)."""
        sent = [t for t in self.sent if t >= t0]
        if not sent:
            return None
        recv = [t for t in self.recv if sent[0] <= t <= t1]
        return (recv[-1] - sent[0]) if recv else None


class Visitor:
    def __init__(self, name: str, page, url: str, word: str | None, others: list[str],
                 times: dict[str, list[float]], think: float = 0.0, frames: Frames | None = None):
        self.name, self.page, self.url, self.word, self.others = name, page, url, word, others
        self.times, self.think, self.frames = times, think, frames
        self.rng = random.Random(name)
        self.layer = 1

    def record(self, kind: str, seconds: float) -> None:
        self.times.setdefault(kind, []).append(seconds)

    async def idle(self) -> None:
        await self.page.wait_for_selector(IDLE, timeout=TIMEOUT)

    async def timed(self, kind: str, action, *ready: str) -> None:
        if self.think and kind != "first view":  # a person reads before the next click
            await asyncio.sleep(self.think * self.rng.uniform(0.5, 1.5))
        t = time.monotonic()
        await action()
        for sel in ready:
            await self.page.locator(sel).first.wait_for(timeout=TIMEOUT)
        await self.idle()
        t1 = time.monotonic()
        self.record(kind, t1 - t)
        if self.frames is not None:
            await asyncio.sleep(0.2)  # the DevTools events of the last frames arrive
            server = self.frames.server_time(t, t1)
            if server is not None:
                self.times.setdefault(SERVER + kind, []).append(server)

    async def first_view(self) -> None:
        await self.timed("first view", lambda: self.page.goto(self.url + "/", timeout=TIMEOUT),
                         "h1:has-text('Attention')", ".av-head .av-col-from .av-tok")

    async def type_text(self) -> None:
        box = self.page.get_by_role("textbox", name="Text", exact=True)

        async def act():
            await box.fill(f"Visitor {self.name} says the {self.word} was lovely.")
            await box.press("Control+Enter")

        await self.timed("type text", act, self._own_token())
        await self.check_own_text()

    def _own_token(self) -> str:
        return f".av-head .av-col-from .av-tok[data-token='{self.word}']"

    async def check_own_text(self) -> None:
        if self.word is None:
            return
        tokens = await self.page.locator(".av-head .av-col-from .av-tok").evaluate_all(
            "ts => ts.map(t => t.dataset.token)")
        check_words(self.name, self.word, self.others, tokens)

    async def pick_layer(self) -> None:
        self.layer = self.rng.choice([n for n in range(1, 7) if n != self.layer])
        page, layer = self.page, str(self.layer)

        async def act():
            box = page.get_by_test_id("stSelectbox").filter(
                has=page.get_by_text("Layer", exact=True))
            await box.first.click()
            await page.get_by_role("option", name=layer, exact=True).click()

        await self.timed("layer", act, f".av-head[data-layer='{layer}']")

    async def view(self, name: str, ready: str) -> None:
        group = self.page.get_by_test_id("stButtonGroup")
        await self.timed(name.lower(), lambda: group.get_by_text(name, exact=True).click(), ready)

    async def open_page(self, title: str, kind: str, *ready: str) -> None:
        link = self.page.locator("[data-testid='stSidebarNav'] a", has_text=title).first
        await self.timed(kind, link.click, f"h1:has-text('{title}')", *ready)

    async def round(self) -> None:
        await self.pick_layer()
        await self.view("Model view", ".av-model .av-cell")
        await self.view("Head view", ".av-head .av-col-from .av-tok")
        await self.open_page("No-op statistics", "open No-op", CHART)
        await self.open_page("Fine-tuning drift", "open Drift", CHART)
        await self.open_page("Attention", "open Attention", ".av-head .av-col-from .av-tok")
        await self.check_own_text()




# ---------------------------------------------------------------------------------------------
# the phases


async def new_page(browser, frames: Frames | None = None):
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if frames is not None:
        await frames.attach(ctx, page)
    return ctx, page, errors


async def warm_up(browser, url: str) -> None:
    """Every page once, as check.py opens them (the first visitor's computations)."""
    ctx, page, _ = await new_page(browser)
    try:
        for path, title, ready in check.PAGES:
            await page.goto(url + path, timeout=TIMEOUT)
            await page.locator(f"h1:has-text('{title}')").first.wait_for(timeout=600_000)
            await page.locator(ready).first.wait_for(timeout=600_000)
            await page.wait_for_selector(IDLE, timeout=600_000)
    finally:
        await ctx.close()


async def baseline(browser, url: str, rounds: int, loads: int, think: float, word: str):
    times: dict[str, list[float]] = {}
    for k in range(loads):
        frames = Frames()
        ctx, page, _ = await new_page(browser, frames)
        v = Visitor("idle", page, url, word, [], times, think, frames)
        await v.first_view()
        if k == loads - 1:
            await v.type_text()
            for _ in range(rounds):
                await v.round()
        await ctx.close()
    return times


class Trainer:
    """Keeps one fine-tune running through the Aspect heads page, in a context of its own."""

    def __init__(self, browser, url: str):
        self.browser, self.url, self.ctx = browser, url, None
        self.runs: list[tuple[float, float | None]] = []  # (start, end) time.monotonic
        self.stop = asyncio.Event()
        self.started = asyncio.Event()
        self.error: str | None = None

    async def run(self) -> None:
        try:
            self.ctx, page, _ = await new_page(self.browser)
            await page.goto(self.url + "/aspects", timeout=TIMEOUT)
            await page.locator("h1:has-text('Aspect heads')").first.wait_for(timeout=TIMEOUT)
            await page.wait_for_selector(IDLE, timeout=TIMEOUT)
            await page.get_by_text("Fine-tune on the bundled sample", exact=True).first.click()
            await page.get_by_role("button", name="Fine-tune", exact=True).wait_for(
                timeout=TIMEOUT)
            await page.wait_for_selector(IDLE, timeout=TIMEOUT)
            while not self.stop.is_set():
                await page.get_by_role("button", name="Fine-tune", exact=True).click()
                t = time.monotonic()
                await page.wait_for_selector(RUNNING, timeout=30_000)
                await page.get_by_test_id("stProgress").first.wait_for(timeout=TIMEOUT)
                self.runs.append((t, None))
                self.started.set()
                while not await page.locator(IDLE).count():  # until this fine-tune ends
                    await asyncio.sleep(0.5)
                self.runs[-1] = (t, time.monotonic())
                if await page.get_by_test_id("stException").count():
                    raise RuntimeError("the fine-tune ended in an exception box")
                await asyncio.sleep(0.5)
        except Exception as exc:  # noqa: BLE001 - reported, the visitors' numbers still count
            self.error = str(exc).splitlines()[0][:200]
            self.started.set()

    async def close(self) -> None:
        if self.ctx is not None:
            await self.ctx.close()

    def coverage(self, t0: float, t1: float) -> float:
        return coverage(self.runs, t0, t1)


async def crowd(browser, url: str, n: int, rounds: int, think: float, tag: str,
                words: list[str]):
    """``n`` visitors at once: first view, own text, ``rounds`` rounds. Returns (times,
    failures)."""
    times: dict[str, list[float]] = {}
    failures: list[str] = []

    async def one(i: int) -> None:
        frames = Frames()
        ctx, page, errors = await new_page(browser, frames)
        v = Visitor(f"{tag}{i + 1}", page, url, words[i], [w for w in words if w != words[i]],
                    times, think, frames)
        try:
            await v.first_view()
            await v.type_text()
            for _ in range(rounds):
                await v.round()
            if errors:
                failures.append(f"visitor {v.name}: script error {errors[0][:120]}")
        except CrossTalk as exc:
            failures.append(f"CROSS-TALK: {exc}")
        except Exception as exc:  # noqa: BLE001
            failures.append(f"visitor {v.name}: {str(exc).splitlines()[0][:160]}")
        finally:
            await ctx.close()

    await asyncio.gather(*(one(i) for i in range(n)))
    return times, failures
