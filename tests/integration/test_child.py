"""Heavy work in a child process (analysis.core.execution.child) and the fine-tune run there
(analysis.absa.pipeline.run_fine_tune_apart): the same numbers as in this process, messages
relayed, errors raised in their own type, a dead or stopped child said or ended."""

from __future__ import annotations

import os

import pytest

import builders

from analysis.core.execution.child import ChildDied, run_in_child
from analysis.core.errors import InputError
from tests import childwork


def test_messages_result_and_lower_priority():
    seen = []
    out = run_in_child(childwork.count, 3, on_message=lambda *m: seen.append(m), nice=7)
    assert seen == [("step", 0), ("step", 1), ("step", 2)]
    assert out["n"] == 3 and out["pid"] != os.getpid()
    assert out["nice"] >= 7  # niceness raised in the child (never lowered below the caller's)


def test_the_child_waits_passively_and_takes_its_threads_from_the_load(monkeypatch):
    """Issue 48: OpenMP threads that spin while they wait cost 6x the CPU on a busy machine;
    the child's environment makes them sleep, and its torch threads are set by the load (at
    its first report once torch is loaded): with OMP_NUM_THREADS=1 (a person's cap), one."""
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    out = run_in_child(childwork.openmp)
    assert out["wait"] == "PASSIVE" and out["threads"] == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    out = run_in_child(childwork.openmp)
    assert 1 <= out["threads"] <= out["cores"]


def test_send_as_names_the_keyword():
    seen = []
    assert run_in_child(childwork.fractions, on_message=lambda *m: seen.append(m),
                        send_as="progress") == "ok"
    assert seen == [(0.5, "half")]


def test_errors_come_back_in_their_own_type():
    with pytest.raises(InputError, match="planted: this input is refused"):
        run_in_child(childwork.fail)
    with pytest.raises(RuntimeError, match="Odd: 1-2"):  # unpicklable: its name and text
        run_in_child(childwork.fail_oddly)


def test_a_killed_child_is_said_in_one_line():
    with pytest.raises(ChildDied, match="stopped by signal SIGKILL.*out of memory.*Run it again"):
        run_in_child(childwork.die)


def test_the_parents_main_script_is_not_run_again(tmp_path, monkeypatch):
    """Under Streamlit, ``__main__`` is the page script being run; a child started with
    multiprocessing's spawn ran it again (the whole app, in every child). Here a main script that
    would end its process at once: the child still does its work."""
    import types

    script = tmp_path / "page.py"
    script.write_text("import sys\nsys.exit(3)\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(__import__("sys").modules, "__main__", main)
    assert run_in_child(childwork.count, 2)["n"] == 2


class Stop(BaseException):
    pass


def test_what_the_caller_raises_ends_the_child(tmp_path):
    pid_file = tmp_path / "pid"
    ticks = []

    def on_message(*m):
        ticks.append(m)
        if len(ticks) == 3:
            raise Stop()

    with pytest.raises(Stop):
        run_in_child(childwork.forever, str(pid_file), on_message=on_message)
    assert builders.process_gone(int(pid_file.read_text()), within=10), \
        "the child still runs after the caller stopped it"


def test_on_poll_can_stop_a_silent_child(tmp_path):
    polls = []

    def on_poll():
        polls.append(1)
        raise Stop()

    with pytest.raises(Stop):  # the child sends nothing before the first poll: still stopped
        run_in_child(childwork.forever, str(tmp_path / "pid"), on_poll=on_poll, poll_s=0.01)
    assert polls == [1]


PARENT = """
import sys
sys.path[:0] = [{root!r}, {tests!r}]
from analysis.core.execution.child import run_in_child
import childwork
run_in_child(childwork.silent, {pid!r})
"""


def test_a_killed_caller_ends_a_silent_child_within_a_second(tmp_path):
    """Issue 34 item 6: a server killed during a fine-tune left its child running until the
    child's next message (up to 90 s); the child now watches its parent."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]  # tests/ (childwork.py)
    pid_file = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", PARENT.format(
        root=str(tests.parent), tests=str(tests), pid=str(pid_file))])
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.is_file() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(pid_file.read_text())
        assert not builders.process_gone(child, within=0.3)  # it waits on its long step
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert builders.process_gone(child, within=2.0), "the child outlived its killed caller"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_fine_tune_apart_equals_the_fine_tune_here(tiny_model_dir):
    from analysis.absa.data import split_dataset
    from analysis.absa.pipeline import run_fine_tune, run_fine_tune_apart
    from analysis.absa.readers import load_sample
    from analysis.core.models import load_model


    spec = str(tiny_model_dir("bert"))
    train, test = split_dataset(load_sample().select(range(8)), 0.25, seed=0)
    options = dict(data="sample[:8]", epochs=1, batch_size=8, lr=1e-3, seed=3)
    here = run_fine_tune(load_model(spec), train, test, "qa_m", **options)
    steps, said = [], []
    apart = run_fine_tune_apart(spec, train, test, "qa_m", progress=steps.append,
                                status=said.append, **options)
    assert apart.result.losses == pytest.approx(here.result.losses, abs=1e-6)
    assert len(steps) == len(here.result.losses) and steps[-1].step == steps[-1].total_steps
    assert said[0] == "Loading the model in the fine-tune's own process..."
    assert said[-1] == "Evaluating on the held-out sentences..."
    assert apart.card["metrics"] == pytest.approx(here.card["metrics"], abs=1e-6)
    assert apart.card["base_model"] == spec and apart.folder is None
    assert len(apart.eval_examples) == len(here.eval_examples)
    a, b = apart.result.model.state_dict(), here.result.model.state_dict()
    assert a.keys() == b.keys()
    assert max(float((a[k].float() - b[k].float()).abs().max()) for k in a) < 1e-5
    assert not apart.result.model.training
