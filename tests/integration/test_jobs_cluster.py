"""The job queue's cluster path (ui/common/jobs + analysis/core/execution/) with a fake cluster
runner
(no Ray): DASHBOARD_RAY_ADDRESS read once, cluster tickets with their own slots, the bar moved by
the cluster's progress, the caption under it, a lost worker's message and the slot it
frees, a visitor who leaves, the per-visitor cap, a bad address (the job runs here); the token
cap applied on the workers gives the in-process numbers; and a page's job without the address
imports nothing from Ray (a fresh interpreter)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from analysis.core.execution import cluster
from analysis.core.execution.work import Corpus
from ui.common import jobs
from ui.common.jobs import JobCancelled, JobLimit, JobQueue, run_job
from analysis.core.errors import DataError
from ui.common.errors import plain
from ui.server.settings import Settings, load_settings

from test_jobs import WAIT, _StopAfter, _until, _Waiter

ROOT = Path(__file__).resolve().parents[2]
ADDRESS = "127.0.0.1:6379"


class _Fake(_StopAfter):
    """``_StopAfter`` that also records captions and warnings."""

    def caption(self, *a, **kw):
        return self._send("caption", *a, **kw)

    def warning(self, *a, **kw):
        return self._send("warning", *a, **kw)


@dataclass
class _Result:
    value: int
    seconds: float = 0.0


class _FakeCluster:
    """Stands in for the cluster: ``connect`` says ``workers``; ``run`` reports each shard of
    4 rows as done, each time until the page drew it (holding at ``gate`` after the first when
    given), and returns a result."""

    def __init__(self, workers=3, gate=None, fail=None):
        self.workers, self.gate, self.fail, self.calls = workers, gate, fail, []
        self.first = threading.Event()
        self.page, self.error = None, None

    def drawn(self, done, n) -> bool:
        return any(kind == "progress" and text and text.startswith(f"{done} / {n} ")
                   for kind, _, text in list(self.page.sent))

    def connect(self, address):
        self.calls.append(("connect", address))
        return self.workers

    def run(self, job, dataset, **kw):
        self.calls.append(("run", job, kw))
        n = len(dataset)
        for done in range(4, n + 4, 4):
            kw["progress"](min(done, n), n)
            self.first.set()
            if self.gate is None and self.fail is None:
                assert _until(lambda: self.drawn(min(done, n), n))
            if self.fail is not None:
                raise self.fail
            if self.gate is not None:
                assert self.gate.wait(WAIT)
                try:
                    kw["progress"](done, n)
                except BaseException as exc:
                    self.error = exc
                    raise
        return _Result(sum(dataset))


@pytest.fixture
def fake(monkeypatch):
    def use(settings=Settings(ray_address=ADDRESS), **kw):
        fc = _FakeCluster(**kw)
        monkeypatch.setattr(cluster, "connect", fc.connect)
        monkeypatch.setattr(cluster, "_run_ray", fc.run)
        monkeypatch.setattr(jobs, "settings", lambda: settings)
        page = fc.page = _Fake(10**9)
        monkeypatch.setattr(jobs, "st", page)
        return fc, page
    return use


def _local(progress):
    raise AssertionError("the in-process function ran although the job was on the cluster")


def test_the_address_is_read_once_and_a_bad_one_is_said_not_fatal():
    assert load_settings({}).ray_address is None and load_settings({}).ray_error is None
    bad = load_settings({"DASHBOARD_RAY_ADDRESS": "not an address"})
    assert bad.ray_address is None
    assert bad.ray_error == ("DASHBOARD_RAY_ADDRESS must be 'auto' or a Ray address HOST:PORT "
                             "(or ray://HOST:PORT), not 'not an address'. Heavy jobs run in "
                             "the server process instead.")
    good = load_settings({"DASHBOARD_RAY_ADDRESS": f" {ADDRESS} "})
    if importlib.util.find_spec("ray") is None:
        assert "Ray is not installed" in good.ray_error and good.ray_address is None
    else:
        assert (good.ray_address, good.ray_error) == (ADDRESS, None)


def test_cluster_tickets_have_their_own_slots_and_positions():
    q, log = JobQueue(slots=1), []
    server = _Waiter(q, "server job", log)  # e.g. the Head importance background job
    server.start()
    assert server.started_job.wait(WAIT)
    a = q.join("visitor A", "a", cluster=True)
    assert q.wait_turn(a) is None  # runs at once: no in-process job holds it up
    b = q.join("visitor B", "b", cluster=True)
    assert q.wait_turn(b) == 1  # one cluster job ahead (the server's job is not counted)
    local = q.join("fine-tune", "f")
    assert q.wait_turn(local) == 1  # and the local one counts only the server job
    q.set_cluster_slots(2)  # the cluster has 2 workers
    assert q.wait_turn(b) is None
    assert q.state() == {"running": ["server job", "visitor A", "visitor B"], "waiting": 1}
    for t in (a, b, local):
        q.leave(t)
    server.release.set(), server.join(WAIT)
    assert q.state() == {"running": [], "waiting": 0}


def test_the_per_visitor_cap_counts_cluster_jobs():
    q = JobQueue(slots=1)
    q.join("Corpus statistics", "x", ("session:1",), limit=1, cluster=True)
    with pytest.raises(JobLimit, match="at most 1 per visitor"):
        q.join("Drift", "y", ("session:1",), limit=1)


def test_run_job_waits_on_the_cluster_with_bar_caption_and_slots(fake):
    fc, page = fake(workers=3)
    q = JobQueue(slots=1)
    job = Corpus("the corpus job", list(range(10)), max_length=7, here=_local)
    out = run_job("Corpus statistics", job, key="s", queue=q)
    assert out.value == 45 and out.seconds > 0  # the page's "in S s" is the cluster's time
    assert fc.calls[0] == ("connect", ADDRESS)
    _, sent, kw = fc.calls[1]
    assert (sent.job, sent.max_length) == ("the corpus job", 7)  # the token cap travels
    assert (kw["workers"], kw["min_workers"]) == (3, 1)
    assert q.cluster_slots == 3 and q.state() == {"running": [], "waiting": 0}
    bars = [(args[0], text) for kind, args, text in page.sent if kind == "progress"]
    assert bars[0] == (0.0, "Corpus statistics")
    fractions = [f for f, t in bars if "examples on the cluster" in t]
    assert fractions == [0.4, 0.8, 1.0]
    captions = [args[0] for kind, args, _ in page.sent if kind == "caption"]
    assert captions == [plain(cluster.WHERE.format(address=ADDRESS))]
    assert captions[0].startswith("Runs on the Ray cluster (127.0.0.1")
    assert [k for k, _, _ in page.sent][-2:] == ["empty", "empty"]  # bar and caption go


def test_a_cluster_job_waits_its_turn_behind_cluster_jobs_only(fake, monkeypatch):
    fc, page = fake(workers=1)
    q = JobQueue(slots=1, cluster_slots=1)
    holder = q.join("other visitor", "o", cluster=True)
    assert q.wait_turn(holder) is None
    threading.Timer(0.5, q.leave, args=(holder,)).start()
    out = run_job("Drift", Corpus("job", [1, 2, 3], here=_local), key="d", queue=q)
    assert out.value == 6
    infos = [args[0] for kind, args, _ in page.sent if kind == "info"]
    assert infos and all("waiting for 1 job(s) ahead of yours" in m for m in infos)


def test_a_worker_lost_mid_job_is_said_and_frees_the_slot(fake):
    from analysis.core.execution.raydata import WorkerLost

    fake(fail=WorkerLost("A Ray worker died mid-job (the CLI's words)"))
    q = JobQueue(slots=1)
    with pytest.raises(WorkerLost) as err:
        run_job("Corpus statistics", Corpus("job", list(range(8)), here=_local), key="s",
                queue=q)
    assert str(err.value) == cluster.LOST and "Run it again" in str(err.value)
    assert q.state() == {"running": [], "waiting": 0}
    assert run_job("next", lambda p: 42, key="n", queue=q) == 42


def test_a_model_the_workers_cannot_load_is_said_in_the_loaders_words(fake):
    from analysis.core.models import ModelLoadError

    class RayTaskError(Exception):  # Ray's wrapper keeps the worker's exception as ``cause``
        def __init__(self, cause):
            super().__init__("ray: task failed\nTraceback ...")
            self.cause = cause

    fake(fail=RayTaskError(ModelLoadError("Cannot load /tmp/upload-1: no such folder.")))
    q = JobQueue(slots=1)
    with pytest.raises(DataError) as err:  # what every corpus page shows
        run_job("Drift", Corpus("job", list(range(8)), here=_local), key="d", queue=q)
    assert str(err.value) == ("The Ray cluster's workers cannot load the model: Cannot load "
                              "/tmp/upload-1: no such folder.")
    assert q.state() == {"running": [], "waiting": 0}


def test_an_unreachable_cluster_is_said_at_once():
    """Nothing listening on the port: one line, without waiting on Ray's minutes of retries;
    a listening port passes."""
    import socket

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        cluster.reachable(f"127.0.0.1:{srv.getsockname()[1]}")
        cluster.reachable(f"ray://127.0.0.1:{srv.getsockname()[1]}")
        closed = srv.getsockname()[1]
    with pytest.raises(DataError, match=rf"^Cannot reach the Ray cluster at 127.0.0.1:{closed} "
                       r"\(Connection refused\); this job was not run\."):
        cluster.reachable(f"127.0.0.1:{closed}")
    cluster.reachable("auto")  # the local cluster, or a new one: nothing to probe


def test_a_visitor_who_leaves_stops_waiting_on_the_cluster(fake, monkeypatch):
    gate = threading.Event()
    fc, _ = fake(gate=gate)
    monkeypatch.setattr(jobs, "st", _Fake(4))  # placeholder, its clearing, bar, caption
    q = JobQueue(slots=1)
    with pytest.raises(RuntimeError, match="visitor left"):
        run_job("Syntax", Corpus("job", list(range(12)), here=_local), key="x", queue=q)
    assert fc.first.wait(WAIT)
    gate.set()  # the next progress call of the worker raises JobCancelled
    assert _until(lambda: q.state() == {"running": [], "waiting": 0})
    assert isinstance(fc.error, JobCancelled)  # raised in the worker: it stopped, then left


def test_a_bad_address_is_said_and_the_job_runs_here(fake):
    bad = load_settings({"DASHBOARD_RAY_ADDRESS": "nowhere"})
    fc, page = fake(settings=bad)
    q = JobQueue(slots=1)
    assert run_job("Corpus statistics", Corpus("job", [1], here=lambda p: "here"), key="s",
                   queue=q) == "here"
    warnings = [args[0] for kind, args, _ in page.sent if kind == "warning"]
    assert warnings == [plain(bad.ray_error)]
    assert "nowhere" in warnings[0]
    assert fc.calls == [] and not [k for k, _, _ in page.sent if k == "caption"]


def test_without_a_cluster_job_the_address_changes_nothing(fake):
    fc, page = fake()
    assert run_job("Fine-tune", lambda p: "here", key="f", queue=JobQueue()) == "here"
    assert fc.calls == []


def test_capped_jobs_give_the_in_process_numbers(tiny_model_dir, tmp_path):
    """What the workers compute with the page's token cap equals the page's in-process path
    (noop: ``replace(loaded, max_length=cap)``; drift: the capped before-model)."""
    import datasets
    import numpy as np

    from analysis.drift import compare_models, load_pair
    from analysis.drift.job import DriftJob
    from analysis.core.encoding import encode_dataset
    from analysis.core.models import load_model
    from analysis.noop import corpus_stats
    from analysis.noop.corpus import NoopJob
    from analysis.core.execution.corpus import run_sharded

    spec = str(tiny_model_dir("bert"))
    ds = datasets.Dataset.from_dict({"text": [
        "The soup was cold but the staff were very kind to us.",
        "Great pizza.", "We waited an hour, and nobody said sorry, so we left early.",
        "Fine.", "The wine list is long and the prices are fair for the area."]})
    loaded = load_model(spec)
    here = corpus_stats(replace(loaded, max_length=8), ds, batch_size=2)
    there = run_sharded(cluster.Capped(NoopJob(spec, 2), 8), cluster.Capped(
        NoopJob(spec, 2), 8).load(), ds, [0, 2, 5])
    assert here.n_truncated == there.n_truncated == 3
    assert there.notes == here.notes and there.n_tokens == here.n_tokens
    for k in here.metrics:
        np.testing.assert_allclose(there.metrics[k], here.metrics[k], atol=1e-6)

    before, after = load_pair(spec, spec)
    capped = replace(before, max_length=8)
    local = compare_models(capped, after, encode_dataset(capped.tokenizer, ds, 8), batch_size=2)
    job = cluster.Capped(DriftJob(spec, spec, 2), 8)
    remote = run_sharded(job, job.load(), ds, [0, 3, 5])
    assert remote.to_json()["summary"] == local.to_json()["summary"]
    np.testing.assert_allclose(remote.cka, local.cka, atol=1e-6)


def test_a_page_job_without_the_address_imports_nothing_from_ray(tmp_path):
    """The No-op page runs its corpus job in a fresh interpreter with no DASHBOARD_RAY_ADDRESS:
    ``ray`` (and analysis.core.execution.raydata's cluster code) never gets imported."""
    script = textwrap.dedent("""
        import os, sys
        os.environ.pop("DASHBOARD_RAY_ADDRESS", None)
        from streamlit.testing.v1 import AppTest
        import ui.common.frame.sidebar
        ui.common.frame.sidebar.leave_legacy_navigation = lambda: None
        at = AppTest.from_file("app.py", default_timeout=240)
        at.run()
        at.session_state["noop_max"] = 3
        at.switch_page("pages/noop.py")
        at.run()
        assert not at.exception, at.exception
        metrics = {m.label: m.value for m in at.metric}
        print("EXAMPLES", metrics.get("Examples"))
        print("RAY", "ray" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "EXAMPLES 3" in out.stdout  # the job ran (3 examples' statistics on the page)
    assert "RAY False" in out.stdout
