"""The ``attention-dashboard`` command (installed by ``pip install -e .``, see pyproject.toml):

    attention-dashboard                     # start the dashboard (streamlit run app.py)
    attention-dashboard app --server.port 8600   # the same, Streamlit options after "app"
    attention-dashboard noop --data sample --out stats.json   # any `python -m analysis` command

It works from any folder: the app is started from the project folder (where its pages, data and
.streamlit/config.toml are), and commands read and write paths relative to the folder they are
run from. Nothing here imports Streamlit (the app runs in its own process).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from analysis.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]  # the project folder (an editable install points here)
APP = ROOT / "app.py"


def app_command(streamlit_args: list[str]) -> list[str]:
    """The command line that starts the dashboard with Streamlit's own options appended."""
    return [sys.executable, "-m", "streamlit", "run", str(APP), *streamlit_args]


def start_app(streamlit_args: list[str]) -> int:
    if not APP.is_file():
        print(f"attention-dashboard: the app is not next to the library ({APP} is missing); "
              "install the project from its folder with `python3 -m pip install -e .`",
              file=sys.stderr)
        return 2
    # Streamlit replaces this process (same pid): a stop signal from a terminal, systemd or a
    # container runtime reaches the server itself (a child process would outlive this one)
    os.chdir(ROOT)
    command = app_command(streamlit_args)
    os.execv(command[0], command)
    return 0  # not reached


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] == "app":
        return start_app(argv[1:])
    return cli_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
