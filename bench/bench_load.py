"""Load benchmark of the public demo: one server in demo mode, many Chromium visitors at once
while a fine-tune runs, against a single idle visitor in the same run (bench/README.md).

    python bench/bench_load.py             # about 4 minutes on 2 cores; --control: about 6
    # options: --visitors 10 --rounds 2 --think 2 --first-views 3 --client-nice 19 --control
    #          --no-pin

One server is started as the image starts it (``deploy/check.py start``, DASHBOARD_MODE=demo;
the example checkpoint must be built in $DASHBOARD_CACHE). Phases, all in this one run:

1. warm-up (not timed): one visitor opens every page, so the server computes and caches what a
   first visitor sees (No-op statistics of the sample corpus, drift from the embedded model to
   the example checkpoint, the example's aspect heads). Server RSS after it: "idle, both models
   loaded".
2. baseline: one visitor alone (the idle server): first views of the Attention page (fresh
   browser contexts), then ``--rounds`` rounds of the interactions below.
3. (``--control``) the visitors of phase 4 without the fine-tune: what the visitors alone cost.
4. load: one more context opens Aspect heads, picks "Fine-tune on the bundled sample" and
   presses Fine-tune (the demo's defaults, through the server's queue; pressed again whenever a
   fine-tune ends, so one runs throughout); meanwhile ``--visitors`` contexts each open the
   Attention page (first view), type their own text, then do the same rounds.

Interactions of a round, each after a think time (``--think`` s, x0.5-1.5): Attention page layer
change (head view redrawn at that layer), Model view, back to Head view, open No-op statistics,
open Fine-tuning drift, back to Attention. Each is timed two ways: *wall*, from the action to
the page showing its result with the script idle (what the visitor sees; Chromium's own work on
this machine's cores included), and *server side*, from the first websocket frame the page
sends to the last one it receives (Chromium's DevTools timestamps; the browser's rendering left
out). Chromium and Playwright run at niceness ``--client-nice`` (19), standing in for the
visitors' own machines as far as one machine can.

No cross-talk: each visitor types its own sentence (its own word) and checks, after typing and
every time it comes back to the Attention page, that the head view shows its own word and none
of the other visitors'.

Pinning (``--no-pin`` to leave it): the server (and the queue's jobs, its threads) runs on one
core and this process, the Playwright driver and Chromium on the others (os.sched_setaffinity,
inherited by children), so the interaction times and the server's CPU seconds are the server's
own, on its own core, not the browsers'; the pinning is printed and read back from /proc.

Printed: p50 / p95 of time to first view and of the interactions (overall and per kind), idle
vs under load, their ratio and counts; CPU seconds of the server (and of the queue's job), of
the client side and of the rest of the machine during each crowd phase; the server's peak RSS
per phase (VmRSS of the server process and its children, polled every 0.25 s, and the kernel's
VmHWM); the fine-tunes and how much of the load phase one was running; the server's CPU seconds
per visitor action in each phase (its utime+stime from /proc, the queue's job threads left out,
over the phase's actions: first views and interactions).
Targets: peak RSS <= 2.5 GB; interaction p95 under load <= 2x the idle p95; no cross-talk.
Exit status 1 when a visitor saw another visitor's text or a page failed; 2 when Chromium or
the example checkpoint is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "deploy")]
import check  # noqa: E402  (deploy/check.py: the start command, health, free port)

IDLE = check.IDLE
SERVER = "server: "  # kinds of server-side times (websocket) in the times dicts
RUNNING = "[data-testid='stApp'][data-test-script-state='running']"
WORDS = ["apple", "river", "castle", "guitar", "planet", "forest", "silver", "rocket",
         "garden", "winter", "orange", "bridge", "candle", "island", "violin", "desert"]
TIMEOUT = 240_000  # ms; a page that waits behind the fine-tune in the queue shows it here
CHART = "[data-testid='stVegaLiteChart']"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-renderer-backgrounding",
               "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows"]


class CrossTalk(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# the server and its memory


CLK = os.sysconf("SC_CLK_TCK")


def _stat(path: str) -> list[str] | None:
    """Fields 3.. of a /proc stat file (after the command name): [0] state, [1] ppid,
    [11] utime, [12] stime, [16] nice."""
    try:
        with open(path) as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _cpu(fields: list[str]) -> float:
    return (int(fields[11]) + int(fields[12])) / CLK


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _machine() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot (/proc/stat)."""
    vals = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    total = sum(vals[:8])
    return (total - vals[3] - vals[4]) / CLK, total / CLK


