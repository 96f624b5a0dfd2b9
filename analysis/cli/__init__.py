"""Command-line interface: ``python -m analysis <command> ...``.

Each command lives in its own module under ``analysis.cli`` exposing ``register(subparsers)``,
which adds a sub-parser whose ``func(args)`` does the work. Known, user-caused failures
(bad input, a model that cannot be loaded, unreadable data) end with exit status 2 and one
plain line on stderr; no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# One module per command group; each adds its sub-commands.
COMMAND_MODULES = [
    "analysis.cli.attention",
    "analysis.cli.noop",
    "analysis.cli.drift",
    "analysis.cli.aspects",
]


def user_error_types() -> tuple[type[BaseException], ...]:
    """Exception types whose message is meant for the user."""
    from analysis.attention.neuron import NeuronViewUnavailable
    from analysis.errors import DataError, InputError
    from analysis.models import ModelLoadError

    return (InputError, DataError, ModelLoadError, NeuronViewUnavailable, FileNotFoundError,
            IsADirectoryError, PermissionError, UnicodeDecodeError)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except user_error_types() as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    return int(result or 0)
