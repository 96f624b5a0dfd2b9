"""Module-level functions the child-process tests run in a spawned interpreter (a spawned child
imports its function by module name, so they cannot live in a test module's closure)."""

from __future__ import annotations

import os
import signal
import time

from analysis.core.errors import InputError


def count(n: int, *, send) -> dict:
    for i in range(n):
        send("step", i)
    return {"n": n, "nice": os.getpriority(os.PRIO_PROCESS, 0), "pid": os.getpid()}


def fail(*, send):
    send("step", 0)
    raise InputError("planted: this input is refused")


class Odd(Exception):
    def __init__(self, a, b):  # does not unpickle from its args
        super().__init__(f"{a}-{b}")


def fail_oddly(*, send):
    raise Odd(1, 2)


def die(*, send):
    send("step", 0)
    os.kill(os.getpid(), signal.SIGKILL)


def forever(path: str, *, send):
    with open(path, "w") as f:
        f.write(str(os.getpid()))
    while True:
        send("tick")
        time.sleep(0.05)


def silent(path: str, *, send):
    """A long step that sends nothing (a training step of minutes)."""
    with open(path, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)


def fractions(*, progress):
    progress(0.5, "half")
    return "ok"


# The example checkpoint's background build (tests/test_aspects_example.py): stand-ins for
# build_example, run in the build's child process; told where to copy from and when to go
# through the environment (which the child inherits).

def example_build_waiting(out=None, progress=None):
    import shutil
    from pathlib import Path

    from analysis.core.example import example_path

    progress(0.4, "epoch 2/8, step 38/96")
    go = Path(os.environ["CHILDWORK_GO"])
    deadline = time.monotonic() + 30
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    shutil.copytree(os.environ["CHILDWORK_BUILT"], example_path())
    return example_path()


def example_build_broken(out=None, progress=None):
    raise OSError("No space left on device\nmore")


def openmp(*, send) -> dict:
    """The child's OpenMP wait policy and its torch threads once it reported (the load
    follower sets them at a ``send``), with the threads the load leaves free then."""
    import torch

    from analysis.core.execution.threads import cores

    send("step", 0)
    return {"wait": os.environ.get("OMP_WAIT_POLICY"), "threads": torch.get_num_threads(),
            "cores": cores()}
