"""The cluster path of Head importance and Attribution faithfulness
(analysis/core/execution/cluster.py),
with the fake cluster runner of tests/test_jobs_cluster.py (no Ray): a model the workers cannot load
runs here once, the bar says so, and its next job is queued here with the caption; a Ray
Data actor that died loading the model is said in the loader's words, not as a lost worker;
the first-visit background job takes a cluster ticket (it waits behind no in-process job) and
waits on the cluster, or runs here without the address; AppTest: Head importance's first view
goes to the cluster and shows the library's numbers; the Search page's index (its command's
one description) reaches the cluster with the page's token cap, as a visitor's job or the
demo's shared background job, and the command's placement sends it on its --ray-workers. The
real cluster: tests/test_jobs_cluster_ray_pages.py."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

import pytest

from analysis.core.errors import DataError
from analysis.importance.reading import free_heads, removable_together
from analysis.core.models import ModelLoadError
from analysis.core.execution.raydata import WorkerLost
from analysis.core.execution import cluster
from ui.common import jobs
from ui.common.errors import plain
from analysis.core.execution.placements import placement
from analysis.core.execution.work import Corpus
from ui.common.jobs import JobQueue, run_job, start_background_job
from ui.server.settings import Settings

from test_jobs import WAIT, _until
from test_jobs_cluster import ADDRESS, _local, fake  # noqa: F401

SPEC = "/srv/models/gone"
SAID = f"The folder {SPEC} does not exist."


@dataclass
class _Job:
    spec: str


class RayTaskError(Exception):  # Ray's wrapper keeps the worker's exception as ``cause``
    def __init__(self, cause):
        super().__init__("ray: task failed")
        self.cause = cause


def test_a_model_the_workers_cannot_load_runs_here_then_is_queued_here(fake, monkeypatch):
    fc, page = fake(fail=RayTaskError(ModelLoadError(SAID)))
    monkeypatch.setattr(cluster, "_UNLOADABLE", set())
    monkeypatch.setattr("ui.server.settings.settings", lambda: Settings(ray_address=ADDRESS))
    captions = []
    monkeypatch.setattr(jobs.st, "caption", lambda text, **kw: captions.append(text))
    where = placement(ADDRESS)
    cj = Corpus(_Job(SPEC), list(range(8)), here_if_unloadable=True)
    assert where.cluster(cj) and not where.refuses(cj) and captions == []

    bar = plain(f"half ({cluster.HERE_BAR})")  # the bar says where it runs

    def here(progress):
        progress(0.5, "half")
        assert _until(lambda: any(text == bar for _, _, text in list(page.sent)))
        return "computed here"

    q = JobQueue(slots=1)
    cj = replace(cj, here=here)  # its in-process run
    assert run_job("Faithfulness", cj, key="f", queue=q) == "computed here"
    assert [c[0] for c in fc.calls] == ["connect", "run"]  # tried on the cluster once
    assert ("progress", (0.5,), bar) in page.sent
    assert cluster._UNLOADABLE == {(ADDRESS, SPEC)}
    assert q.state() == {"running": [], "waiting": 0}

    # the next job of that model: queued here from the start, with the caption
    captions.clear()  # (run_job's own caption under the bar: where it went)
    assert where.refuses(cj) and not where.cluster(cj)
    assert not where.refuses(Corpus(_Job("default"), [1]))
    assert run_job("Faithfulness", cj, key="f", queue=q) == "computed here"
    assert captions == [cluster.HERE]  # said above the bar
    assert len(fc.calls) == 2


def test_without_the_fallback_a_model_the_workers_cannot_load_is_said(fake):
    fake(fail=RayTaskError(ModelLoadError(SAID)))
    with pytest.raises(DataError) as err:
        run_job("Corpus statistics", Corpus(_Job(SPEC), list(range(8)), here=_local), key="c",
                queue=JobQueue(slots=1))
    assert str(err.value) == f"The Ray cluster's workers cannot load the model: {SAID}"


def test_an_actor_that_died_loading_the_model_is_said_in_the_loaders_words(fake):
    class ActorDiedError(Exception):  # what Ray Data raises: the init error as text only
        actor_init_failed = True

        def __init__(self, msg):
            super().__init__("The actor died because of an error raised in its creation task")
            self.error_msg = msg

    try:
        try:
            raise ActorDiedError("Traceback (most recent call last):\n  File \"models.py\"\n"
                                 f"analysis.core.models.ModelLoadError: {SAID}")
        except ActorDiedError:
            # analysis.core.execution.raydata's
            raise WorkerLost("A Ray worker died mid-job") from None
    except WorkerLost as exc:
        lost = exc
    fake(fail=lost)
    with pytest.raises(cluster.Unloadable) as err:
        run_job("Corpus statistics", Corpus(_Job(SPEC), list(range(8)), here=_local), key="c",
                queue=JobQueue(slots=1))
    assert str(err.value) == f"The Ray cluster's workers cannot load the model: {SAID}"


def test_the_background_job_takes_a_cluster_ticket_and_waits_on_the_cluster(fake):
    gate = threading.Event()
    gate.set()  # no visitor draws a background job's bar: the fake runner does not wait for it
    fc, _ = fake(gate=gate)
    q = JobQueue(slots=1)
    busy = q.join("Fine-tuning", "busy")  # the server's only in-process slot is taken
    assert q.wait_turn(busy) is None
    told = []
    job = start_background_job("Head importance", Corpus("job", list(range(8)), here=_local),
                               key="bg", queue=q, on_progress=lambda f, t: told.append((f, t)))
    assert job.done.wait(WAIT) and job.error is None, job.error
    assert job.result.value == sum(range(8))  # the cluster's result
    assert [c[0] for c in fc.calls] == ["connect", "run"]
    assert told[-1][0] == 1.0 and "on the cluster" in told[-1][1]
    assert q.state() == {"running": ["Fine-tuning"], "waiting": 0}
    q.leave(busy)


def test_without_the_address_the_background_job_runs_here(fake):
    fc, _ = fake(settings=Settings())
    job = start_background_job("Head importance",
                               Corpus("job", list(range(8)), here=lambda progress: 42),
                               key="bg", queue=JobQueue(slots=1))
    assert job.done.wait(WAIT) and job.result == 42 and fc.calls == []


def test_the_importance_pages_first_view_goes_to_the_cluster(monkeypatch, tmp_path):
    """AppTest: the example's first view (a background job) sends its two ablation jobs to the
    cluster (a stand-in runner: the job loads its model by spec and maps the whole set, as one
    worker would) and the page shows the library's numbers."""
    pytest.importorskip("ray", reason="Ray is not installed: DASHBOARD_RAY_ADDRESS is refused")
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from analysis.importance import importance_study
    from analysis.importance.evalset import load_classifier, load_eval_set
    from analysis.core.execution.corpus import run_local
    from importance_util import stand_in_example
    from ui.server.settings import settings
    from ui.importance.compute import _BACKGROUND

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    monkeypatch.setenv("DASHBOARD_RAY_ADDRESS", ADDRESS)
    settings.cache_clear()
    stand_in_example(tmp_path / "cache")
    sent = []

    def runner(job, dataset, progress=None, **kw):
        sent.append((type(job).__name__, job.spec, len(dataset)))
        return run_local(job, job.load(), dataset, progress)

    monkeypatch.setattr(cluster, "connect", lambda address: 2)
    monkeypatch.setattr(cluster, "_run_ray", runner)
    try:
        at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                               default_timeout=240)
        at.run()
        at.switch_page("pages/importance.py")
        at.run()
        assert not at.exception, at.exception
        for job in list(_BACKGROUND.values()):
            assert job.done.wait(240)
        at.run()
        assert not at.exception and not at.error, at.exception or at.error
    finally:
        monkeypatch.delenv("DASHBOARD_RAY_ADDRESS")
        settings.cache_clear()
    loaded, card = load_classifier("example")
    ev = load_eval_set(loaded, card, "sample", max_examples=40)
    assert sent == [("AblationJob", "example", ev.n_examples)] * 2
    ref = importance_study(loaded, ev, prune=True)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Intact aspect F1"] == f"{ref.intact['aspect_f1']:.1f}"
    assert metrics["Heads free to go one at a time"] == f"{free_heads(ref)} of 8"
    assert metrics["Removable together within 1 point"] == \
        f"{ref.pruning['prunable']['by_importance']:.0%} ({removable_together(ref)[1]} heads)"


