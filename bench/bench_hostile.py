"""Hostile visitor benchmark (issue 24): the server's peak memory and /_stcore/health latency
while crafted inputs run against a demo-mode server on 127.0.0.1.

Starts the app as the Docker image does (``deploy/check.py start``, DASHBOARD_MODE=demo), polls
``/_stcore/health`` every 0.1 s from a thread (latency of each answer; a failure counts as the
timeout) and the resident memory of the server and its children every 0.25 s (bench_load's
Monitor), and meanwhile sends, from ``--tabs`` Chromium tabs at once, each ``--rounds`` times:

- Report: the 299-byte report whose chart claims 23,000 x 23,000 px, and one whose chart is
  200 half-transparent 2,000 px squares (213 s to draw), each opened and exported as
  "Markdown + PNG (.zip)" (the download is awaited: it is drawn on the server);
- Report: a report.json nested 100,000 levels deep and one with a 1,000,000-digit integer;
- Aspect heads: a 200 KB checkpoint .zip whose config declares a 637M-parameter BERT (one
  tensor of weights, the embedded tokenizer, a card), uploaded in every tab.

Prints the health latency p50 / p95 / max during the attack (target p95 < 100 ms), the peak
resident memory before and during it against ``--cap-gb`` (target: below 3 GB), and whether
each page answered with its one-line message. Exit status 1 when a target is missed or the
server died.

    python bench/bench_hostile.py [--tabs 3] [--rounds 2] [--cap-gb 3]

Needs Chromium (/usr/bin/chromium) and Playwright; not the example checkpoint.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_load import LAUNCH_ARGS, Monitor, check, start_server  # noqa: E402

IDLE = check.IDLE
TIMEOUT = 180_000
ERROR = "[data-testid='stAlertContentError']"
DOWNLOAD_TIMEOUT = 400_000  # a .zip waits for the other tabs' drawings (30 s each at most)
BIG_CONFIG = {"model_type": "bert", "architectures": ["BertForSequenceClassification"],
              "hidden_size": 1024, "num_hidden_layers": 48, "num_attention_heads": 16,
              "intermediate_size": 4096, "vocab_size": 30522, "max_position_embeddings": 512,
              "type_vocab_size": 2, "num_labels": 5}


def crafted(folder: Path) -> dict[str, Path]:
    """The crafted files, written to ``folder``."""
    from analysis.models import default_model_path

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="23000" height="23000">'
           '<rect width="23000" height="23000" fill="#3b6fd8"/></svg>')
    squares = "".join(f'<rect x="{i}" y="{i}" width="2000" height="2000" fill="#3b6fd8" '
                      f'opacity="0.1"/>' for i in range(200))
    slow = ('<svg xmlns="http://www.w3.org/2000/svg" width="2828" height="2828">' + squares
            + "</svg>")
    head = {"format": "attention-dashboard-report", "version": 1}
    files = {
        "big_png": json.dumps({**head, "findings": [{"title": "big", "svg": svg}]}),
        "slow_png": json.dumps({**head, "findings": [{"title": "slow", "svg": slow}]}),
        "deep": json.dumps(head)[:-1] + ', "findings": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "huge_int": json.dumps(head)[:-1] + ', "findings": [{"title": "x", "rows": [['
                    + "1" * 1_000_000 + "]]}]}",
    }
    out = {}
    for name, text in files.items():
        out[name] = folder / f"{name}.json"
        out[name].write_text(text, encoding="utf-8")
    header = json.dumps({"classifier.bias": {"dtype": "F32", "shape": [5],
                                             "data_offsets": [0, 20]}}).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("config.json", json.dumps(BIG_CONFIG))
        zf.writestr("model.safetensors", len(header).to_bytes(8, "little") + header + b"\0" * 20)
        zf.write(Path(default_model_path()) / "tokenizer.json", "tokenizer.json")
        zf.writestr("absa_card.json", json.dumps({"task": "qa_m", "kind": "absa-sentence-pair"}))
    out["big_zip"] = folder / "big-model.zip"
    out["big_zip"].write_bytes(buf.getvalue())
    return out


class Health(threading.Thread):
    """GET /_stcore/health every ``every`` s; latency in ms per phase (a failure: the timeout)."""

    def __init__(self, url: str, every: float = 0.1, timeout: float = 30.0):
        super().__init__(daemon=True)
        self.url, self.every, self.timeout = url, every, timeout
        self.phase, self.times, self.failures = "idle", {}, {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            t = time.perf_counter()
            ok = check.health_ok(self.url, self.timeout)
            ms = (time.perf_counter() - t) * 1000 if ok else self.timeout * 1000
            self.times.setdefault(self.phase, []).append(ms)
            if not ok:
                self.failures[self.phase] = self.failures.get(self.phase, 0) + 1
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()


async def _settle(page) -> None:
    """Until the rerun a click or an upload started has finished."""
    await asyncio.sleep(0.7)
    await page.wait_for_selector(IDLE, timeout=TIMEOUT)


async def _said(page) -> str:
    """The first line of text of the page's error or warning box ('' when none)."""
    texts = await page.locator("[data-testid='stAlertContentError'], "
                               "[data-testid='stAlertContentWarning']").all_inner_texts()
    lines = [line for t in texts[:1] for line in t.splitlines()[1:] if line.strip()]
    return lines[0] if lines else ""


