"""analysis.core.execution.work and .placements on a hand-made corpus job (no model): one
description of the work runs the same in this process, mapped over shards, and (with a
stand-in for the Ray runner) on the cluster, with the token cap applied the same way; the page
hands a placement exactly one description; the placement is chosen once per setting."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import pytest

from analysis.core.execution import cluster
from analysis.core.execution.corpus import run_sharded
from analysis.core.execution.placements import Away, InProcess, RayCluster, placement
from analysis.core.execution.queue import JobQueue
from analysis.core.execution.work import Apart, Capped, Corpus, Study, capped, describe

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["abcdef", "ab", "abcdefghij", "", "xyz"]  # 6 + 2 + 10 + 0 + 3 characters


@dataclass
class Model:
    weight: int
    max_length: int = 100
    spec: str = "hand-made"


@dataclass
class Total:
    characters: int
    rows: list
    seconds: float = 0.0


@dataclass
class LengthJob:
    """Characters per text, each text cut at the model's ``max_length``, times its weight."""

    weight: int = 2
    spec: str = "hand-made"
    loads: list = field(default_factory=list)

    def load(self):
        self.loads.append(1)
        return Model(self.weight)

    def map(self, model, shard, rows, progress=None):
        rows = list(rows)
        texts = list(shard["text"]) if rows else []
        if progress is not None:
            progress(len(rows), len(rows))
        return sum(min(len(t), model.max_length) * model.weight for t in texts), rows

    def merge(self, partials):
        return Total(sum(p[0] for p in partials), sorted(r for p in partials for r in p[1]))


@pytest.fixture(scope="module")
def corpus():
    return datasets.Dataset.from_dict({"text": TEXTS})


def test_a_corpus_job_mapped_over_shards_equals_the_single_run(corpus):
    job = LengthJob()
    bars = []
    whole = Corpus(job, corpus, models=Model(2), start="Counting...",
                   done=lambda r: f"{r.characters} characters").run_here(
        lambda f, t: bars.append((f, t)))
    assert (whole.characters, whole.rows) == (2 * 21, [0, 1, 2, 3, 4])
    assert whole.seconds > 0 and job.loads == []  # the page's loaded model, timed
    assert bars[0] == (0.0, "Counting...") and bars[-1] == (1.0, "42 characters")
    assert bars[1][0] == 1.0 and bars[1][1].startswith("5 / 5 examples, ")
    for bounds in ([0, 5], [0, 2, 5], [0, 0, 3, 3, 5]):  # empty shards included
        sharded = run_sharded(job, Model(2), corpus, bounds)
        assert (sharded.characters, sharded.rows) == (whole.characters, whole.rows)


def test_the_token_cap_is_applied_the_same_here_and_on_a_worker(corpus):
    job = LengthJob()
    here = Corpus(job, corpus, models=Model(2), max_length=4).run_here(lambda f, t: None)
    assert here.characters == 2 * (4 + 2 + 4 + 0 + 3)
    worker = Capped(job, 4)  # what a Ray worker loads and maps
    there = run_sharded(worker, worker.load(), corpus, [0, 2, 5])
    assert there.characters == here.characters
    assert capped(job, Model(2), None) == Model(2)  # no cap: as they are

    class PairJob(LengthJob):  # a job of two models says how it is capped
        def capped(self, models, max_length):
            return (Model(models[0].weight, max_length), models[1])

    assert capped(PairJob(), (Model(1), Model(3)), 7) == (Model(1, 7), Model(3))


def test_in_process_runs_every_kind_of_description(corpus):
    here = InProcess()
    assert here.address is None and not here.cluster(Corpus(LengthJob(), corpus))
    assert here.run(lambda progress: 41 + 1, lambda f, t: None) == 42
    assert here.run(Corpus(LengthJob(3), corpus), lambda f, t: None).characters == 3 * 21
    study = Study(lambda progress, run: run(LengthJob(), Model(1), corpus, None).characters,
                  "hand-made")
    assert here.run(study, lambda f, t: None) == 21
    away = here.run(Apart(lambda progress, away: away), lambda f, t: None)
    assert away == Away() and away.here  # a child process of its own, on this machine


def test_what_a_caller_hands_becomes_one_description(corpus):
    def fn(progress):
        return "here"

    one = Corpus(LengthJob(), corpus, here=fn)
    assert describe(one) is one and one.run_here(None) == "here"
    assert describe(fn) is fn
    bare = describe(LengthJob(), corpus, max_length=4)
    assert isinstance(bare, Corpus) and bare.max_length == 4 and bare.dataset is corpus


def test_the_placement_is_chosen_once_per_setting():
    assert placement(None) == InProcess() and placement(None) is placement(None)
    assert placement("127.0.0.1:6379") is placement("127.0.0.1:6379")
    assert placement("127.0.0.1:6379") == RayCluster("127.0.0.1:6379")


