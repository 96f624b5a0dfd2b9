"""Benchmark: the Attention page's views in Chromium, the component path against the
server-rerun path, measured in the same run on one server.

    nice python -m bench.studies.attention_views [--reps 20] [--skip-pages]

Needs Debian Chromium (/usr/bin/chromium) and Playwright (requirements-dev.txt). Prints:

- layer switch in the head view at a short pair and at a 512-token pair: the component's own
  switch (a layer button in the view: click -> drawn, the next frame included; read from the
  ``window.__viewTimings`` the component records) against the page's Layer widget (option
  click -> view redrawn and the script idle; wall clock from Playwright), p50/p95 and ratio;
- the payload of a 512-token pair with every layer (the JSON Streamlit sends) against BertViz's
  way (every layer and head as JSON floats, computed: ``full_json_size``);
- first view of the 512-token pair: a cold input (forward + payload) and a cached one;
- the 512 x 512 canvas heatmap: draw time after its data arrives, hover time;
- a rerun with cached results on every page (the "r" shortcut: running -> idle), p50/p95,
  and the Attention page's cached rerun on the server (AppTest) with the steps that grow
  with the payload timed alone.

Targets (issue 13): layer switch p95 <= 100 ms at both sizes, payload <= 2 MB, first view
<= 1.5 s, heatmap drawn <= 300 ms, hover <= 50 ms.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from urllib.parse import urlencode

from bench import harness
from deploy import check  # the start command, health, free port, stop

ROOT = harness.ROOT

CHROMIUM = "/usr/bin/chromium"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
SHORT_A = "The pasta was superb, but the waiter ignored us for twenty minutes."
SHORT_B = "what do you think of the service of it ? was it slow ?"
LONG_A = ("The pasta was cooked perfectly and the sauce tasted fresh, but the waiter forgot "
          "our drinks twice and the bill took almost half an hour to arrive. ") * 12
LONG_B = "what do you think of the service of it ? " * 60
PAGES = ["/", "/noop", "/aspects", "/drift", "/syntax"]


pct = harness.percentile
RUN: list[harness.Run] = []  # this run, where main() started one: its rows for --json


def row(name, values, unit="ms"):
    print(f"  {name:<46} n={len(values):>3}  p50 {pct(values, 50):8.1f} {unit}  "
          f"p95 {pct(values, 95):8.1f} {unit}")
    for run in RUN:
        run.row(name, n=len(values), p50=pct(values, 50), p95=pct(values, 95), unit=unit)


def start_server():
    """The app as deploy/check.py starts it (outside demo mode: 512-token inputs), on a free
    local port, once healthy."""
    port = check.free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
           "DASHBOARD_EXAMPLE_AUTOBUILD": "0"}
    proc = subprocess.Popen(check.streamlit_command(sys.executable, port, "127.0.0.1"),
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        check.wait_healthy(url, proc, timeout_s=120)
    except check.Failed as exc:
        check.stop(proc)
        raise SystemExit(f"streamlit did not start: {exc}") from None
    return proc, url


def idle(page, timeout=180_000):
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=timeout)


def timings(page, kind):
    return [t["ms"] for t in page.evaluate("window.__viewTimings || []") if t["kind"] == kind]


def layer_switches(page, reps):
    """Component path: layer buttons in the view, clicked from inside the page 150 ms apart
    (quicker than the 350 ms pause after which the view reports its state, so no rerun
    interleaves and no Playwright round trip is counted)."""
    page.evaluate("window.__viewTimings = []")
    page.locator(".av-head").evaluate("""async (root, reps) => {
      for (let k = 0; k < reps; k++) {
        root.querySelector(`.av-layers .av-btn[data-layer='${2 + k % 5}']`)
          .dispatchEvent(new MouseEvent("click", { bubbles: true }));
        await new Promise((r) => setTimeout(r, 150));
      }
    }""", reps)
    idle(page)
    return timings(page, "layer-switch")


def widget_switches(page, reps):
    """Server path: the page's Layer selectbox; option click -> view redrawn, script idle."""
    out = []
    box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Layer", exact=True)).first
    view = page.locator(".av-head")
    for k in range(reps):
        layer = str(1 + (k + 1) % 6)
        box.click()
        option = page.get_by_role("option", name=layer, exact=True)
        t = time.perf_counter()
        option.click()
        page.wait_for_function(
            "([l]) => { const v = document.querySelector('[data-testid=stApp]');"
            " return v && v.getAttribute('data-test-script-state') === 'notRunning'; }",
            arg=[layer])
        page.wait_for_selector(f".av-head[data-layer='{layer}']", timeout=60_000)
        page.wait_for_selector(IDLE)
        out.append((time.perf_counter() - t) * 1000)
        assert view.get_attribute("data-layer") == layer
    return out


