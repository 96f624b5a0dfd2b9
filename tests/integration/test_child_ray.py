"""One heavy task on a real local Ray cluster (2 CPUs on 127.0.0.1, started and shut down by the
test): analysis.core.execution.raydata.run_task relays messages, raises the task's own errors, says
a
lost worker in one line and cancels a task its caller stops; the fine-tune sent there gives the
numbers of the fine-tune in this process."""

from __future__ import annotations

from pathlib import Path

import pytest

import builders

from analysis.core.errors import InputError
from tests import childwork

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -r "
                          "requirements-ray.txt to run the fine-tune-on-a-cluster test")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster():
    with builders.local_ray_cluster():
        yield


def test_messages_result_and_errors(cluster):
    from analysis.core.execution.raydata import WorkerLost, run_task, task_resources

    assert task_resources() == {"num_cpus": 2}  # no GPU: every CPU of the largest node
    seen = []
    out = run_task(childwork.count, 3, on_message=lambda *m: seen.append(m))
    assert seen == [("step", 0), ("step", 1), ("step", 2)] and out["n"] == 3
    with pytest.raises(InputError, match="planted: this input is refused"):
        run_task(childwork.fail)
    with pytest.raises(WorkerLost, match="A Ray worker died mid-job"):
        run_task(childwork.die)


class Stop(BaseException):
    pass


def test_a_stopped_caller_cancels_the_task(cluster, tmp_path):
    from analysis.core.execution.raydata import run_task

    ticks = []

    def on_message(*m):
        ticks.append(m)
        if len(ticks) >= 3:
            raise Stop()

    with pytest.raises(Stop):
        run_task(childwork.forever, str(tmp_path / "pid"), on_message=on_message)
    assert builders.process_gone(int((tmp_path / "pid").read_text()), within=20, every=0.2), \
        "the task's worker still runs after its caller stopped"


def test_fine_tune_on_the_cluster_equals_the_fine_tune_here(cluster, tiny_model_dir):
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(2)  # as the task's two CPUs
    try:
        _fine_tune_here_and_there(tiny_model_dir)
    finally:  # the test process's later modules keep their own thread count
        torch.set_num_threads(saved)


def _fine_tune_here_and_there(tiny_model_dir):
    from analysis.absa.data import split_dataset
    from analysis.absa.pipeline import run_fine_tune, run_fine_tune_apart
    from analysis.core.execution.placements import Away
    from analysis.absa.readers import load_sample
    from analysis.core.models import load_model

    spec = str(tiny_model_dir("bert"))
    train, test = split_dataset(load_sample().select(range(8)), 0.25, seed=0)
    options = dict(data="sample[:8]", epochs=1, batch_size=8, lr=1e-3, seed=3)
    here = run_fine_tune(load_model(spec), train, test, "qa_m", **options)
    steps, said = [], []
    there = run_fine_tune_apart(spec, train, test, "qa_m", progress=steps.append,
                                status=said.append, away=Away("auto"), **options)
    assert there.result.losses == pytest.approx(here.result.losses, abs=1e-5)
    assert len(steps) == len(here.result.losses)
    assert said[-1] == "Sending the fine-tuned model back..."
    assert there.card["metrics"] == pytest.approx(here.card["metrics"], abs=1e-5)
    a, b = there.result.model.state_dict(), here.result.model.state_dict()
    assert max(float((a[k].float() - b[k].float()).abs().max()) for k in a) < 1e-4


def test_the_aspect_heads_page_fine_tunes_on_the_cluster(cluster, tiny_model_dir, monkeypatch,
                                                         tmp_path):
    """With DASHBOARD_RAY_ADDRESS set, the page's "Fine-tune" runs as a task on the cluster
    (and the page says so under the bar); the visitor gets the fine-tuned model as before."""
    from streamlit.testing.v1 import AppTest

    import analysis.core.execution.raydata
    from ui.aspects import state as aspects_state
    from ui.server.settings import settings

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    monkeypatch.setenv("DASHBOARD_RAY_ADDRESS", "auto")
    settings.cache_clear()
    sent, real = [], analysis.core.execution.raydata.run_task
    monkeypatch.setattr(analysis.core.execution.raydata, "run_task",
                        lambda fn, *a, **k: sent.append(fn.__name__) or real(fn, *a, **k))
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
        at.query_params["src"] = "Local folder"
        at.query_params["model"] = str(tiny_model_dir("bert"))
        at.run()
        at.switch_page("pages/aspects.py")
        at.run()
        at.radio(key="ah_source").set_value("Fine-tune on the bundled sample")
        at.run()
        at.selectbox(key="ah_task").set_value("qa_m")
        at.number_input(key="ah_epochs").set_value(0.01)  # one step
        at.button(key="ah_train").click()
        at.run()
    finally:
        settings.cache_clear()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert sent == ["_fine_tune_apart"]  # the fine-tune went to the cluster
    assert at.success[0].value.startswith(  # the task glossed at its first use (issue 49)
        "QA-M (the review paired with a question about the aspect) model on bundled sample "
        "(2 layers × 4 heads")
    state = at.session_state[aspects_state.MODEL]
    assert state.card["base_model"] == str(tiny_model_dir("bert")) and len(state.losses) == 1