# -- Search: the page's index is the command's one description (issue 44) ---------------------

SEARCH_TEXTS = ["The soup was cold, and the waiter never came back to our table that night.",
                "Lovely bread.", "Is it open?"]


@pytest.fixture
def search_page(fake, monkeypatch, tmp_path, tiny_model_dir):
    """(loaded with a demo's token cap of 12, a corpus, the runs sent to the cluster (job, the
    job it wraps, its token cap, rows, workers), use):
    ``use(settings)`` points the job queue and the Search page at ``settings``; the cluster is
    a stand-in runner that loads the job's model by its spec and maps the whole corpus, as one
    Ray worker would."""
    import datasets

    from analysis.core.execution.corpus import run_local
    from analysis.core.models import load_model
    from ui.search import blocks as SB

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    sent = []

    def runner(job, dataset, progress=None, **kw):
        sent.append((type(job).__name__, type(getattr(job, "job", job)).__name__,
                     getattr(job, "max_length", None), len(dataset), kw.get("workers")))
        return run_local(job, job.load(), dataset, progress)

    def use(settings):
        fc, page = fake(settings=settings)
        monkeypatch.setattr(cluster, "_run_ray", runner)
        monkeypatch.setattr(SB, "settings", lambda: settings)
        return fc, page

    loaded = replace(load_model(str(tiny_model_dir("bert"))), max_length=12)
    return loaded, datasets.Dataset.from_dict({"text": SEARCH_TEXTS}), sent, use


