"""The project installs as a package (issue 22): ``pip install -e .`` gives an
``attention-dashboard`` command that runs the CLI and starts the app from any folder, and
``python -m analysis`` works outside the repository too."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A throw-away virtual environment that sees this Python's packages, with the project
    installed into it in editable mode (no download: --no-deps, --no-build-isolation).

    The packages are this interpreter's own site-packages, named in a .pth file: venv's
    --system-site-packages would give the base interpreter's instead when the suite itself runs
    in a virtual environment (as .ci/run does), without this one's setuptools or torch."""
    import site
    import sysconfig

    d = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(d)], check=True)
    py = d / "bin" / "python"
    inner = subprocess.run([str(py), "-c",
                            "import sysconfig; print(sysconfig.get_path('purelib'))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    ours = dict.fromkeys([*site.getsitepackages(), sysconfig.get_path("purelib")])
    Path(inner, "outer-packages.pth").write_text("\n".join(ours) + "\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                        "--no-deps", "--no-build-isolation", "--no-index", "-e", str(ROOT)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    return d


def _env():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["DASHBOARD_EXAMPLE_AUTOBUILD"] = "0"
    return env


def test_cli_runs_from_any_folder(venv, tmp_path):
    script = venv / "bin" / "attention-dashboard"
    assert script.is_file()
    r = subprocess.run([str(script), "noop", "--help"], cwd=tmp_path, capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert "--data" in r.stdout
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "analysis", "attention", "--text",
                        "The food was great.", "--out", "maps.npz"], cwd=tmp_path,
                       capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    import numpy as np

    with np.load(tmp_path / "maps.npz") as z:
        assert z["attentions"].shape[:2] == (6, 12)
    # a bad option: exit 2 and one plain line, from the installed command too
    r = subprocess.run([str(script), "noop", "--batch-size", "0"], cwd=tmp_path,
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_app_starts_from_any_folder(venv, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(venv / "bin" / "attention-dashboard"), "app",
                             "--server.headless", "true", "--server.port", str(port),
                             "--server.address", "127.0.0.1"], cwd=tmp_path, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, ok = time.time() + 120, False
        while time.time() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                            timeout=2) as r:
                    ok = r.status == 200
                    break
            except OSError:
                time.sleep(0.5)
        assert ok, "the app did not answer (streamlit exits when app.py is not found)"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    # the server was the command's own process (Streamlit replaces it): stopping the command
    # stopped the server, nothing is left listening on the port
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
