"""Heavy work in a child process of its own (a fine-tune, the example checkpoint's build), so
that the process that asked for it (the Streamlit server) keeps its interpreter lock and its
cores for light requests.

``run_in_child(fn, *args, on_message=..., on_poll=..., nice=10, **kwargs)`` starts a fresh
interpreter (``sys.executable``: no fork of a threaded server) with passive OpenMP waits
(:func:`analysis.core.execution.threads.child_env`), lowers its scheduling priority (``nice``),
keeps its torch threads at what the machine's load leaves free (re-checked at each ``send``:
:func:`analysis.core.execution.threads.heavy_work`) and calls ``fn(*args, send=send, **kwargs)``
there; ``fn`` must be a module-level
function and its arguments picklable. Each ``send(*message)`` of the child reaches
``on_message(*message)`` in the caller's thread, which ``on_poll()`` is also called from every
``poll_s`` seconds. What ``fn`` returns is returned; what it raises is raised again here (its own
type where it pickles, else a RuntimeError naming it).

Not multiprocessing's ``spawn``: it re-runs the parent's ``__main__`` in the child, and under
Streamlit ``__main__`` is the page script being run, so every child would have run the app. The
child here is ``python -c`` with a two-line bootstrap that takes the parent's ``sys.path`` and
working folder, then imports only ``fn``'s module; the two talk over a pair of pipes
(:class:`multiprocessing.connection.Connection`).

Stopping: whatever ``on_message`` or ``on_poll`` raises (a job whose visitor left) ends the child
(SIGTERM, then SIGKILL) before it propagates, and so does an interrupted caller; a caller that is
killed outright is noticed by the child within :data:`WATCH_S` seconds (its parent's pid
changes), which then ends. A child that dies without an answer (killed, out of memory) raises
:class:`ChildDied` with one plain line.
"""

from __future__ import annotations

import os
from pathlib import Path
import pickle
import signal
import subprocess
import sys
from multiprocessing.connection import Connection
from typing import Any, Callable
import threading
import time

from analysis.core.errors import DataError
from analysis.core.execution.threads import child_env, following_load, heavy_work


def process_alive(pid: int) -> bool:
    """Whether the process ``pid`` runs on this machine (a zombie does not; another user's
    process does): the one test of a pid that a leftover's name or a record holds."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it runs
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True

POLL_S = 0.2
# the folder that holds analysis/ (this file is analysis/core/execution/child.py)
ROOT = str(Path(__file__).resolve().parents[3])
STOP_S = 5.0  # seconds between SIGTERM and SIGKILL when the caller stops the child
WATCH_S = 0.5  # how often the child checks that its caller is still there


class ChildDied(DataError):
    """The child process ended without a result (killed, out of memory, crashed)."""


BOOT = ("import sys; from multiprocessing.connection import Connection as C; "
        "r, w = C(int(sys.argv[1]), writable=False), C(int(sys.argv[2]), readable=False); "
        "sys.path[:] = r.recv(); from analysis.core.execution.child import _child_main; "
        "_child_main(r, w, int(sys.argv[3]))")


def _watch_parent(parent: int, every: float) -> None:
    """End this process as soon as ``parent`` is gone (this process is handed to another
    parent then): a killed server's child stops within ``every`` seconds, not at its next
    message (a long training step: minutes)."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def _child_main(conn_in, conn, parent: int | None = None) -> None:
    """The child's side: the work from ``conn_in``, its messages and answer to ``conn``;
    stopped when ``parent`` (the caller's pid) goes away."""
    if parent is not None:
        threading.Thread(target=_watch_parent, args=(parent, WATCH_S), daemon=True,
                         name="watch-parent").start()
    fn, args, kwargs, nice, send_as = conn_in.recv()
    conn_in.close()

    def send(*message) -> None:
        conn.send(("message", message))

    try:
        with heavy_work(nice, process=True) as follower:
            result = fn(*args, **{send_as: following_load(send, follower)}, **kwargs)
        conn.send(("result", result))
    except BaseException as exc:  # handed to the caller
        try:
            pickle.loads(pickle.dumps(exc))  # it must also unpickle on the caller's side
        except Exception:  # noqa: BLE001 - an exception that does not: its name and text
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        conn.send(("error", exc))
    finally:
        conn.close()


def _stop(proc) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()


def _died(exitcode: int | None) -> ChildDied:
    if exitcode is not None and exitcode < 0:
        try:
            how = f"was stopped by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"was stopped by signal {-exitcode}"
        if exitcode == -signal.SIGKILL:
            how += " (the machine may have run out of memory)"
    else:
        how = f"ended with exit code {exitcode}"
    return ChildDied(f"The process doing this work {how} before it finished; nothing was "
                     "kept. Run it again.")


def run_in_child(fn: Callable, *args, on_message: Callable[..., None] | None = None,
                 on_poll: Callable[[], None] | None = None, nice: int | None = 10,
                 poll_s: float = POLL_S, send_as: str = "send", **kwargs) -> Any:
    """``fn(*args, send=send, **kwargs)`` in a child process of its own (module docstring);
    ``send_as`` names the keyword ``send`` is passed as (``progress`` for a function that takes
    ``progress(fraction, text)``)."""
    from_parent, to_child = os.pipe()  # (read end, write end)
    from_child, to_parent = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", BOOT, str(from_parent), str(to_parent),
                             str(os.getpid())],
                            pass_fds=(from_parent, to_parent), cwd=os.getcwd(),
                            stdin=subprocess.DEVNULL, env=child_env())
    os.close(from_parent)  # the child holds its ends: EOF here once it is gone
    os.close(to_parent)
    mine = Connection(from_child, writable=False)
    with Connection(to_child, readable=False) as out:
        try:
            out.send([*sys.path, ROOT])  # the parent's, and where ``analysis`` lives
            out.send((fn, args, kwargs, nice, send_as))
        except (BrokenPipeError, EOFError, OSError):
            pass  # the child died at once: said below
    try:
        while True:
            if mine.poll(poll_s):
                try:
                    kind, payload = mine.recv()
                except (EOFError, OSError):
                    proc.wait()
                    raise _died(proc.returncode) from None
                if kind == "message":
                    if on_message is not None:
                        on_message(*payload)
                    continue
                proc.wait()
                if kind == "error":
                    raise payload
                return payload
            if on_poll is not None:
                on_poll()
    finally:
        mine.close()
        _stop(proc)