def test_the_cli_placement_maps_one_corpus_job_here_or_on_the_cluster(monkeypatch, corpus):
    """The CLI's ``--ray`` / ``--ray-workers`` choose the placement once; each corpus job goes
    through ``map_merge``: in this process with the given models (or the study's own ``here``
    run), on the cluster through run_ray with the address and the workers."""
    from analysis.cli.scale import placed, run_job
    from analysis.core.execution import raydata

    class Args:
        ray, ray_workers = None, None

    counts = []
    assert placed(Args()) == InProcess() and placed(Args()) is placement(None, None)
    out = run_job(LengthJob(), Model(3), corpus, Args(), lambda d, t: counts.append((d, t)))
    assert out.characters == 3 * 21 and counts[-1] == (5, 5)  # the given model, weight 3
    assert run_job(LengthJob(), Model(3), corpus, Args(), here=lambda: "its own") == "its own"

    sent = []
    monkeypatch.setattr(raydata, "run_ray", lambda job, dataset, address, **kw: sent.append(
        (address, kw["workers"])) or run_sharded(job, job.load(), dataset, [0, 2, 5]))
    Args.ray, Args.ray_workers = "127.0.0.1:6379", 2
    assert placed(Args()) is placement("127.0.0.1:6379", 2) == RayCluster("127.0.0.1:6379", 2)
    out = run_job(LengthJob(), Model(3), corpus, Args(), here=lambda: "not used")
    assert out.characters == 2 * 21 and sent == [("127.0.0.1:6379", 2)]  # the job's own load


class _FakeRay:
    def __init__(self, fail=None):
        self.sent, self.fail = [], fail

    def connect(self, address):
        return 3

    def run(self, job, dataset, progress=None, **kw):
        self.sent.append((job, len(dataset), kw))
        if self.fail is not None:
            raise self.fail
        out = run_sharded(job, job.load(), dataset, [0, 2, len(dataset)])
        progress(len(dataset), len(dataset))
        return out


def test_the_ray_placement_sends_the_capped_job_and_falls_back_here(monkeypatch, corpus):
    from analysis.core.models import ModelLoadError

    fake = _FakeRay()
    monkeypatch.setattr(cluster, "connect", fake.connect)
    monkeypatch.setattr(cluster, "_run_ray", fake.run)
    monkeypatch.setattr(cluster, "_UNLOADABLE", set())
    ray = RayCluster("127.0.0.1:6379")
    work = Corpus(LengthJob(), corpus, models=Model(2), max_length=4, here_if_unloadable=True)
    assert ray.cluster(work) and not ray.cluster(lambda progress: 1)
    bars, workers = [], []
    out = ray.run(work, lambda f, t: bars.append(t), workers.append)
    assert out.characters == 2 * 13  # the in-process number
    (job, n, kw), = fake.sent
    assert isinstance(job, Capped) and job.max_length == 4 and n == 5
    assert (kw["workers"], kw["min_workers"], workers) == (3, 1, [3])
    assert bars[:2] == ["Connecting to the Ray cluster for 5 examples...",
                        "Sending 5 examples to the cluster (3 worker(s))..."]
    assert bars[-1].startswith("5 / 5 examples on the cluster, ")

    fake.fail = ModelLoadError("Cannot load /srv/gone.")
    again = ray.run(work, lambda f, t: bars.append(t))
    assert again.characters == out.characters and len(fake.sent) == 2  # tried, then here
    assert bars[-1].startswith("5 / 5 examples, ")  # in-process words, and where it ran
    assert bars[-1].endswith(f" ({cluster.HERE_BAR})")
    assert ray.refuses(work) and not ray.cluster(work)  # the next one is placed here
    assert ray.run(work, lambda f, t: None).characters == out.characters
    assert len(fake.sent) == 2


def test_run_job_hands_the_placement_exactly_one_description(monkeypatch, corpus):
    """The page's side: one description in, the placement's result out, the bar drawn."""
    from ui.common import jobs

    received = []

    class Fake:
        address = None

        def cluster(self, work):
            return False

        def run(self, work, progress, on_workers=None):
            received.append(work)
            progress(0.5, "half")
            return "result"

    class Page:
        def __getattr__(self, name):
            return lambda *a, **kw: self

    monkeypatch.setattr(jobs, "placement", lambda address: Fake())
    monkeypatch.setattr(jobs, "st", Page())
    job = LengthJob()
    out = jobs.run_job("Counting", job, corpus, models=Model(2), key="k", queue=JobQueue(),
                       unit="sentences")
    assert out == "result"
    (work,) = received
    assert isinstance(work, Corpus) and work.job is job and work.dataset is corpus
    assert work.unit == "sentences"  # the ticket's unit names the rows in the bar too
    assert work.models == Model(2) and job.loads == []


def test_the_in_process_path_imports_nothing_from_ray():
    script = ("import sys, datasets\n"
              "from analysis.core.execution.placements import placement\n"
              "from analysis.core.execution.work import Corpus\n"
              "from tests.unit.test_execution_placements import LengthJob, Model\n"
              "ds = datasets.Dataset.from_dict({'text': ['ab', 'c']})\n"
              "print(placement(None).run(Corpus(LengthJob(), ds, models=Model(1)),\n"
              "                          lambda f, t: None).characters, 'ray' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["3", "False"]