async def _open_report(page, url: str, path: Path) -> str:
    """Upload ``path`` on the Report page and open it; what the page said."""
    await page.locator("[data-testid='stFileUploaderDropzoneInput']").first \
        .set_input_files(str(path))
    await page.locator(ERROR).first.wait_for(state="detached", timeout=TIMEOUT)
    await _settle(page)
    await page.get_by_role("button", name="Open this report").click()
    await page.locator(f"{ERROR}, input[aria-label='Report title']").first \
        .wait_for(timeout=TIMEOUT)
    await _settle(page)
    return await _said(page) or "opened"


async def attack_report(browser, url: str, files: dict, rounds: int) -> list[str]:
    """One tab: the crafted reports, each chart report in a fresh session (a new page) and
    exported as "Markdown + PNG (.zip)"; returns what the page said (one line each)."""
    ctx = await browser.new_context(accept_downloads=True)
    said = []
    try:
        for _ in range(rounds):
            page = await ctx.new_page()
            await page.goto(url + "/report", timeout=TIMEOUT)
            await _settle(page)
            for name in ("deep", "huge_int"):
                said.append(f"{name}: " + await _open_report(page, url, files[name]))
            await page.close()
            for name in ("big_png", "slow_png"):
                page = await ctx.new_page()
                await page.goto(url + "/report", timeout=TIMEOUT)
                await _settle(page)
                said.append(f"{name}: " + await _open_report(page, url, files[name]))
                t = time.monotonic()
                try:
                    async with page.expect_download(timeout=DOWNLOAD_TIMEOUT) as dl:
                        await page.get_by_role("button", name="Markdown + PNG (.zip)").click()
                    z = zipfile.ZipFile(await (await dl.value).path())
                    pngs = sum(n.endswith(".png") for n in z.namelist())
                    said.append(f"its .zip: {pngs} PNG in {time.monotonic() - t:.0f} s")
                except Exception as exc:  # noqa: BLE001 - reported, the tab goes on
                    said.append(f"its .zip: none after {time.monotonic() - t:.0f} s "
                                f"({type(exc).__name__})")
                await page.close()
    finally:
        await ctx.close()
    return said


async def attack_checkpoint(browser, url: str, files: dict, rounds: int) -> list[str]:
    """One tab: the 637M-parameter checkpoint .zip on Aspect heads."""
    ctx = await browser.new_context()
    page = await ctx.new_page()
    said = []
    try:
        await page.goto(url + "/aspects", timeout=TIMEOUT)
        await page.get_by_text("Upload a checkpoint .zip").first.click()
        await _settle(page)
        for _ in range(rounds):
            await page.locator("[data-testid='stFileUploaderDropzoneInput']").first \
                .set_input_files(str(files["big_zip"]))
            await page.locator(ERROR).first.wait_for(timeout=TIMEOUT)
            await _settle(page)
            said.append("zip: " + (await _said(page) or "no message"))
    finally:
        await ctx.close()
    return said


