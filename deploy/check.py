"""The packaged demo's build and start steps, and the check that CI runs on them.

One script, so that the Dockerfile, CI and a person at a shell run the same steps
(deploy/README.md):

    python deploy/check.py install       # pip install -r requirements.txt -c constraints.txt
    python deploy/check.py example       # build the example checkpoint into $DASHBOARD_CACHE
    python deploy/check.py smoke         # start in demo mode, wait for health, run the
                                         # first page (Head atlas) once (AppTest), stop; no browser
    python deploy/check.py start         # streamlit in demo mode with the deploy flags (exec)
    python deploy/check.py health        # exit 0 when the server answers /_stcore/health
    python deploy/check.py ci            # all of it in a fresh virtual environment, then every
                                         # page opened in Chromium (what CI runs)
    python deploy/check.py pages URL     # only the Chromium check, against a running server

``ci`` creates a venv (python3 -m venv), installs requirements.txt and playwright, builds the
example into a fresh cache folder, starts the app in demo mode on a free port through ``start``,
waits for health and opens every page (PAGES: /, /attention, /noop, ..., /patching, /search,
/report) in Debian's Chromium (/usr/bin/chromium): each page shows its title, no exception box,
no "Page not found", its first results without a click, and the Aspect heads page the example
checkpoint's. It prints each step's time; on failure it exits 1 with one line saying what
failed (and where the logs are). Without Chromium the browser step is skipped, saying so.

Only the standard library is imported at the top: ``health`` runs as the image's HEALTHCHECK.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
DEFAULT_PORT = 8501
SERVER_UPLOAD_MB = 50  # ui/server/settings.py's SERVER_UPLOAD_MB (read from there when it can)
DEMO_NOTE = "A public demo"  # ui/common/frame/sidebar.py's DEMO_NOTE starts so (demo mode only)
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
# path, title (the page's h1), what shows its first results without a click
PAGES = [("/", "Head atlas", "[data-testid='stVegaLiteChart']"),
         ("/attention", "Attention", ".av-head .av-col-from .av-tok"),
         ("/noop", "No-op statistics", "[data-testid='stVegaLiteChart']"),
         ("/aspects", "Aspect heads", ":text('Pairs per kind:')"),
         ("/drift", "Fine-tuning drift", "[data-testid='stVegaLiteChart']"),
         ("/syntax", "Syntax", "[data-testid='stVegaLiteChart']"),
         ("/attribution", "Attribution", ".attr-rows .attr-tok"),
         ("/representations", "Representations", "[data-testid='stVegaLiteChart']"),
         ("/importance", "Head importance", "[data-testid='stVegaLiteChart']"),
         ("/patching", "Causal patching", "[data-testid='stVegaLiteChart']"),
         ("/search", "Search", "[data-testid='stVegaLiteChart']"),
         ("/report", "Report", "button:has-text('Add an example finding')")]
PAGE_TIMEOUT_S = 300  # a fresh server computes each page's first results on first visit


class Failed(Exception):
    """One line saying what failed."""


# ---------------------------------------------------------------------------------------------
# the steps


def upload_cap_mb() -> int:
    """Streamlit's server-wide upload ceiling (MiB): the largest legitimate upload, a checkpoint
    .zip (ui/server/settings.py's SERVER_UPLOAD_MB, the same as .streamlit/config.toml's
    maxUploadSize and the checkpoint upload box), or the host's ``max_upload_bytes`` when that
    is larger. Every other upload box and reader checks its own, smaller cap."""
    cap_mb = SERVER_UPLOAD_MB
    try:
        sys.path.insert(0, str(ROOT))
        from ui.server.settings import SERVER_UPLOAD_MB as cap_mb, settings  # noqa: PLC0415

        return max(cap_mb, math.ceil((settings().max_upload_bytes or 0) / 2**20))
    except Exception:  # noqa: BLE001 - the default is the documented ceiling
        return cap_mb


def streamlit_command(python: str, port: int, address: str = "0.0.0.0",
                      upload_mb: int | None = None) -> list[str]:
    """The one command line the image, CI and the benchmark start the app with."""
    upload = [f"--server.maxUploadSize={upload_mb}"] if upload_mb else []
    return [python, "-m", "streamlit", "run", str(ROOT / "app.py"),
            "--server.headless=true", f"--server.address={address}", f"--server.port={port}",
            "--server.fileWatcherType=none", "--server.runOnSave=false", *upload,
            "--browser.gatherUsageStats=false"]


def demo_env(env: dict | None = None) -> dict:
    """The environment of a demo server: demo mode on (unless the host set DASHBOARD_MODE)."""
    env = dict(os.environ if env is None else env)
    env.setdefault("DASHBOARD_MODE", "demo")
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def health_ok(url: str, timeout: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while not health_ok(url):
        if proc.poll() is not None:
            raise Failed(f"the server exited with status {proc.returncode} before it was healthy")
        if time.monotonic() > deadline:
            raise Failed(f"{url}/_stcore/health did not answer within {timeout_s:.0f} s")
        time.sleep(0.5)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_step(cmd: list[str], what: str, log: Path, env: dict | None = None) -> None:
    """Run ``cmd`` with its output in ``log``; on failure raise Failed naming the step and the
    last line of its output."""
    with open(log, "ab") as out:
        out.write(f"$ {' '.join(cmd)}\n".encode())
        out.flush()
        rc = subprocess.call(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    if rc != 0:
        lines = [ln for ln in log.read_text(errors="replace").splitlines()
                 if ln.strip() and not ln.startswith("WARNING: Location")]
        last = lines[-1].strip() if lines else "no output"
        raise Failed(f"{what} exited with status {rc}: {last[:300]}")


def install(python: str, log: Path, browser: bool = False,
            requirements: Path | None = None) -> None:
    """pip install the requirements file (and playwright), at the pinned versions of the
    constraints.txt beside it (``bash .ci/lock`` writes it) when there is one, then compile
    every module of the environment but the packages' own test suites on all cores
    (``compileall -j 0``; measured on pandas and scipy: 3.0 against 9.7 CPU-s with their
    tests). pip's own compile step
    (its default) does the same on one core: 53 s for the whole install against 23 s without
    it. The modules must be compiled at install: where PYTHONDONTWRITEBYTECODE is set (as on
    CI's machine and in the Dockerfile) nothing writes them later, and every process then
    compiles torch and the rest again at each import (the test run took 878 s against 608 s)."""
    requirements = requirements or ROOT / "requirements.txt"
    pins = requirements.parent / "constraints.txt"
    extra = ["playwright"] if browser else []
    run_step([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile",
              "-r", str(requirements), *(["-c", str(pins)] if pins.is_file() else []), *extra],
             "pip install", log)
    # where the environment's modules are, and the compiled file torch's must have after
    site, torch_pyc = subprocess.run(
        [python, "-c", "import importlib.util as u, sysconfig; "
                       "print(sysconfig.get_paths()['purelib']); "
                       "print(u.cache_from_source(u.find_spec('torch').origin))"],
        capture_output=True, text=True, check=True).stdout.split()
    # -qq: a package's file that does not compile (pip skips those too) prints nothing; its
    # status is not checked for the same reason (compileall returns 1 for any such file).
    # -x: the packages' own test suites (pandas/tests, scipy's, sklearn's, ...: about a quarter
    # of the files), which the app never imports
    subprocess.call([python, "-m", "compileall", "-qq", "-j", "0", "-x", r"/tests?/", site],
                    stdout=subprocess.DEVNULL)
    if not Path(torch_pyc).is_file():  # the heaviest import must load from its compiled file
        raise Failed(f"pip install: the modules were not compiled ({torch_pyc} is missing)")


READY = ("import sys; from analysis.core.example import example_ready; "
         "sys.exit(0 if example_ready() else 1)")


def build_example(python: str, log: Path, env: dict | None = None) -> bool:
    """Build the example checkpoint into the cache folder unless it is there already (built
    with the current recipe); True when it was built now.

    The build is the one job of this step, so it takes every core (``OMP_NUM_THREADS``, unless
    set): the build's own policy (``analysis.core.example.machine_threads``) reads the one-minute
    load average, which right after this step's install still counts the install's compile on
    both cores, and then chose one thread (CI: 164 s against 85-108 s at two)."""
    env = dict(os.environ if env is None else env)
    env.setdefault("OMP_NUM_THREADS", str(len(os.sched_getaffinity(0))
                                          if hasattr(os, "sched_getaffinity") else
                                          os.cpu_count() or 1))
    if subprocess.call([python, "-c", READY], cwd=ROOT, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
        return False
    run_step([python, "-m", "analysis", "aspects", "example"],
             "python -m analysis aspects example", log, env)
    return True


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------------------------------------
# the browser check


def check_pages(url: str, shots: Path | None = None) -> list[str]:
    """Open every page in Chromium as a first visitor (one fresh context each); return one line
    per page, or raise Failed naming the page and what is wrong."""
    from playwright.sync_api import Error as PlaywrightError  # noqa: PLC0415
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    lines = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update"])
        try:
            for path, title, ready in PAGES:
                t0 = time.monotonic()
                context = browser.new_context(viewport={"width": 1400, "height": 1100})
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                try:
                    try:
                        _check_page(page, url + path, path, title, ready, errors)
                    except PlaywrightError as exc:
                        msg = str(exc).strip().splitlines()
                        raise Failed(f"{path}: {msg[0] if msg else type(exc).__name__}") from None
                    if shots is not None:
                        shots.mkdir(parents=True, exist_ok=True)
                        name = path.strip("/") or "attention"
                        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
                finally:
                    context.close()
                lines.append(f"{path}: '{title}' with results in {time.monotonic() - t0:.1f} s")
        finally:
            browser.close()
    return lines


def _check_page(page, url: str, path: str, title: str, ready: str, errors: list) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: PLC0415

    timeout = PAGE_TIMEOUT_S * 1000
    page.goto(url, timeout=60_000)
    try:
        page.locator("h1", has_text=title).first.wait_for(timeout=timeout)
        page.locator(ready).first.wait_for(timeout=timeout)
        page.wait_for_selector(IDLE, timeout=timeout)
    except PlaywrightTimeout:
        _no_problem_boxes(page, path)
        h1 = page.locator("h1").all_inner_texts()
        what = f"no '{title}' title" if title not in h1 else f"no first results ({ready})"
        raise Failed(f"{path}: {what} within {PAGE_TIMEOUT_S} s (headings: {h1[:3]})") from None
    page.wait_for_timeout(500)
    _no_problem_boxes(page, path)
    if not page.get_by_text(DEMO_NOTE, exact=False).count():
        raise Failed(f"{path}: demo mode is off (the sidebar does not say '{DEMO_NOTE}...')")
    if path == "/aspects":
        _example_results(page)
    if errors:
        raise Failed(f"{path}: a script error in the browser: {errors[0][:200]}")


def _no_problem_boxes(page, path: str) -> None:
    if page.get_by_text("Page not found").count():
        raise Failed(f"{path}: Streamlit shows 'Page not found'")
    exc = page.get_by_test_id("stException")
    if exc.count():
        first = exc.first.inner_text().strip().splitlines()
        raise Failed(f"{path}: an exception box: {' '.join(first[:2])[:200]}")


def _example_results(page) -> None:
    """The Aspect heads page opens on the example checkpoint: its held-out metrics, the heads
    section's verdict and the heads' charts are shown without a click."""
    metrics = page.get_by_test_id("stMetric").all_inner_texts()
    if not any(ch.isdigit() for m in metrics for ch in m):
        raise Failed(f"/aspects: no metrics of the example checkpoint (got {metrics[:4]})")
    if not page.get_by_text("beats every baseline", exact=False).count() and \
            not page.get_by_text("No head beats", exact=False).count():
        raise Failed("/aspects: no verdict on the heads of the example checkpoint")
    if not page.get_by_test_id("stVegaLiteChart").count():
        raise Failed("/aspects: no chart of the heads of the example checkpoint")


# ---------------------------------------------------------------------------------------------
# commands


def _log(name: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"dashboard-{name}-")) / f"{name}.log"


def cmd_install(args) -> None:
    t = time.monotonic()
    install(sys.executable, _log("install"), browser=args.browser, requirements=args.requirements)
    _say(f"installed {args.requirements or 'requirements.txt'} into {sys.prefix}",
         time.monotonic() - t)


def cmd_example(args) -> None:
    t = time.monotonic()
    log = _log("example")
    built = build_example(sys.executable, log)
    _say(f"built the example checkpoint (log: {log})" if built else
         "the example checkpoint is built already", time.monotonic() - t)


def cmd_smoke(args) -> None:
    """Start the server as the image does (demo mode) on a local port, wait for health, stop;
    then run the app's default page once in-process (AppTest) and check that it shows the
    Head atlas (the first page) without an exception. The image has no browser: CI's ``ci``
    opens them."""
    t = time.monotonic()
    env = demo_env()
    port = free_port()
    log = _log("smoke")
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "start",
                                 "--port", str(port), "--address", "127.0.0.1"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
    except Failed as exc:
        raise Failed(f"{exc} (log: {log})") from None
    finally:
        stop(proc)
    os.environ.update(env)
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    if at.exception:
        raise Failed(f"/: an exception: {at.exception[0].message[:200]}")
    titles = [x.value for x in at.title]
    if titles[:1] != ["Head atlas"]:
        raise Failed(f"/: the Head atlas did not open (titles: {titles[:3]})")
    _say("started in demo mode, healthy; the Head atlas runs", time.monotonic() - t)


def cmd_start(args) -> None:
    os.environ.update(demo_env())
    cmd = streamlit_command(sys.executable, args.port, args.address, upload_cap_mb())
    print(f"DASHBOARD_MODE={os.environ['DASHBOARD_MODE']} " + " ".join(cmd[1:]), flush=True)
    os.chdir(ROOT)
    os.execv(sys.executable, cmd)


def cmd_health(args) -> None:
    if not health_ok(f"http://127.0.0.1:{args.port}", timeout=5):
        raise Failed(f"http://127.0.0.1:{args.port}/_stcore/health does not answer")


def cmd_pages(args) -> None:
    for line in check_pages(args.url.rstrip("/"), args.screenshots):
        print(line)


def cmd_ci(args) -> None:
    work = Path(tempfile.mkdtemp(prefix="dashboard-deploy-"))
    venv = args.venv or work / "venv"
    log = work / "steps.log"
    python = str(venv / "bin" / "python")
    browser = Path(CHROMIUM).exists()
    env = demo_env()
    env["DASHBOARD_CACHE"] = str(args.cache or work / "cache")
    env["HF_HUB_OFFLINE"] = "1"  # the demo needs no download
    times: dict[str, float] = {}
    ok = False
    proc = None
    try:
        t = time.monotonic()
        if not (venv / "bin" / "python").exists():
            run_step([sys.executable, "-m", "venv", str(venv)], "python3 -m venv", log)
        install(python, log, browser=browser)
        times["venv + install"] = time.monotonic() - t
        _say(f"installed requirements.txt{' + playwright' if browser else ''} into a fresh venv",
             times["venv + install"])

        t = time.monotonic()
        built = build_example(python, log, env)
        times["example"] = time.monotonic() - t
        _say(f"{'built' if built else 'found'} the example checkpoint in "
             f"{env['DASHBOARD_CACHE']}", times["example"])

        t = time.monotonic()
        run_step([python, str(ROOT / "deploy" / "check.py"), "smoke"], "deploy/check.py smoke",
                 log, env)
        times["smoke"] = time.monotonic() - t
        _say("smoke: started in demo mode, healthy; the Head atlas runs (AppTest)",
             times["smoke"])

        t = time.monotonic()
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with open(work / "server.log", "wb") as out:
            proc = subprocess.Popen(
                [python, str(ROOT / "deploy" / "check.py"), "start", "--port", str(port),
                 "--address", "127.0.0.1"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        wait_healthy(url, proc)
        times["start"] = time.monotonic() - t
        _say(f"started in demo mode, healthy at {url}", times["start"])

        if browser and args.no_pages:
            print("deploy check: browser step left to the replicas check (--no-pages: "
                  "deploy/replicas.py check opens every page with the same checks)")
        elif browser:
            t = time.monotonic()
            pages = subprocess.run(
                [python, str(ROOT / "deploy" / "check.py"), "pages", url,
                 "--screenshots", str(work / "screenshots")],
                cwd=ROOT, env=env, capture_output=True, text=True)
            if pages.returncode != 0:
                lines = (pages.stderr.strip() or pages.stdout.strip() or "no output").splitlines()
                raise Failed(lines[-1].removeprefix("deploy check failed: "))
            times["pages"] = time.monotonic() - t
            for line in pages.stdout.strip().splitlines():
                print(f"  {line}")
            _say("every page opened in Chromium", times["pages"])
        else:
            print(f"deploy check: browser step skipped: {CHROMIUM} is absent "
                  "(apt-get install chromium)")
        if proc.poll() is not None:
            raise Failed(f"the server exited with status {proc.returncode} during the check")
        ok = True
    except Failed as exc:
        raise Failed(f"{exc} (logs: {work})") from None
    finally:
        if proc is not None:
            stop(proc)
        if ok and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        elif not args.keep and args.venv is None:
            shutil.rmtree(work / "venv", ignore_errors=True)  # the logs stay
    total = sum(times.values())
    print("deploy check passed in " + f"{total:.0f} s (" +
          ", ".join(f"{k} {v:.0f} s" for k, v in times.items()) + ")")


def _say(what: str, seconds: float) -> None:
    print(f"deploy check: {what} ({seconds:.1f} s)", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="deploy/check.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("install", help="pip install -r requirements.txt into this interpreter")
    p.add_argument("--browser", action="store_true", help="also install playwright")
    p.add_argument("--requirements", type=Path, default=None,
                   help="the requirements file (default: the repository's requirements.txt)")
    p.set_defaults(fn=cmd_install)
    sub.add_parser("example", help="build the example checkpoint").set_defaults(fn=cmd_example)
    sub.add_parser("smoke", help="start in demo mode, wait for health, run the default page "
                                 "once; no browser").set_defaults(fn=cmd_smoke)
    port = int(os.environ.get("PORT") or DEFAULT_PORT)
    p = sub.add_parser("start", help="start the app in demo mode (replaces this process)")
    p.add_argument("--port", type=int, default=port)
    p.add_argument("--address", default="0.0.0.0")
    p.set_defaults(fn=cmd_start)
    p = sub.add_parser("health", help="exit 0 when the local server is healthy")
    p.add_argument("--port", type=int, default=port)
    p.set_defaults(fn=cmd_health)
    p = sub.add_parser("pages", help="open every page of a running server in Chromium")
    p.add_argument("url")
    p.add_argument("--screenshots", type=Path, default=None)
    p.set_defaults(fn=cmd_pages)
    p = sub.add_parser("ci", help="fresh venv, install, example, start, health, Chromium")
    p.add_argument("--venv", type=Path, default=None,
                   help="reuse this venv (created when absent) instead of a temporary one")
    p.add_argument("--cache", type=Path, default=None,
                   help="example cache folder (default: a fresh temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder and logs")
    p.add_argument("--no-pages", action="store_true",
                   help="skip the Chromium step: for a run that goes on with deploy/replicas.py "
                        "check, whose visitor opens every page with the same checks")
    p.set_defaults(fn=cmd_ci)
    args = ap.parse_args(argv)

    def terminated(signum, frame):  # stop the server and clean up as on Ctrl-C
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, terminated)
    try:
        args.fn(args)
    except Failed as exc:
        print(f"deploy check failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        print(f"deploy check failed: interrupted ({exc or 'SIGINT'})", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