def _same_index(a, b):
    import numpy as np

    assert a.meta == b.meta and a.tokens == b.tokens and a.texts == b.texts
    assert np.array_equal(a.layers, b.layers) and np.array_equal(a.heads, b.heads)


def test_the_search_pages_index_reaches_the_cluster_with_the_token_cap(search_page, tmp_path):
    """With DASHBOARD_RAY_ADDRESS the page's index build sends its vectors to the cluster, as
    ``search index --ray`` does (it was a closure the queue could only run here): the job
    carries the page's token cap to the workers, the folder is written here, and it holds the
    index built in this process."""
    from analysis.search import build_index
    from ui.search import blocks as SB

    loaded, ds, sent, use = search_page
    fc, page = use(Settings(ray_address=ADDRESS))
    index = SB.index_for(loaded, "text", ds)
    assert sent == [("Capped", "SearchJob", 12, 3, 3)]  # on the cluster's 3 workers
    assert fc.calls[0] == ("connect", ADDRESS)
    assert any(kind == "caption" and "Runs on the Ray cluster" in str(args)
               for kind, args, _ in page.sent)  # said under the bar
    here = build_index(loaded, ds, tmp_path / "here")
    _same_index(index, here)
    assert index.meta["model"]["max_length"] == 12
    assert "1 sentence(s) longer than the model's 12 tokens were cut." in index.meta["notes"]
    assert SB.index_for(loaded, "text", ds).folder == index.folder and len(sent) == 1  # cached


def test_without_the_address_the_search_index_is_built_here(search_page, tmp_path):
    from analysis.search import build_index
    from ui.search import blocks as SB

    loaded, ds, sent, use = search_page
    fc, _ = use(Settings())
    index = SB.index_for(loaded, "text", ds)
    assert sent == [] and fc.calls == []
    _same_index(index, build_index(loaded, ds, tmp_path / "here"))


def test_the_demos_shared_search_index_is_a_background_job_on_the_cluster(search_page):
    """Demo mode: the bundled corpus's index, built once for every visitor in the background,
    takes a cluster ticket and sends its vectors there too."""
    from ui.search import blocks as SB

    loaded, ds, sent, use = search_page
    use(Settings(demo=True, ray_address=ADDRESS))
    SB._BACKGROUND.clear()
    try:
        job = SB.index_for(loaded, "treebank", ds)
        assert not isinstance(job, SB.SearchIndex) and job.cluster
        assert job.done.wait(WAIT) and job.error is None, job.error
        assert sent == [("Capped", "SearchJob", 12, 3, 3)]
        assert SB.index_for(loaded, "treebank", ds).n == job.result.n
    finally:
        SB._BACKGROUND.clear()


def test_the_search_commands_placement_sends_the_same_job_on_its_workers(search_page, tmp_path):
    """``search index --ray ADDRESS --ray-workers 2``: the command runs INDEX with the
    placement of its options, which sends the same job on the 2 workers asked (the model
    uncapped: the command reads whole sentences) and writes the folder it names."""
    from analysis.core.execution.placements import RayCluster
    from analysis.core.models import load_model
    from analysis.search import build_index
    from analysis.search.study import INDEX, IndexInputs

    loaded, ds, sent, use = search_page
    use(Settings(ray_address=ADDRESS))
    full = load_model(loaded.spec)
    out = tmp_path / "ix"
    index = INDEX.run(IndexInputs(full.spec, ds, str(out)), models=full,
                      placement=RayCluster(ADDRESS, workers=2))
    assert sent == [("SearchJob", "SearchJob", None, 3, 2)]
    assert index.folder == out and (out / "meta.json").is_file()
    _same_index(index, build_index(full, ds, tmp_path / "here"))
