"""Validators of command-line options (argparse ``type=`` functions), so that every option is
checked before any work starts: a bad value ends with exit status 2 and one line on stderr
("error: --epochs must be a finite number above 0, not 'nan'").

Each validator returns the value argparse would have made (``int(text)``, ``float(text)``, the
text of a path), so valid input gives the commands exactly what it gave before.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path
from analysis.core.errors import InputError


class OptionError(argparse.ArgumentTypeError):
    """A bad option value; the message follows the option's name ("--x must ...")."""


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise OptionError(f"must be {what}, not {text!r}") from None


def _float(text: str, what: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise OptionError(f"must be {what}, not {text!r}") from None
    if not math.isfinite(value):
        raise OptionError(f"must be {what}, not {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 (batch sizes, caps, top-k)."""
    value = _int(text, "a whole number of at least 1")
    if value < 1:
        raise OptionError(f"must be a whole number of at least 1, not {text!r}")
    return value


def seed(text: str) -> int:
    """A random seed: a whole number from 0 to 2**32 - 1."""
    value = _int(text, "a whole number from 0 to 4294967295")
    if not 0 <= value < 2 ** 32:
        raise OptionError(f"must be a whole number from 0 to 4294967295, not {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (epochs, learning rate)."""
    value = _float(text, "a finite number above 0")
    if value <= 0:
        raise OptionError(f"must be a finite number above 0, not {text!r}")
    return value


def fraction(text: str) -> float:
    """A share in [0, 1) (the held-out fraction)."""
    value = _float(text, "a number from 0 up to (not including) 1")
    if not 0 <= value < 1:
        raise OptionError(f"must be a number from 0 up to (not including) 1, not {text!r}")
    return value


def unit(text: str) -> float:
    """A number in [0, 1] (thresholds)."""
    value = _float(text, "a number from 0 to 1")
    if not 0 <= value <= 1:
        raise OptionError(f"must be a number from 0 to 1, not {text!r}")
    return value


def check_max_length(value: int, model_max: int, minimum: int = 1,
                     option: str = "--max-length") -> None:
    """``value`` tokens must fit the model (``minimum`` .. its maximum); raises InputError."""
    if not minimum <= value <= model_max:
        raise InputError(f"{option} must be from {minimum} to {model_max} (this model's "
                         f"maximum), not {value}.")


def _probe(folder: Path) -> None:
    """Raise OptionError unless a file can be created in ``folder`` (a real write: permission
    bits, read-only file systems and root all answer truthfully)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
    except OSError as exc:
        raise OptionError(f"cannot be written: the folder {folder} is not writable "
                          f"({exc.strerror or type(exc).__name__})") from None
    os.close(fd)
    os.unlink(name)


def out_file(suffix: str):
    """A validator of an output file path: it must end in ``suffix``, its folder must exist
    and be writable, and it must not be a folder or a read-only file."""
    article = "an" if suffix[1:2] in "aeiou" else "a"

    def check(text: str) -> str:
        if not text.endswith(suffix):
            raise OptionError(f"must name {article} {suffix} file.")
        path = Path(text).expanduser()
        folder = path.resolve().parent
        if not folder.is_dir():
            raise OptionError(f"names a folder that does not exist: {folder}")
        if path.is_dir():
            raise OptionError(f"is a folder, not {article} {suffix} file: {path}")
        if path.exists() and not os.access(path, os.W_OK):
            raise OptionError(f"cannot be written: {path} is read-only")
        _probe(folder)
        return text

    check.__name__ = f"{suffix.lstrip('.')}_file"
    return check


def out_folder(text: str) -> str:
    """A checkpoint folder: new, empty or an earlier checkpoint of this project, in a
    writable place (:func:`analysis.absa.checkpoints.check_checkpoint_target`)."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.absa.checkpoints import check_checkpoint_target
    try:
        out = check_checkpoint_target(text)
    except InputError as exc:
        raise OptionError(f"cannot be used: {exc}") from None
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    _probe(parent)
    return text