class Monitor(threading.Thread):
    """Polls, every ``every`` s: VmRSS of the server and its descendants (peak per phase);
    CPU seconds of the server (all of it, and its threads running at a raised niceness: the
    queue's jobs), of the client side (this process, the Playwright driver, Chromium) and of
    the whole machine. ``mark(name)`` keeps the counters at a moment."""

    def __init__(self, pid: int, every: float = 0.25):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.phase = "start"
        self.peak: dict[str, int] = {}
        self.job_cpu: dict[int, float] = {}      # tid -> cpu, threads seen with nice > 0
        self.job_nice: set[int] = set()
        self.client_cpu: dict[int, float] = {}   # pid -> cpu
        self.server_cpu = 0.0
        self.marks: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._halt = threading.Event()

    def poll(self) -> None:
        parent: dict[int, int] = {}
        cpu: dict[int, float] = {}
        for d in os.scandir("/proc"):
            if d.name.isdigit():
                f = _stat(f"/proc/{d.name}/stat")
                if f:
                    parent[int(d.name)], cpu[int(d.name)] = int(f[1]), _cpu(f)
        kids: dict[int, list[int]] = {}
        for pid, pp in parent.items():
            kids.setdefault(pp, []).append(pid)

        def tree(root: int) -> set[int]:
            out, todo = set(), [root]
            while todo:
                p = todo.pop()
                out.add(p)
                todo.extend(kids.get(p, []))
            return out

        server = tree(self.pid)
        client = tree(os.getpid()) - server
        rss = sum(_status_kb(p, "VmRSS") for p in server) * 1024
        with self._lock:
            self.peak[self.phase] = max(self.peak.get(self.phase, 0), rss)
            self.server_cpu = max(self.server_cpu, sum(cpu.get(p, 0.0) for p in server))
            for p in client:
                self.client_cpu[p] = max(self.client_cpu.get(p, 0.0), cpu.get(p, 0.0))
            try:
                tasks = list(os.scandir(f"/proc/{self.pid}/task"))
            except OSError:
                tasks = []
            for t in tasks:
                f = _stat(f"/proc/{self.pid}/task/{t.name}/stat")
                if f and int(f[16]) > 0:
                    self.job_nice.add(int(f[16]))
                    self.job_cpu[int(t.name)] = max(self.job_cpu.get(int(t.name), 0.0), _cpu(f))

    def mark(self, name: str) -> None:
        self.poll()
        with self._lock:
            busy, total = _machine()
            self.marks[name] = {"t": time.monotonic(), "server": self.server_cpu,
                                "job": sum(self.job_cpu.values()),
                                "client": sum(self.client_cpu.values()),
                                "busy": busy, "total": total}

    def cpu_between(self, a: str, b: str) -> dict[str, float]:
        x, y = self.marks[a], self.marks[b]
        return {k: y[k] - x[k] for k in x}

    def run(self) -> None:
        while not self._halt.is_set():
            self.poll()
            self._halt.wait(self.every)

    def hwm(self) -> int:
        return _status_kb(self.pid, "VmHWM") * 1024

    def stop(self) -> None:
        self._halt.set()


def cores_for(pin: bool) -> tuple[set[int] | None, set[int] | None]:
    """(server cores, client cores): the first allowed core for the server, the rest for the
    clients; (None, None) when not pinning or on one core."""
    cores = sorted(os.sched_getaffinity(0))
    if not pin or len(cores) < 2:
        return None, None
    return {cores[0]}, set(cores[1:])


def affinity(pid: int) -> str:
    try:
        return ",".join(map(str, sorted(os.sched_getaffinity(pid))))
    except OSError:
        return "?"


