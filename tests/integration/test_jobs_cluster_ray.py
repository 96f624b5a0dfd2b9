"""The No-op page's corpus job on a real local Ray cluster (2 CPUs on 127.0.0.1, started and shut
down by the test) through the app's job queue with DASHBOARD_RAY_ADDRESS=auto: the page shows
the in-process numbers, and the job really went to the cluster; a worker killed mid-job gives the
visitor the page's message and frees the queue slot."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import builders

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -r "
                          "requirements-ray.txt to run the app-on-a-cluster test")

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
CAP = 6


@pytest.fixture(scope="module")
def cluster_env():
    from ui.server.settings import settings

    with builders.local_ray_cluster(), pytest.MonkeyPatch.context() as mp:
        mp.setenv("DASHBOARD_RAY_ADDRESS", "auto")
        settings.cache_clear()
        try:
            yield
        finally:
            mp.delenv("DASHBOARD_RAY_ADDRESS")
            settings.cache_clear()


def test_noop_page_on_the_cluster_shows_the_in_process_numbers(cluster_env, monkeypatch,
                                                                default_model):
    import streamlit as st
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
    from streamlit.testing.v1 import AppTest

    from analysis.core.corpus import sample_corpus
    from analysis.noop import corpus_stats
    from analysis.core.execution import cluster

    sent = []
    real = cluster._run_ray

    def spy(job, dataset, **kw):
        sent.append((job, len(dataset), kw["workers"]))
        return real(job, dataset, **kw)

    monkeypatch.setattr(cluster, "_run_ray", spy)
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.session_state["noop_max"] = CAP
    at.switch_page("pages/noop.py")
    at.run()
    assert not at.exception, at.exception
    assert len(sent) == 1 and sent[0][1:] == (CAP, 2)  # the corpus went to both workers
    assert type(sent[0][0]).__name__ == "Capped"  # with the page's token limit

    ref = corpus_stats(default_model, sample_corpus(max_examples=CAP), norms=True)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Examples"] == str(CAP) and metrics["Tokens"] == f"{ref.n_tokens:,}"
    for c in at.get("vega_lite_chart"):
        if "points: heads" in c.proto.spec:
            raws = [d.data.data for d in c.proto.datasets] or [c.proto.data.data]
            fig2 = max((convert_arrow_bytes_to_pandas_df(r) for r in raws), key=len)
            break
    else:
        raise AssertionError("no per-layer chart on the page")
    assert len(fig2) == 3 * 6 * 12
    names = sorted(set(fig2["statistic"]))
    assert len(names) == 3 and "sep" in names
    for name in names:
        rows = fig2[fig2["statistic"] == name].sort_values(["layer", "head"])
        np.testing.assert_allclose(rows["value"].to_numpy(),
                                   ref.metrics[name].reshape(-1), atol=1e-6, rtol=0)


def test_a_worker_killed_mid_job_is_said_and_frees_the_slot(cluster_env, tiny_model_dir):
    import datasets

    from analysis.core.execution.raydata import WorkerLost
    from analysis.core.execution.cluster import LOST
    from analysis.core.execution.work import Corpus
    from ui.common.jobs import JobQueue, run_job

    ds = datasets.Dataset.from_dict({"text": [f"Sentence number {i}." for i in range(8)]})
    q = JobQueue(slots=1)

    def here(progress):
        raise AssertionError("ran in process")

    with pytest.raises(WorkerLost) as err:
        run_job("Corpus statistics",
                Corpus(builders.CrashingNoopJob(str(tiny_model_dir("bert"))), ds, here=here),
                key="crash", queue=q)
    assert str(err.value) == LOST
    assert q.state() == {"running": [], "waiting": 0}
    assert run_job("next", lambda p: 42, key="next", queue=q) == 42
