"""Command-line interface: ``python -m analysis <command> ...``.

Each command lives in its own module under ``analysis.cli`` exposing ``register(subparsers)``,
which adds a sub-parser whose ``func(args)`` does the work. Options are validated while they
are parsed (:mod:`analysis.cli.options`), before any work. Known, user-caused failures (a bad
option, bad input, a model that cannot be loaded, unreadable data, an output that cannot be
written) end with exit status 2 and one plain line on stderr; no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from analysis.core.errors import DataError, InputError
from analysis.core.execution.threads import heavy_work, passive_waits
from analysis.core.models import ModelLoadError


class UsageError(Exception):
    """A bad command line (one line, for stderr)."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: "--epochs must be ..." instead of the usage block."""

    def error(self, message: str):
        m = re.match(r"argument (--?[\w-]+)(?:/--?[\w-]+)*: (must|names|is|cannot)\b(.*)",
                     message)
        raise UsageError(f"{m.group(1)} {m.group(2)}{m.group(3)}" if m else message)

# One module per command group; each adds its sub-commands.
COMMAND_MODULES = [
    "analysis.cli.attention",
    "analysis.cli.noop",
    "analysis.cli.drift",
    "analysis.cli.aspects",
    "analysis.cli.syntax",
    "analysis.cli.attribution",
    "analysis.cli.importance",
    "analysis.cli.representations",
    "analysis.cli.patching",
    "analysis.cli.search",
    "analysis.cli.predictions",
    "analysis.cli.atlas",
    "analysis.cli.features",
    "analysis.cli.precompute",
]


def user_error_types() -> tuple[type[BaseException], ...]:
    """Exception types whose message is meant for the user."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.attention.neuron import NeuronViewUnavailable
    return (InputError, DataError, ModelLoadError, NeuronViewUnavailable, FileNotFoundError,
            IsADirectoryError, PermissionError, UnicodeDecodeError)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m analysis",
        description="Attention analysis for BERT-style encoders (same numbers as the dashboard).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else type(exc).__name__
    if isinstance(exc, FileNotFoundError) and getattr(exc, "filename", None):
        msg = f"File not found: {exc.filename}"
    elif isinstance(exc, UnicodeDecodeError):
        msg = "The file is not UTF-8 text; save it as UTF-8 and try again."
    return msg


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    passive_waits()  # before a command loads torch (analysis/core/execution/threads.py)
    try:
        with heavy_work(None, process=True, load_torch=True):  # its threads by the load
            result = args.func(args)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except user_error_types() as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # an output that cannot be written after all (disk full, ...)
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"error: {exc.strerror or type(exc).__name__}{where}", file=sys.stderr)
        return 2
    return int(result or 0)
