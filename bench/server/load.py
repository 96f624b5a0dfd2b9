"""Load benchmark of the public demo: one server in demo mode, many visitors at once while a
fine-tune runs, against a single idle visitor in the same run (bench/README.md).

    python -m bench.server.load             # about 5-6 minutes on 2 cores
    # options: --visitors 10 --rounds 2 --think 2 --first-views 3 --client-nice 19 --control
    #          --no-pin

Visitors: one Playwright browser context each (bench/server/load_chromium.py: a real Chromium, the
public interface; times from the click to the page idle, and Chromium's websocket frame
timestamps), whose browsers on one 2-core machine take a whole core and make the times theirs.
(A client speaking Streamlit's private websocket protobufs was removed: bench/README.md keeps
its measurements as history.)

One server is started as the image starts it (``deploy/check.py start``, DASHBOARD_MODE=demo;
the example checkpoint must be built in $DASHBOARD_CACHE). Phases, all in this one run:

1. warm-up (not timed): one visitor opens every page, so the server computes and caches what a
   first visitor sees (No-op statistics of the sample corpus, drift from the embedded model to
   the example checkpoint, the example's aspect heads). Server RSS after it: "idle, both models
   loaded".
2. baseline: one visitor alone (the idle server): ``--first-views`` first views of the Attention
   page (fresh sessions), then ``--rounds`` rounds of the interactions below.
3. (``--control``) the visitors of phase 4 without the fine-tune: what the visitors alone cost.
4. load: a Trainer (a browser context too) opens Aspect heads, picks "Fine-tune on the
   bundled sample" and presses Fine-tune (the demo's defaults, through the server's queue;
   pressed again whenever a fine-tune ends, so one runs throughout); meanwhile ``--visitors``
   visitors each open the Attention page (first view), type their own text, then do the rounds.

Interactions of a round, each after a think time (``--think`` s, x0.5-1.5): Attention page layer
change, Model view, back to Head view, open No-op statistics, open Fine-tuning drift, back to
Attention. No cross-talk: each visitor types its own sentence (its own word) and checks, after
typing and every time it comes back to the Attention page, that the head view shows its own word
and none of the other visitors'.

Pinning (``--no-pin`` to leave it): the server (and its children: the fine-tune) runs on one
core and this process (Playwright and Chromium) on the others (os.sched_setaffinity, inherited
by children); the client side also runs at niceness ``--client-nice`` (19). The pinning is
printed and read back from /proc.

Printed: p50 / p95 of time to first view and of the interactions (overall and per kind), idle
vs under load, their ratio and counts; CPU seconds of the server's own process (and of the
queue's job threads in it), of its child processes (the fine-tune,
analysis/core/execution/child.py), of the
client side and of the rest of the machine during each crowd phase; the server's peak RSS per
phase (VmRSS of the server process and its children, polled every 0.25 s, and the kernel's
VmHWM); the fine-tunes and how much of the load phase one was running; the server's own CPU
seconds per visitor action in each phase (the job threads and the child processes left out).
Targets: peak RSS <= 2.5 GB; interaction p95 under load <= 2x the idle p95; no cross-talk.
Exit status 1 when a visitor saw another visitor's text or a page failed; 2 when Chromium
or the example checkpoint is missing.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from bench import harness
from bench.server import load_chromium
from bench.server.load_monitor import Monitor, cores_for, pinning, start_server
from bench.server.load_report import part, per_action, report
from deploy import check  # the start command, health, free port

WORDS = ["apple", "river", "castle", "guitar", "planet", "forest", "silver", "rocket",
         "garden", "winter", "orange", "bridge", "candle", "island", "violin", "desert"]


class Chromium:
    """The phases with Chromium visitors (bench/server/load_chromium.py)."""

    def __init__(self, browser):
        self.browser = browser

    async def warm_up(self, url):
        await load_chromium.warm_up(self.browser, url)

    async def baseline(self, url, args, word):
        return await load_chromium.baseline(self.browser, url, args.rounds, args.first_views,
                                            args.think, word)

    async def crowd(self, url, args, tag, words):
        return await load_chromium.crowd(self.browser, url, args.visitors, args.rounds,
                                         args.think, tag, words)

    def trainer(self, url):
        return load_chromium.Trainer(self.browser, url)


async def load_phase(clients, url: str, args, monitor: Monitor, with_finetune: bool):
    name = "load" if with_finetune else "control"
    trainer, task = None, None
    if with_finetune:
        trainer = clients.trainer(url)
        task = asyncio.create_task(trainer.run())
        await trainer.started.wait()
    monitor.phase = name
    monitor.mark(f"{name} start")
    times, failures = await clients.crowd(url, args, "c" if name == "control" else "",
                                          WORDS[:args.visitors])  # the idle one's: WORDS[-1]
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
        await trainer.close()
    return out


async def phases(clients, url: str, args, monitor: Monitor):
    """Warm-up, baseline, (control), load: (idle times, control or None, load)."""
    monitor.phase = "warm-up"
    t = time.monotonic()
    await clients.warm_up(url)
    print(f"warm-up (not timed): {time.monotonic() - t:.0f} s", flush=True)
    monitor.phase = "idle"
    await asyncio.sleep(3)
    monitor.phase = "baseline"
    monitor.mark("baseline start")
    idle = await clients.baseline(url, args, WORDS[-1])
    monitor.mark("baseline end")
    print(f"baseline (one idle visitor): {sum(map(len, part(idle, False).values()))} timings",
          flush=True)
    control = None
    if args.control:
        control = await load_phase(clients, url, args, monitor, False)
        print(f"control (no fine-tune): {control['wall']:.0f} s", flush=True)
    load = await load_phase(clients, url, args, monitor, True)
    return idle, control, load


async def main_async(args, run: harness.Run) -> int:
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
            print(f"bench.server.load: {exc} (server log: {proc.log_path})", file=sys.stderr)
            return 1
        from playwright.async_api import async_playwright

        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=check.CHROMIUM,
                                              args=load_chromium.LAUNCH_ARGS)
            print(pinning(proc.pid, server_cores), flush=True)
            try:
                idle, control, load = await phases(Chromium(browser), url, args, monitor)
            finally:
                await browser.close()
        monitor.phase = "end"
        ratio = report(args, idle, load, control, monitor)
        per_action(idle, load, control, monitor)
        run.row("interaction p95 under load / idle (wall)", ratio=ratio,
                peak_rss_bytes=max(monitor.peak.values()), vmhwm_bytes=monitor.hwm(),
                load_phase_seconds=load["wall"], visitors=args.visitors)
        if server_cores:
            print(f"the interaction p95 ratios above are the server's own core's: the server ran "
                  f"on core(s) {','.join(map(str, sorted(server_cores)))}, the clients on "
                  f"{','.join(map(str, sorted(client_cores)))}")
        print(f"whole benchmark: {time.monotonic() - t_start:.0f} s")
        run.done()
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
    ap = harness.parser(__doc__, torch=False)
    ap.add_argument("--visitors", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2, help="interaction rounds per visitor")
    ap.add_argument("--think", type=float, default=2.0,
                    help="mean seconds a visitor waits before each interaction (0: none)")
    ap.add_argument("--first-views", type=int, default=3,
                    help="first views of the idle visitor (fresh contexts)")
    ap.add_argument("--client-nice", type=int, default=19,
                    help="niceness of the client side (this process, and Playwright and "
                         "Chromium), so that the clients on this machine take the cores the "
                         "server does not use")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="do not pin the server to one core and the clients to the others")
    ap.add_argument("--control", action="store_true",
                    help="also run the visitors without the fine-tune first (a control)")
    args = ap.parse_args()
    if not 1 <= args.visitors < len(WORDS):
        ap.error(f"--visitors must be from 1 to {len(WORDS) - 1} (one word each)")
    if not 0 <= args.client_nice <= 19:
        ap.error("--client-nice must be from 0 to 19")
    if not Path(check.CHROMIUM).exists():
        print(f"bench.server.load: {check.CHROMIUM} is absent (apt-get install chromium)",
              file=sys.stderr)
        return 2
    os.environ.setdefault("DASHBOARD_MODE", "demo")
    from analysis.core.example import example_ready, missing_message

    if not example_ready():
        print(f"bench.server.load: {missing_message()}", file=sys.stderr)
        return 2
    run = harness.start(args)

    def terminated(signum, frame):  # stop the server on the way out, as on Ctrl-C
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, terminated)
    return asyncio.run(main_async(args, run))


if __name__ == "__main__":
    sys.exit(main())