def bench_layers(browser, url, label, a, b, reps):
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.goto(url + "/?" + urlencode({"mode": "Sentence pair", "a": a, "b": b}))
    page.wait_for_selector(".av-head .av-lines path", timeout=180_000)
    idle(page)
    n = page.locator(".av-head").get_attribute("data-n")
    comp = layer_switches(page, reps)
    server = widget_switches(page, max(5, reps // 3))
    print(f"\nLayer switch in the head view, {n}-token pair")
    row("component (layer button in the view)", comp)
    row("server rerun (page's Layer widget)", server)
    print(f"  ratio p95 server / component: {pct(server, 95) / pct(comp, 95):.1f}x")
    page.close()
    return comp, server


def bench_payload(loaded):
    from analysis.attention import attention_for
    from analysis.attention.views import views_payload
    from bench.references.attention import full_json_size, payload_size

    res = attention_for(loaded, LONG_A, LONG_B)
    enc = res.encoding
    p, t = harness.timed(lambda: views_payload(enc.tokens, res.attentions, enc.segments,
                                               enc.special, is_pair=True))
    build = t.wall
    ours, full = payload_size(p), full_json_size(res.attentions, enc.tokens)
    print(f"\nPayload, {enc.n_tokens}-token pair, every layer ({p['encoding']}, "
          f"{p['top_k']} strongest keys per query per head), built in {build:.2f} s")
    print(f"  ours: {ours:,} bytes   every layer and head as JSON floats (BertViz's way): "
          f"{full:,} bytes   ratio {full / ours:.0f}x")
    for run in RUN:
        run.row("payload, 512-token pair, every layer", bytes=ours, float_json_bytes=full,
                build_seconds=build)
    return ours


def bench_first_view(browser, url):
    out = {}
    cold = LONG_A + f" Cold {time.time()}."
    for name, a in (("cold (forward + payload)", cold), ("cached", cold)):
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        with harness.Timer() as t:
            page.goto(url + "/?" + urlencode({"mode": "Sentence pair", "a": a, "b": LONG_B}))
            page.wait_for_selector(".av-head[data-n='512'] .av-lines path", timeout=180_000)
        out[name] = t.wall
        idle(page)
        mount = timings(page, "mount-head")
        out[name + ": component mount (data in -> drawn)"] = (mount[-1] / 1000 if mount
                                                              else float("nan"))
        page.close()
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    with harness.Timer() as t:
        page.goto(url + "/?" + urlencode({"mode": "Sentence pair", "a": SHORT_A, "b": SHORT_B}))
        page.wait_for_selector(".av-head .av-lines path", timeout=180_000)
    out["baseline: same page, short pair, cached"] = t.wall
    page.close()
    print("\nFirst view of a 512-token pair (page load -> head view drawn)")
    for k, v in out.items():
        print(f"  {k:<62} {v:6.2f} s")
        for run in RUN:
            run.row(f"first view, 512-token pair: {k}", seconds=v)
    return out


def bench_heatmap(browser, url):
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.goto(url + "/?" + urlencode({"mode": "Sentence pair", "a": LONG_A, "b": LONG_B,
                                      "view": "Heatmap", "layer": 3, "head": 4}))
    page.wait_for_selector(".av-heatmap[data-n='512']", timeout=180_000)
    idle(page)
    over = page.locator(".av-hm-over")
    over.scroll_into_view_if_needed()
    box = over.bounding_box()
    for k in range(40):
        page.mouse.move(box["x"] + 5 + (k * 37) % int(box["width"] - 10),
                        box["y"] + 5 + (k * 53) % int(box["height"] - 10))
    draws = []
    for head in ("5", "6", "7"):  # three more maps arrive
        box_head = page.get_by_test_id("stSelectbox").filter(
            has=page.get_by_text("Head", exact=True)).first
        box_head.click()
        page.get_by_role("option", name=head, exact=True).click()
        page.wait_for_selector(f".av-heatmap[data-head='{head}']", timeout=60_000)
        idle(page)
    draws = timings(page, "heatmap-draw")
    hovers = timings(page, "heatmap-hover")
    print("\n512 x 512 canvas heatmap")
    row("drawn after its data arrives", draws)
    row("hover (highlight + tooltip)", hovers)
    page.close()
    return draws, hovers


def bench_reruns(browser, url, reps):
    print("\nRerun with cached results (the 'r' shortcut: running -> idle, in the browser)")
    for path in PAGES:
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(url + path)
        idle(page)
        page.evaluate("""() => {
          const app = document.querySelector("[data-testid='stApp']");
          window.__runs = []; let t0 = null;
          new MutationObserver(() => {
            const s = app.getAttribute("data-test-script-state");
            if (s === "running") t0 = performance.now();
            else if (s === "notRunning" && t0 !== null) { \
window.__runs.push(performance.now() - t0); t0 = null; }
          }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
        }""")
        for _ in range(reps):
            page.locator("h1").first.click()  # focus the page, not an input
            page.keyboard.press("r")
            idle(page)
        row(path, page.evaluate("window.__runs"))
        page.close()


def profile_attention_rerun():
    """Where a cached rerun of the Attention page spends its time on the server: the whole
    script (AppTest) and the steps that grow with the payload, timed alone."""
    import hashlib

    from streamlit.testing.v1 import AppTest

    from analysis.attention import attention_for, level_view
    from analysis.attention.views import views_payload
    from analysis.core.models import load_model

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["mode"] = "Sentence pair"
    at.query_params["a"], at.query_params["b"] = LONG_A, LONG_B
    at.run()
    walls = [1000 * w for w in harness.repeat(at.run, 8).walls]
    res = attention_for(load_model("default"), LONG_A, LONG_B)
    labels, maps, segs, special = level_view(res, "token", False)
    payload = {**views_payload(labels, maps, segs, special, is_pair=True), "ui": {}}
    steps = {
        "level_view (token level, every map)": lambda: level_view(res, "token", False),
        "json.dumps of the payload (what the component sends)": lambda: json.dumps(payload),
        "Streamlit's identity: sorted dumps + hash": lambda: hashlib.sha256(
            json.dumps(payload, sort_keys=True).encode()).hexdigest(),
    }
    print("\nAttention page, 512-token pair, cached rerun on the server")
    row("whole script run (AppTest, head view)", walls)
    for name, fn in steps.items():
        row(name, [1000 * w for w in harness.repeat(fn, 5).walls])


def main():
    ap = harness.parser(__doc__)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--skip-pages", action="store_true", help="skip the other pages' reruns")
    args = ap.parse_args()
    RUN.append(harness.start(args))
    from playwright.sync_api import sync_playwright

    from analysis.core.models import load_model

    bench_payload(load_model("default"))
    proc, url = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            bench_layers(browser, url, "short", SHORT_A, SHORT_B, args.reps)
            bench_layers(browser, url, "512", LONG_A, LONG_B, args.reps)
            bench_first_view(browser, url)
            bench_heatmap(browser, url)
            bench_reruns(browser, url, 8 if not args.skip_pages else 0)
            browser.close()
    finally:
        check.stop(proc)
    profile_attention_rerun()
    RUN[0].done()


if __name__ == "__main__":
    main()
