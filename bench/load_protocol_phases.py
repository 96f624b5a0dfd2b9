"""The load benchmark's phases with protocol visitors (bench/load_protocol.py): warm-up, the
idle visitor, a crowd, and the Trainer that keeps one fine-tune running (bench/README.md)."""

from __future__ import annotations

import asyncio
import time

from load_protocol import ProtocolVisitor, Stream
from load_report import CrossTalk, coverage

TUNE = "Fine-tune on the bundled sample"  # ui/aspects/models.py TUNE


async def warm_up(url: str, titles: list[str]) -> None:
    """Every page once (``titles``: deploy/check.py's list, as the Chromium warm-up), so the
    server computes what a first visitor sees (No-op statistics of the sample corpus, drift to
    the example, the example's aspect heads...); a page whose results come from a background
    job is followed through its auto-reruns until they are shown."""
    s = Stream(url)
    try:
        await s.open()
        await s.rerun({}, "", timeout=600)
        await s.settle()
        for title in titles[1:]:
            await s.open_page(title, timeout=600)
            await s.settle()
    finally:
        await s.close()


async def baseline(url: str, rounds: int, loads: int, think: float, word: str):
    times: dict[str, list[float]] = {}
    for k in range(loads):
        v = ProtocolVisitor("idle", url, word, [], times, think)
        try:
            await v.first_view()
            if k == loads - 1:
                await v.type_text()
                for _ in range(rounds):
                    await v.round()
        finally:
            await v.close()
    return times


async def crowd(url: str, n: int, rounds: int, think: float, tag: str, words: list[str]):
    """``n`` protocol visitors at once: first view, own text, ``rounds`` rounds. Returns
    (times, failures)."""
    times: dict[str, list[float]] = {}
    failures: list[str] = []

    async def one(i: int) -> None:
        v = ProtocolVisitor(f"{tag}{i + 1}", url, words[i], [w for w in words if w != words[i]],
                            times, think)
        try:
            await v.first_view()
            await v.type_text()
            for _ in range(rounds):
                await v.round()
        except CrossTalk as exc:
            failures.append(f"CROSS-TALK: {exc}")
        except Exception as exc:  # noqa: BLE001
            failures.append(f"visitor {v.name}: {type(exc).__name__} "
                            f"{str(exc).splitlines()[0][:160] if str(exc) else ''}")
        finally:
            await v.close()

    await asyncio.gather(*(one(i) for i in range(n)))
    return times, failures


class Trainer:
    """Keeps one fine-tune running: Aspect heads, "Fine-tune on the bundled sample", the
    Fine-tune button pressed again whenever a fine-tune ends (the demo's defaults, through
    the server's queue), over the protocol."""

    def __init__(self, url: str):
        self.stream = Stream(url)
        self.runs: list[tuple[float, float | None]] = []  # (start, end) time.monotonic
        self.stop = asyncio.Event()
        self.started = asyncio.Event()
        self.error: str | None = None

    async def run(self) -> None:
        s = self.stream
        try:
            await s.open()
            await s.rerun({}, "")
            await s.open_page("Aspect heads")
            await s.change(s.widget("radio", "Model"), TUNE)
            button = s.widget("button", "Fine-tune")
            while not self.stop.is_set():
                t = time.monotonic()

                def began(t=t):
                    if not self.runs or self.runs[-1][0] != t:
                        self.runs.append((t, None))
                        self.started.set()

                s.on_progress = began
                run = await s.rerun(dict(s.held), trigger=button.id, timeout=None)
                if not run.progress:
                    raise RuntimeError("pressing Fine-tune started no fine-tune (no progress "
                                       "bar)")
                self.runs[-1] = (t, time.monotonic())
                await asyncio.sleep(0.5)
        except Exception as exc:  # noqa: BLE001 - reported, the visitors' numbers still count
            self.error = f"{type(exc).__name__}: {str(exc)[:200]}"
            self.started.set()

    async def close(self) -> None:
        await self.stream.close()

    def coverage(self, t0: float, t1: float) -> float:
        return coverage(self.runs, t0, t1)