def start_server(port: int, env: dict, cores: set[int] | None = None) -> subprocess.Popen:
    log = open(Path(tempfile.mkdtemp(prefix="bench-load-")) / "server.log", "wb")
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    proc = subprocess.Popen([sys.executable, str(ROOT / "deploy" / "check.py"), "start",
                             "--port", str(port), "--address", "127.0.0.1"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=pin)
    proc.log_path = log.name  # type: ignore[attr-defined]
    return proc


# ---------------------------------------------------------------------------------------------
# one visitor


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
        if self.word not in tokens:
            raise CrossTalk(f"visitor {self.name}: its word '{self.word}' is not in its head view "
                            f"({' '.join(tokens)[:120]})")
        foreign = [w for w in self.others if w in tokens]
        if foreign:
            raise CrossTalk(f"visitor {self.name} sees another visitor's word {foreign}")

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


async def baseline(browser, url: str, rounds: int, loads: int, think: float):
    times: dict[str, list[float]] = {}
    for k in range(loads):
        frames = Frames()
        ctx, page, _ = await new_page(browser, frames)
        v = Visitor("idle", page, url, WORDS[-1], [], times, think, frames)
        await v.first_view()
        if k == loads - 1:
            await v.type_text()
            for _ in range(rounds):
                await v.round()
        await ctx.close()
    return times


class Trainer:
    """Keeps one fine-tune running through the Aspect heads page."""

    def __init__(self, page):
        self.page = page
        self.runs: list[tuple[float, float | None]] = []  # (start, end) time.monotonic
        self.stop = asyncio.Event()
        self.started = asyncio.Event()
        self.error: str | None = None

    async def run(self, url: str) -> None:
        page = self.page
        try:
            await page.goto(url + "/aspects", timeout=TIMEOUT)
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

    def coverage(self, t0: float, t1: float) -> float:
        busy = 0.0
        for a, b in self.runs:
            b = t1 if b is None else b
            busy += max(0.0, min(b, t1) - max(a, t0))
        return busy / max(t1 - t0, 1e-9)


async def crowd(browser, url: str, n: int, rounds: int, think: float, tag: str):
    """``n`` visitors at once: first view, own text, ``rounds`` rounds. Returns (times,
    failures)."""
    times: dict[str, list[float]] = {}
    words = WORDS[:n]  # the idle visitor's is WORDS[-1]
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


async def load_phase(browser, url: str, args, monitor: Monitor, with_finetune: bool):
    name = "load" if with_finetune else "control"
    trainer, tctx, task = None, None, None
    if with_finetune:
        tctx, tpage, _ = await new_page(browser)
        trainer = Trainer(tpage)
        task = asyncio.create_task(trainer.run(url))
        await trainer.started.wait()
    monitor.phase = name
    monitor.mark(f"{name} start")
    times, failures = await crowd(browser, url, args.visitors, args.rounds, args.think,
                                  "c" if name == "control" else "")
    monitor.mark(f"{name} end")
    out = {"times": times, "failures": failures, "trainer": trainer,
           "wall": monitor.marks[f"{name} end"]["t"] - monitor.marks[f"{name} start"]["t"],
           "cpu": monitor.cpu_between(f"{name} start", f"{name} end")}
    if trainer is not None:
        trainer.stop.set()
        out["coverage"] = trainer.coverage(monitor.marks[f"{name} start"]["t"],
                                           monitor.marks[f"{name} end"]["t"])
        out["still_running"] = any(b is None for _, b in trainer.runs)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        await tctx.close()
    return out


# ---------------------------------------------------------------------------------------------
# report


def pct(xs, q):
    return float(np.percentile(xs, q)) if xs else float("nan")


def part(times: dict[str, list[float]], server: bool) -> dict[str, list[float]]:
    """The wall times (as the visitor sees them) or the server-side times, by kind."""
    if server:
        return {k[len(SERVER):]: v for k, v in times.items() if k.startswith(SERVER)}
    return {k: v for k, v in times.items() if not k.startswith(SERVER)}


def split(times: dict[str, list[float]]) -> tuple[list[float], list[float]]:
    times = part(times, False)
    first = times.get("first view", [])
    inter = [x for k, v in times.items() if k != "first view" for x in v]
    return first, inter


def table(idle: dict, loaded: dict, label: str, server: bool = False) -> float:
    """Rows of p50 / p95 idle vs ``label``; returns the interactions' p95 ratio."""
    idle, loaded = part(idle, server), part(loaded, server)
    print(f"{'':<22}{'idle n':>7}{'p50 s':>8}{'p95 s':>8}{label + ' n':>10}{'p50 s':>8}"
          f"{'p95 s':>8}{'p95 ratio':>10}")

    def row(name, a, b):
        r = pct(b, 95) / pct(a, 95) if a and b else float("nan")
        print(f"{name:<22}{len(a):>7}{pct(a, 50):>8.2f}{pct(a, 95):>8.2f}{len(b):>10}"
              f"{pct(b, 50):>8.2f}{pct(b, 95):>8.2f}{r:>10.2f}")
        return r

    f0, i0 = (idle.get("first view", []),
              [x for k, v in idle.items() if k != "first view" for x in v])
    f1, i1 = (loaded.get("first view", []),
              [x for k, v in loaded.items() if k != "first view" for x in v])
    row("time to first view", f0, f1)
    ratio = row("interactions (all)", i0, i1)
    for kind in sorted({k for k in list(idle) + list(loaded) if k != "first view"}):
        row(f"  {kind}", idle.get(kind, []), loaded.get(kind, []))
    return ratio


def cpu_line(phase: dict) -> str:
    c, wall = phase["cpu"], phase["wall"]
    cores = os.cpu_count() or 1
    other = c["busy"] - c["server"] - c["client"]
    return (f"CPU over the {wall:.0f} s ({wall * cores:.0f} core-s on {cores} cores, "
            f"{c['busy'] / max(wall * cores, 1e-9):.0%} busy): server {c['server']:.0f} s "
            f"(of which the queue's job {c['job']:.0f} s), client side (Chromium, Playwright) "
            f"{c['client']:.0f} s, other processes on the machine {max(other, 0):.0f} s")


def report(args, idle: dict, load: dict, control: dict | None, monitor: Monitor) -> float:
    gb = 1e9
    f1, i1 = split(load["times"])
    f0, i0 = split(idle)
    print(f"\n{args.visitors} visitors under load, {args.rounds} rounds each, think time "
          f"{args.think:g} s (x0.5-1.5) before each interaction, client side at niceness "
          f"{args.client_nice}: {len(i1)} interactions and "
          f"{len(f1)} first views measured under load; {len(i0)} and {len(f0)} for the idle "
          f"visitor")
    print("Wall: from the action to the result shown and the script idle, as the visitor sees "
          "it (Chromium's own work on this machine's cores included). Server: from the first "
          "websocket frame the page sends to the last one it receives (the server's share).")
    if control is not None:
        print(f"\ncontrol: the same visitors, no fine-tune (load phase {control['wall']:.0f} s)")
        table(idle, control["times"], "ctrl")
        print("server side:")
        table(idle, control["times"], "ctrl", server=True)
        print(cpu_line(control))
    print(f"\nunder load: the visitors while a fine-tune runs (load phase {load['wall']:.0f} s)")
    ratio = table(idle, load["times"], "load")
    print("server side:")
    s_ratio = table(idle, load["times"], "load", server=True)
    print(cpu_line(load))
    tr = load["trainer"]
    done = [b - a for a, b in tr.runs if b is not None]
    nice = ", ".join(str(n) for n in sorted(monitor.job_nice)) or "none seen"
    print(f"fine-tunes (demo defaults, through the queue): {len(tr.runs)} started, "
          f"{len(done)} finished ({', '.join(f'{d:.0f} s' for d in done) or 'none'}); one ran "
          f"during {load['coverage']:.0%} of the load phase"
          f"{' (still running at its end)' if load['still_running'] else ''}; job threads' "
          f"niceness: {nice}" + (f"; trainer error: {tr.error}" if tr.error else ""))
    peak = max(monitor.peak.values())
    print(f"\nserver RSS (VmRSS of the server and its children, peak): after warm-up, idle with "
          f"the default model and the example loaded {monitor.peak.get('idle', 0) / gb:.2f} GB; "
          f"one visitor {monitor.peak.get('baseline', 0) / gb:.2f} GB; "
          + (f"control {monitor.peak.get('control', 0) / gb:.2f} GB; " if control else "")
          + f"under load with the fine-tune {monitor.peak.get('load', 0) / gb:.2f} GB; "
          f"whole run {peak / gb:.2f} GB (kernel VmHWM {monitor.hwm() / gb:.2f} GB)")
    print(f"targets: peak RSS {peak / gb:.2f} GB <= 2.5 GB: "
          f"{'met' if peak <= 2.5e9 else 'NOT met'}; interaction p95 under load / idle "
          f"{ratio:.2f} (wall), {s_ratio:.2f} (server side) <= 2: "
          f"{'met' if ratio <= 2 else 'NOT met'} (wall), "
          f"{'met' if s_ratio <= 2 else 'NOT met'} (server side)")
    return ratio


def pinning(server: int, cores: set[int] | None) -> str:
    if not cores:
        return "pinning: none (--no-pin or one core): server and browsers share the cores"
    kids = [int(x) for x in subprocess.run(["pgrep", "-P", str(os.getpid())],
                                           capture_output=True, text=True).stdout.split()
            if int(x) != server]
    return (f"pinning: server pid {server} on core(s) {affinity(server)}; this process on "
            f"{affinity(os.getpid())}, the Playwright driver and Chromium on "
            f"{', '.join(sorted({affinity(k) for k in kids})) or '?'}")


def per_action(idle: dict, load: dict, control: dict | None, monitor: Monitor) -> None:
    """The server's CPU seconds per visitor action (first views and interactions) per phase,
    the queue's job threads (the fine-tune) left out."""
    def line(name: str, times: dict, cpu: dict) -> str:
        n = sum(len(v) for v in part(times, False).values())
        own = cpu["server"] - cpu["job"]
        return (f"{name} {own / max(n, 1):.2f} CPU-s per action ({own:.1f} s over {n} "
                "actions)")

    rows = [line("one idle visitor", idle, monitor.cpu_between("baseline start", "baseline end"))]
    if control is not None:
        rows.append(line("control", control["times"], control["cpu"]))
    rows.append(line("under load", load["times"], load["cpu"]))
    print("server CPU per visitor action (from /proc; the fine-tune's job threads left out): "
          + "; ".join(rows))


async def main_async(args) -> int:
    from playwright.async_api import async_playwright

    port = check.free_port()
    url = f"http://127.0.0.1:{port}"
    server_cores, client_cores = cores_for(args.pin)
    proc = start_server(port, check.demo_env(), server_cores)
    if client_cores:  # this process, then the Playwright driver and Chromium (they inherit it)
        os.sched_setaffinity(0, client_cores)
    if args.client_nice:
        # this process, the Playwright driver and Chromium (started below, they inherit it)
        # yield the cores to the server: the visitors' browsers stand in for other machines
        os.nice(args.client_nice)
    monitor = Monitor(proc.pid)
    monitor.start()
    t_start = time.monotonic()
    try:
        try:
            check.wait_healthy(url, proc)
        except check.Failed as exc:
            print(f"bench_load: {exc} (server log: {proc.log_path})", file=sys.stderr)
            return 1
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=check.CHROMIUM, args=LAUNCH_ARGS)
            print(pinning(proc.pid, server_cores), flush=True)
            try:
                monitor.phase = "warm-up"
                t = time.monotonic()
                await warm_up(browser, url)
                print(f"warm-up (every page once; not timed): {time.monotonic() - t:.0f} s",
                      flush=True)
                monitor.phase = "idle"
                await asyncio.sleep(3)
                monitor.phase = "baseline"
                monitor.mark("baseline start")
                idle = await baseline(browser, url, args.rounds, args.first_views, args.think)
                monitor.mark("baseline end")
                print(f"baseline (one idle visitor): {sum(map(len, part(idle, False).values()))} "
                      "timings",
                      flush=True)
                control = None
                if args.control:
                    control = await load_phase(browser, url, args, monitor, False)
                    print(f"control (no fine-tune): {control['wall']:.0f} s", flush=True)
                load = await load_phase(browser, url, args, monitor, True)
            finally:
                await browser.close()
        monitor.phase = "end"
        report(args, idle, load, control, monitor)
        per_action(idle, load, control, monitor)
        if server_cores:
            print(f"the interaction p95 ratios above are the server's own core's: the server ran "
                  f"on core(s) {','.join(map(str, sorted(server_cores)))}, the browsers on "
                  f"{','.join(map(str, sorted(client_cores)))}")
        print(f"whole benchmark: {time.monotonic() - t_start:.0f} s")
        failures = load["failures"] + (control["failures"] if control else [])
        if failures:
            print(f"{len(failures)} visitor(s) failed:")
            for f in failures:
                print(f"  {f}")
            return 1
        print("no cross-talk: every visitor saw its own word and no other visitor's")
        return 0
    finally:
        monitor.stop()
        check.stop(proc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--visitors", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2, help="interaction rounds per visitor")
    ap.add_argument("--think", type=float, default=2.0,
                    help="mean seconds a visitor waits before each interaction (0: none)")
    ap.add_argument("--first-views", type=int, default=3,
                    help="first views of the idle visitor (fresh contexts)")
    ap.add_argument("--client-nice", type=int, default=19,
                    help="niceness of the client side (this process, Playwright, Chromium), "
                         "so that the browsers on this machine take the cores the server does "
                         "not use (0: same priority as the server)")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="do not pin the server to one core and the browsers to the others")
    ap.add_argument("--control", action="store_true",
                    help="also run the visitors without the fine-tune first (a control)")
    args = ap.parse_args()
    if not 1 <= args.visitors < len(WORDS):
        ap.error(f"--visitors must be from 1 to {len(WORDS) - 1} (one word each)")
    if not 0 <= args.client_nice <= 19:
        ap.error("--client-nice must be from 0 to 19")
    if not Path(check.CHROMIUM).exists():
        print(f"bench_load: {check.CHROMIUM} is absent (apt-get install chromium)",
              file=sys.stderr)
        return 2
    os.environ.setdefault("DASHBOARD_MODE", "demo")
    from analysis.example import example_ready, missing_message

    if not example_ready():
        print(f"bench_load: {missing_message()}", file=sys.stderr)
        return 2
    def terminated(signum, frame):  # stop the server on the way out, as on Ctrl-C
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, terminated)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
