"""Server CPU per visitor action: the dashboard in demo mode vs a bare Streamlit page, side by
side in one run (issue 23 part 4; bench/README.md).

    python -m bench.server.cpu            # about 4 minutes on 2 cores
    # options: --samples 8 --per-sample 3 --settle 0.4 --kinds layer,view

Two servers start on 127.0.0.1: (a) the dashboard exactly as the image starts it
(``deploy/check.py start``, DASHBOARD_MODE=demo) and (b) bench/server/bare_app.py with the same
Streamlit flags (a title, a text box, a button, a few lines of text: a bare page's rerun). Both
servers are pinned to one core and this process, the Playwright driver and Chromium to the other
(os.sched_setaffinity, inherited by the children), so the browsers' work never lands on the
servers' core; the pinning is printed and read back from /proc.

One Chromium visitor warms the dashboard up (Attention and No-op statistics opened, so their
results are cached, as for any visitor after the first), then for each action kind repeats the
action: the SERVER's CPU seconds are utime+stime of the server process and its children
(/proc/PID/stat) read before the action and again after the page shows the action's result with
its script idle plus ``--settle`` s (the last frames sent, the session's bookkeeping done),
minus the server's idle rate over that time (measured with the page open and nobody acting).
/proc counts in clock ticks (10 ms), so one sample is ``--per-sample`` actions in a row, divided
by their number; ``--samples`` samples per kind give the median and p90.

Kinds: dashboard: page switch (Attention <-> No-op statistics, from the sidebar), layer change
and view change (head view <-> model view) on the Attention page, text change in the sidebar
(two sentences in turn: their results are cached after the first, so this is the rerun's cost)
and new text (a sentence never seen: one forward pass of the model included); bare: button click
and text change. Printed per kind: dashboard CPU-s (p50, p90), the bare page's for the matching
action (text changes vs its text change, the others vs its button click) and the ratio of the
medians. Target: ratio <= 3 for every kind (new text is shown for what a forward pass adds; the
target is for the rerun).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import harness
from bench.server.load_chromium import LAUNCH_ARGS
from bench.server.load_monitor import affinity, tree_cpu
from deploy import check  # the start command, health, free port

ROOT = harness.ROOT

IDLE = check.IDLE
TIMEOUT = 300_000  # ms
CHART = "[data-testid='stVegaLiteChart']"
TOKENS = ".av-head .av-col-from .av-tok"
TEXTS = [("The pasta was superb, but the waiter was rude.", "pasta"),
         ("Our table was cold and the music far too loud.", "music")]
ADJ = ["red", "green", "blue", "black", "white", "small", "large", "quiet", "happy", "old"]
NOUN = ["dog", "house", "car", "tree", "book", "river", "chair", "city", "horse", "garden"]
# kind -> the bare page's action it is compared with
MATCH = {"page switch": "button click", "layer change": "button click",
         "view change": "button click", "text change": "text change",
         "new text (forward pass)": "text change"}


def start(cmd: list[str], env: dict, core: int | None, log: Path) -> subprocess.Popen:
    pin = (lambda: os.sched_setaffinity(0, {core})) if core is not None else None
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT, preexec_fn=pin)


class Meter:
    """The CPU seconds one server spends per action."""

    def __init__(self, page, pid: int, settle: float):
        self.page, self.pid, self.settle = page, pid, settle
        self.idle_rate = 0.0
        self.results: dict[str, list[float]] = {}

    async def quiet(self) -> None:
        await self.page.wait_for_selector(IDLE, timeout=TIMEOUT)
        await asyncio.sleep(self.settle)

    async def measure_idle(self, seconds: float = 5.0) -> None:
        await self.quiet()
        c0, t0 = tree_cpu(self.pid), time.monotonic()
        await asyncio.sleep(seconds)
        self.idle_rate = (tree_cpu(self.pid) - c0) / (time.monotonic() - t0)

    async def kind(self, name: str, act, samples: int, per: int) -> None:
        """``act(i)`` does action number i and waits for its result; one unmeasured first."""
        await act(0)
        i, out = 1, []
        for _ in range(samples):
            await self.quiet()
            c0, t0 = tree_cpu(self.pid), time.monotonic()
            for _ in range(per):
                await act(i)
                i += 1
            await self.quiet()
            spent = tree_cpu(self.pid) - c0 - self.idle_rate * (time.monotonic() - t0)
            out.append(max(spent, 0.0) / per)
        self.results[name] = out
        print(f"  {name}: p50 {np.median(out) * 1e3:.0f} ms CPU per action", flush=True)


async def done(page, *ready: str) -> None:
    for sel in ready:
        await page.locator(sel).first.wait_for(timeout=TIMEOUT)
    await page.wait_for_selector(IDLE, timeout=TIMEOUT)


async def dashboard(browser, url: str, pid: int, args) -> dict[str, list[float]]:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    try:
        for path, title, ready in check.PAGES[:2]:  # warm-up: Attention, No-op statistics
            await page.goto(url + path, timeout=TIMEOUT)
            await done(page, f"h1:has-text('{title}')", ready)
        await page.goto(url + "/", timeout=TIMEOUT)
        await done(page, "h1:has-text('Attention')", TOKENS)
        m = Meter(page, pid, args.settle)
        await m.measure_idle()
        print(f"dashboard: idle {m.idle_rate * 1e3:.1f} ms CPU per s (subtracted)", flush=True)
        spy = None
        if args.py_spy:  # samples the server's busy threads while the actions run
            spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--format", "raw",
                                    "--rate", "250", "--nonblocking", "-o", args.py_spy],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        box = page.get_by_role("textbox", name="Text", exact=True)

        async def switch(i: int) -> None:
            title, ready = ("No-op statistics", CHART) if i % 2 == 0 else ("Attention", TOKENS)
            link = page.locator("[data-testid='stSidebarNav'] a", has_text=title).first
            await link.click()
            await done(page, f"h1:has-text('{title}')", ready)

        async def layer(i: int) -> None:
            n = str([2, 3, 4, 5, 6, 1][i % 6])
            sel = page.get_by_test_id("stSelectbox").filter(
                has=page.get_by_text("Layer", exact=True))
            await sel.first.click()
            await page.get_by_role("option", name=n, exact=True).click()
            await done(page, f".av-head[data-layer='{n}']")

        async def view(i: int) -> None:
            name, ready = (("Model view", ".av-model .av-cell") if i % 2 == 0
                           else ("Head view", TOKENS))
            await page.get_by_test_id("stButtonGroup").get_by_text(name, exact=True).click()
            await done(page, ready)

        async def text(i: int) -> None:
            sentence, word = TEXTS[i % 2]
            await box.fill(sentence)
            await box.press("Control+Enter")
            await done(page, f"{TOKENS}[data-token='{word}']")

        async def new_text(i: int) -> None:
            a, n = ADJ[i % len(ADJ)], NOUN[(i // len(ADJ)) % len(NOUN)]
            await box.fill(f"The {a} {n} was lovely.")
            await box.press("Control+Enter")
            await done(page, f".av-head .av-col-from:has(.av-tok[data-token='{a}'])"
                             f":has(.av-tok[data-token='{n}'])")

        kinds = {"page switch": switch, "layer change": layer, "view change": view,
                 "text change": text, "new text (forward pass)": new_text}
        for name, act in kinds.items():
            if args.kinds and not any(name.startswith(k) for k in args.kinds):
                continue
            await m.kind(name, act, args.samples, args.per_sample)
            if name in ("page switch", "view change"):
                await act(1)  # back to the Attention page's head view (unmeasured)
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
        return m.results
    finally:
        await ctx.close()


async def bare(browser, url: str, pid: int, args, label: str) -> dict[str, list[float]]:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    try:
        await page.goto(url + "/", timeout=TIMEOUT)
        await done(page, "h1:has-text('Bare page')")
        m = Meter(page, pid, args.settle)
        await m.measure_idle()
        print(f"{label}: idle {m.idle_rate * 1e3:.1f} ms CPU per s (subtracted)", flush=True)
        clicks = {"n": 0}

        async def click(i: int) -> None:
            await page.get_by_role("button", name="Click").click()
            clicks["n"] += 1
            await done(page, f"text='Clicked {clicks['n']} times.'")

        async def text(i: int) -> None:
            sentence = TEXTS[i % 2][0]
            box = page.get_by_role("textbox", name="Text", exact=True)
            await box.fill(sentence)
            await box.press("Enter")
            await done(page, f"text='You typed: {sentence}'")

        await m.kind("button click", click, args.samples, args.per_sample)
        await m.kind("text change", text, args.samples, args.per_sample)
        return m.results
    finally:
        await ctx.close()


def report(dash: dict, floor: dict, frozen: dict, run: harness.Run) -> list[float]:
    def p(xs, q):
        return float(np.percentile(xs, q)) * 1e3

    print(f"\n{'action':<25}{'dashboard':>10}{'p90':>6}  {'bare action':<13}{'bare':>6}{'p90':>6}"
          f"{'ratio':>6}  {'frozen':>6}{'ratio':>6}   (server CPU ms per action, p50 unless "
          "p90)")
    ratios = []
    for kind, xs in dash.items():
        ys, zs = floor[MATCH[kind]], frozen[MATCH[kind]]
        r = np.median(xs) / max(np.median(ys), 1e-9)
        rz = np.median(xs) / max(np.median(zs), 1e-9)
        if not kind.startswith("new text"):
            ratios.append(r)
        print(f"{kind:<25}{p(xs, 50):>10.1f}{p(xs, 90):>6.1f}  {MATCH[kind]:<13}{p(ys, 50):>6.1f}"
              f"{p(ys, 90):>6.1f}{r:>6.1f}  {p(zs, 50):>6.1f}{rz:>6.1f}")
        run.row(kind, cpu_ms_p50=p(xs, 50), cpu_ms_p90=p(xs, 90), bare_action=MATCH[kind],
                bare_cpu_ms_p50=p(ys, 50), ratio=r, frozen_cpu_ms_p50=p(zs, 50),
                ratio_frozen=rz)
    print("ratio: to the bare page as Streamlit ships it; frozen: to the bare page with its heap "
          "frozen out of the post-rerun gc.collect(2) as the dashboard's is (a stricter floor)")
    return ratios


async def main_async(args, run: harness.Run) -> int:
    from playwright.async_api import async_playwright

    cores = sorted(os.sched_getaffinity(0))
    server_core, client_core = (cores[0], cores[1]) if len(cores) >= 2 else (None, None)
    tmp = Path(tempfile.mkdtemp(prefix="bench-server-cpu-"))
    env = check.demo_env()
    ports = check.free_port(), check.free_port(), check.free_port()
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    dash_proc = start([sys.executable, str(ROOT / "deploy" / "check.py"), "start", "--port",
                       str(ports[0]), "--address", "127.0.0.1"], env, server_core,
                      tmp / "dashboard.log")
    bare_cmd = check.streamlit_command(sys.executable, ports[1], "127.0.0.1")
    bare_app = str(ROOT / "bench" / "server" / "bare_app.py")
    bare_cmd[bare_cmd.index(str(ROOT / "app.py"))] = bare_app
    bare_proc = start(bare_cmd, env, server_core, tmp / "bare.log")
    frozen_cmd = check.streamlit_command(sys.executable, ports[2], "127.0.0.1")
    frozen_cmd[frozen_cmd.index(str(ROOT / "app.py"))] = bare_app
    frozen_proc = start(frozen_cmd, {**env, "BARE_FREEZE": "1"}, server_core, tmp / "frozen.log")
    if client_core is not None:
        os.sched_setaffinity(0, {client_core})  # Playwright and Chromium inherit it
    try:
        for url, proc in zip(urls, (dash_proc, bare_proc, frozen_proc)):
            check.wait_healthy(url, proc)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=check.CHROMIUM, args=LAUNCH_ARGS)
            try:
                chrome = [int(x) for x in subprocess.run(
                    ["pgrep", "-P", str(os.getpid())], capture_output=True,
                    text=True).stdout.split()
                          if int(x) not in (dash_proc.pid, bare_proc.pid, frozen_proc.pid)]
                print(f"pinning: dashboard server pid {dash_proc.pid} on core(s) "
                      f"{affinity(dash_proc.pid)}, bare server pid {bare_proc.pid} on "
                      f"{affinity(bare_proc.pid)}, frozen bare server pid {frozen_proc.pid} on "
                      f"{affinity(frozen_proc.pid)}; this process on {affinity(os.getpid())}, "
                      f"its children (Playwright driver -> Chromium) on "
                      f"{', '.join(affinity(c) for c in chrome) or '?'}"
                      + ("" if server_core is not None else " (one core: nothing pinned)"))
                floor = await bare(browser, urls[1], bare_proc.pid, args, "bare page")
                frozen = await bare(browser, urls[2], frozen_proc.pid, args,
                                    "bare page, heap frozen")
                dash = await dashboard(browser, urls[0], dash_proc.pid, args)
            finally:
                await browser.close()
    except check.Failed as exc:
        print(f"bench.server.cpu: {exc} (logs in {tmp})", file=sys.stderr)
        return 1
    finally:
        check.stop(dash_proc)
        check.stop(bare_proc)
        check.stop(frozen_proc)
    ratios = report(dash, floor, frozen, run)
    worst = max(ratios) if ratios else float("nan")
    print(f"\n{args.samples} samples of {args.per_sample} actions per kind. Target: every "
          f"rerun kind <= 3x the bare page: {'met' if worst <= 3 else 'NOT met'} "
          f"(worst {worst:.1f}x)")
    run.done()
    return 0


def main() -> int:
    ap = harness.parser(__doc__, torch=False)
    ap.add_argument("--samples", type=int, default=8, help="samples per action kind")
    ap.add_argument("--per-sample", type=int, default=3, help="actions per sample")
    ap.add_argument("--settle", type=float, default=0.4,
                    help="seconds after the script is idle before the CPU is read")
    ap.add_argument("--py-spy", default="", metavar="FILE",
                    help="also record the dashboard server's busy threads with py-spy (collapsed "
                         "stacks, pip install py-spy) while its actions run")
    ap.add_argument("--kinds", default="", help="comma-separated dashboard kind prefixes")
    args = ap.parse_args()
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if args.samples < 1 or args.per_sample < 1 or args.settle < 0:
        ap.error("--samples and --per-sample must be >= 1, --settle >= 0")
    if not Path(check.CHROMIUM).exists():
        print(f"bench.server.cpu: {check.CHROMIUM} is absent", file=sys.stderr)
        return 2
    return asyncio.run(main_async(args, harness.start(args)))


if __name__ == "__main__":
    sys.exit(main())