async def warm_up(browser, url: str) -> None:
    """The two attacked pages once each (the server imports torch and builds them)."""
    ctx = await browser.new_context()
    page = await ctx.new_page()
    try:
        for path in ("/report", "/aspects"):
            await page.goto(url + path, timeout=TIMEOUT)
            await _settle(page)
        await page.get_by_text("Upload a checkpoint .zip").first.click()
        await _settle(page)
    finally:
        await ctx.close()


def pct(xs, q) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


async def main_async(args) -> int:
    from playwright.async_api import async_playwright

    port = check.free_port()
    url = f"http://127.0.0.1:{port}"
    files = crafted(Path(tempfile.mkdtemp(prefix="bench-hostile-")))
    proc = start_server(port, check.demo_env())
    monitor, health = Monitor(proc.pid), Health(url)
    monitor.start()
    ok = True
    try:
        check.wait_healthy(url, proc)
        health.start()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=check.CHROMIUM, args=LAUNCH_ARGS)
            try:
                monitor.phase = health.phase = "warm-up"
                await warm_up(browser, url)  # first imports and page runs: not the attack's
                monitor.phase = health.phase = "idle"
                await asyncio.sleep(5)
                monitor.phase = health.phase = "attack"
                t = time.monotonic()
                runs = [attack_report(browser, url, files, args.rounds) for _ in range(args.tabs)]
                runs += [attack_checkpoint(browser, url, files, args.rounds)
                         for _ in range(args.tabs)]
                results = await asyncio.gather(*runs, return_exceptions=True)
                wall = time.monotonic() - t
                monitor.phase = health.phase = "after"
                await asyncio.sleep(3)
            finally:
                await browser.close()
        for k, r in enumerate(results):
            kind = "report" if k < args.tabs else "checkpoint"
            if isinstance(r, BaseException):
                ok = False
                print(f"tab {k} ({kind}): FAILED {type(r).__name__}: {str(r).splitlines()[0]}")
            else:
                print(f"tab {k} ({kind}): " + " | ".join(r))
        att = health.times.get("attack", [])
        p95 = pct(att, 95)
        peak = max(monitor.peak.values()) / 2**30
        print(f"attack: {args.tabs} report tabs + {args.tabs} checkpoint tabs, {args.rounds} "
              f"round(s) each, {wall:.0f} s")
        print(f"health during the attack: {len(att)} probes, p50 {pct(att, 50):.0f} ms, "
              f"p95 {p95:.0f} ms, max {max(att or [0]):.0f} ms, "
              f"failures {health.failures.get('attack', 0)}; idle p95 "
              f"{pct(health.times.get('idle', []), 95):.0f} ms")
        print("peak resident memory (server and children): " + ", ".join(
            f"{k} {v / 2**30:.2f} GB" for k, v in monitor.peak.items())
            + f"; kernel VmHWM {monitor.hwm() / 2**30:.2f} GB")
        alive = proc.poll() is None and check.health_ok(url)
        print(f"server alive at the end: {alive}")
        targets = [("health p95 < 100 ms", p95 < 100), (f"peak < {args.cap_gb:g} GB",
                                                        peak < args.cap_gb),
                   ("server alive", alive)]
        print("targets: " + ", ".join(f"{n}: {'met' if m else 'NOT met'}" for n, m in targets))
        return 0 if ok and all(m for _, m in targets) else 1
    except check.Failed as exc:
        print(f"bench_hostile: {exc} (server log: {proc.log_path})", file=sys.stderr)
        return 1
    finally:
        health.stop()
        monitor.stop()
        check.stop(proc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tabs", type=int, default=3, help="tabs of each attack at once")
    ap.add_argument("--rounds", type=int, default=2, help="times each tab repeats its attack")
    ap.add_argument("--cap-gb", type=float, default=3.0, help="the memory target (GB)")
    args = ap.parse_args()
    if not Path(check.CHROMIUM).exists():
        print(f"bench_hostile: {check.CHROMIUM} is absent (apt-get install chromium)",
              file=sys.stderr)
        return 2
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
