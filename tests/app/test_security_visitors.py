"""Issue 24, items 1, 3, 4, 7 and 8 on the server side: the per-visitor job limit (by session
and by client address) and its words, each visitor's session models against a memory cap, the
upload cap derived from the listed models, one upload ceiling everywhere (config, deploy, the
checkpoint box) with every other box capped, and report values shown as plain text on the
Report page (no st.metric: its label and value render Markdown)."""

from __future__ import annotations

import gc
import json
import re
import tomllib
from pathlib import Path

import pytest

from analysis.core.errors import DataError, InputError
from analysis.core.models import ModelLoadError

ROOT = Path(__file__).resolve().parents[2]
MARKDOWN = "![m](http://127.0.0.1:9999/x.png) <http://evil.example/> **bold**"


@pytest.fixture
def demo(monkeypatch):
    from ui.server.settings import settings

    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    settings.cache_clear()
    yield settings()
    settings.cache_clear()


def test_one_visitor_holds_at_most_the_limit_of_jobs(demo):
    from ui.common.jobs import JobLimit, JobQueue, limit_words

    assert demo.max_jobs_per_visitor == 1
    assert "Each visitor may have 1 job(s) waiting or running at a time." in limit_words()
    q = JobQueue(slots=1)
    tab1 = ("session:a", "address:10.0.0.1")
    first = q.join("Fine-tuning", "k1", tab1, limit=1)
    assert q.wait_turn(first) is None  # running
    for other_tab in (tab1, ("session:b", "address:10.0.0.1")):  # same tab, another tab
        with pytest.raises(JobLimit, match="1 job\\(s\\) waiting or running; this server "
                                           "runs at most 1 per visitor") as e:
            q.join("Fine-tuning", "k2", other_tab, limit=1)
        assert isinstance(e.value, InputError) and isinstance(e.value, DataError)
    stranger = q.join("Corpus statistics", "k3", ("session:c", "address:10.0.0.2"), limit=1)
    assert q.wait_turn(stranger) == 1  # one job ahead: the first visitor's, not four
    q.leave(first)
    assert q.wait_turn(stranger) is None
    again = q.join("Fine-tuning", "k4", tab1, limit=1)  # the first job is over: allowed again
    assert q.state() == {"running": ["Corpus statistics"], "waiting": 1}
    q.leave(again)
    q.leave(stranger)


def test_a_fourth_tab_waits_behind_nobody_it_does_not_own(demo):
    """Four tabs of one address: only the first job is queued (the issue's 1 running + 3
    waiting ahead of everyone else is now 1 + refusals)."""
    from ui.common.jobs import JobLimit, JobQueue

    q = JobQueue(slots=1)
    held = [q.join("Fine-tuning", "t0", ("session:0", "address:1.2.3.4"), limit=1)]
    refused = 0
    for k in range(1, 4):
        try:
            held.append(q.join("Fine-tuning", f"t{k}", (f"session:{k}", "address:1.2.3.4"),
                               limit=1))
        except JobLimit:
            refused += 1
    assert refused == 3 and q.state()["waiting"] == 1


def test_visitor_models_count_their_peak_until_their_model_is_gone():
    """Each held model counts its weights; the visitor's peak adds the largest working memory
    among their models once (one input at a time), not once per model."""
    from analysis.core.sizes import ModelCost
    from ui.server.memory import VisitorModels

    class Model:  # anything that can be weakly referenced
        pass

    gb = 2**30
    reg, keys = VisitorModels(), ("session:a", "address:10.0.0.1")
    m1, m2 = Model(), Model()
    big = ModelCost(params=100, weights=1 * gb, working=gb // 2)
    small = ModelCost(params=10, weights=gb // 4, working=gb // 4)
    reg.admit(keys, big, cap=2 * gb)
    reg.add(keys, m1, big)
    assert reg.held("address:10.0.0.1") == 1.5 * gb
    reg.admit(keys, small, cap=2 * gb)  # 1 + 0.25 + max(0.5, 0.25) = 1.75 GB
    reg.add(keys, m2, small)
    assert reg.held("session:a") == 1.75 * gb
    with pytest.raises(ModelLoadError, match=re.escape(
            "Your session's models would need about 2.25 GB of memory with this one (0.50 GB "
            "of weights, 0.25 GB more while a page works on it); this server allows 2.00 GB "
            "per visitor.")) as e:  # another tab, same address
        reg.admit(("session:b", "address:10.0.0.1"), ModelCost(5, gb // 2, gb // 4), cap=2 * gb)
    assert "\n" not in str(e.value)
    reg.admit(("session:c", "address:10.0.0.9"), big, cap=2 * gb)  # someone else
    with pytest.raises(ModelLoadError, match=re.escape(
            "already hold 0.0M parameters; with this one (0.0M)")):
        reg.admit(keys, ModelCost(1, 0, 0), cap=10 * gb, max_params=110)  # the host's cap
    del m1
    gc.collect()
    assert reg.held("address:10.0.0.1") == 0.5 * gb  # the small model alone: 0.25 + 0.25
    del m2
    gc.collect()
    assert reg.held("address:10.0.0.1") == 0
    reg.admit(keys, ModelCost(1, 2 * gb, 0), cap=2 * gb)


def test_demo_visitor_cap_is_twice_an_upload_at_the_cap(demo):
    """The default per-visitor memory: twice the weights of an upload at the parameter cap plus
    the largest listed model's working memory at the demo's 256 tokens; a fine-tuned copy of
    the embedded model costs its weights and its working memory at 256 tokens."""
    from analysis.core.models import default_model_path, load_model
    from analysis.core.sizes import working_bytes
    from ui.server.memory import (_default_upload_params, _default_visitor_bytes,
                                           model_cost, upload_param_cap, visitor_memory_cap)

    _default_upload_params.clear()
    _default_visitor_bytes.clear()
    config = json.loads((Path(default_model_path()) / "config.json").read_text())
    working = working_bytes(config, 256)
    # hand-computed: 6 layers x 12 heads x 256^2 x 4 bytes x 4 copies + 6 x 256 x (384 +
    # 1536) x 4 bytes
    assert working == 4 * 6 * 12 * 256 * 256 * 4 + 6 * 256 * (384 + 1536) * 4 == 87_293_952
    cap = visitor_memory_cap()
    assert cap == 2 * (4 * upload_param_cap() + working)
    loaded = load_model("default")
    cost = model_cost(loaded)
    assert (cost.params, cost.weights, cost.working) == (
        loaded.n_params, 4 * loaded.n_params, working)
    assert 3 * cost.weights + cost.working < cap < 6 * cost.weights + cost.working
    _default_upload_params.clear()
    _default_visitor_bytes.clear()


def test_the_hosts_memory_cap_is_in_mib(monkeypatch, tmp_path):
    from ui.server.memory import visitor_memory_cap
    from ui.server.settings import SettingsError, load_settings, settings

    (tmp_path / "s.toml").write_text("max_visitor_mb = 1536\n")
    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    monkeypatch.setenv("DASHBOARD_SETTINGS", str(tmp_path / "s.toml"))
    settings.cache_clear()
    try:
        assert visitor_memory_cap() == 1536 * 2**20
        (tmp_path / "s.toml").write_text("max_visitor_mb = 0\n")
        with pytest.raises(SettingsError, match="max_visitor_mb must be above 0"):
            load_settings()
    finally:
        settings.cache_clear()


def test_upload_cap_is_twice_the_largest_listed_model(demo):
    from analysis.core.sizes import config_params
    from analysis.core.models import default_model_path
    from ui.server.memory import _default_upload_params, upload_param_cap

    _default_upload_params.clear()
    one = config_params(json.loads((Path(default_model_path()) / "config.json").read_text()))
    assert 22_000_000 < one < 24_000_000
    cap = upload_param_cap()
    assert 2 * one <= cap <= 2 * one * 1.01  # the example (same encoder + a head) if built
    _default_upload_params.clear()


def test_one_upload_ceiling_everywhere(demo, monkeypatch):
    import sys

    from ui.aspects.models import MAX_ZIP_MB
    from ui.server.settings import SERVER_UPLOAD_MB

    conf = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert conf["server"]["maxUploadSize"] == SERVER_UPLOAD_MB == MAX_ZIP_MB
    sys.path.insert(0, str(ROOT / "deploy"))
    import check

    assert check.upload_cap_mb() == SERVER_UPLOAD_MB  # the Docker image starts with it
    cmd = check.streamlit_command("python", 8501, upload_mb=check.upload_cap_mb())
    assert f"--server.maxUploadSize={SERVER_UPLOAD_MB}" in cmd
    docker = (ROOT / "Dockerfile").read_text()
    assert "maxUploadSize=2" not in docker and "deploy/check.py\", \"start\"" in docker
    readme = (ROOT / "deploy" / "README.md").read_text()
    assert f"maxUploadSize={SERVER_UPLOAD_MB}" in readme and "maxUploadSize=2 " not in readme
    # every upload box names its cap (the browser says in words when a file is too large)
    for path in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/**/*.py")]:
        text = path.read_text()
        for call in re.findall(r"file_uploader\((.*?)\)\n", text, re.S):
            assert "max_upload_size" in call, path


def test_every_upload_reader_checks_its_own_cap(demo, monkeypatch):
    from ui.aspects.blocks import read_uploads

    big = json.dumps({"sentences": [{"text": "x" * 100, "categories": []}] * 30_000}).encode()
    assert len(big) > demo.max_upload_bytes
    with pytest.raises(DataError, match="refused"):
        read_uploads("big.json", big, False, None, None)


def test_report_numbers_are_plain_text_on_the_report_page(monkeypatch):
    from streamlit.testing.v1 import AppTest

    from analysis.report import Finding, Report

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    at.switch_page("pages/report.py")
    at.run()
    at.session_state["_report"] = Report(findings=[Finding(
        title="t", kind="view", numbers={MARKDOWN: MARKDOWN}, reading=[MARKDOWN])])
    at.run()
    assert not at.exception, at.exception
    assert not at.get("metric")  # st.metric renders Markdown in its label and value
    frames = [d.value for d in at.dataframe]
    assert any(list(df["value"]) == [MARKDOWN] and list(df["number"]) == [MARKDOWN]
               for df in frames)
    shown = " ".join(m.value for m in at.markdown)
    assert "![m](http" not in shown and " <http" not in shown  # the reading line: escaped
    assert "!\\[m\\](http\\:\u2060//" in shown


def test_one_session_holds_a_bounded_amount_of_uploaded_bytes():
    """Item 3: files PUT straight to the upload endpoint stay in memory until the session
    ends; now a session's oldest files make way beyond its cap."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    from ui.server.uploads import cap_uploads

    mgr = MemoryUploadedFileManager("/_stcore/upload_file")
    assert cap_uploads(mgr, 10 * 2**20) and not cap_uploads(mgr, 1)  # once
    for k in range(12):  # twelve 4 MB files from one session (the issue: twelve 40 MB)
        mgr.add_file("s1", UploadedFileRec(f"f{k}", f"f{k}.json", "application/json",
                                           b"x" * (4 << 20)))
    mgr.add_file("s2", UploadedFileRec("g", "g.json", "application/json", b"y" * (4 << 20)))
    assert list(mgr.file_storage["s1"]) == ["f10", "f11"]  # the newest two: 8 MB
    assert sum(len(f.data) for f in mgr.file_storage["s1"].values()) <= 10 * 2**20
    assert list(mgr.file_storage["s2"]) == ["g"]  # another session is untouched
    mgr.add_file("s1", UploadedFileRec("f11", "f11.json", "application/json", b"z"))
    assert list(mgr.file_storage["s1"]) == ["f10", "f11"]  # replacing a file evicts nothing


def test_all_sessions_together_hold_a_bounded_amount_of_uploaded_bytes():
    """Issue 34 item 6: the cap was per session only; many sessions (tabs, visitors) added up
    without bound. Now a file beyond the server-wide cap is refused with HTTP 413, and nobody's
    files are dropped for it."""
    from starlette.exceptions import HTTPException
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    from ui.server.uploads import UPLOAD_BUSY, cap_uploads

    mgr = MemoryUploadedFileManager("/_stcore/upload_file")
    assert cap_uploads(mgr, 10 * 2**20, 20 * 2**20)
    four = b"x" * (4 << 20)
    for s in ("s1", "s2", "s3", "s4"):  # 16 MB in four sessions
        mgr.add_file(s, UploadedFileRec("a", "a.json", "application/json", four))
    with pytest.raises(HTTPException) as e:  # 20 MB + 4: over the server's 20 MB
        for s in ("s5", "s6"):
            mgr.add_file(s, UploadedFileRec("a", "a.json", "application/json", four))
    assert e.value.status_code == 413 and e.value.detail == UPLOAD_BUSY
    assert sorted(mgr.file_storage) == ["s1", "s2", "s3", "s4", "s5"]
    assert sum(len(f.data) for fs in mgr.file_storage.values() for f in fs.values()) == 20 << 20
    with pytest.raises(HTTPException):  # a held session's second file: refused, its first kept
        mgr.add_file("s1", UploadedFileRec("b", "b.json", "application/json", b"y"))
    assert list(mgr.file_storage["s1"]) == ["a"]
    mgr.remove_session_files("s2")  # a session ends: room again
    mgr.add_file("s6", UploadedFileRec("a", "a.json", "application/json", four))
    assert sorted(mgr.file_storage) == ["s1", "s3", "s4", "s5", "s6"]


def test_run_job_says_the_limit_and_stops_the_page(demo):
    """A visitor over the limit gets the limit in words and the page stops (nothing queued,
    no exception), on any page whatever errors it catches."""
    from streamlit.testing.v1 import AppTest

    def script():
        import streamlit as st

        from ui.common.jobs import job_queue, run_job
        from ui.server.visitors import visitor_keys

        if not st.session_state.get("joined"):  # this visitor's job in another tab
            st.session_state["joined"] = job_queue().join("Other tab", "x", visitor_keys())
        st.write("result", run_job("Corpus statistics", lambda progress: 42, key="y"))

    at = AppTest.from_function(script, default_timeout=60).run()
    assert not at.exception, at.exception
    (warning,) = at.warning
    assert "this server runs at most 1 per visitor" in warning.value.replace("\\", "")
    assert not any("result" in m.value for m in at.markdown)
    from ui.common.jobs import job_queue
    job_queue().leave(at.session_state["joined"])


def test_forwarded_mode_counts_the_address_the_proxy_appended(monkeypatch):
    """Issue 34 item 6: the first X-Forwarded-For entry is whatever the client sent (a new one
    per request escapes the per-address caps); the trusted proxy appends the real one last."""
    import types

    import streamlit as st

    from ui.server import visitors as jobs
    from ui.server.settings import settings

    assert jobs.forwarded_address(["1.2.3.4, 10.0.0.1", "203.0.113.7"]) == "203.0.113.7"
    assert jobs.forwarded_address(["spoofed, 198.51.100.2"]) == "198.51.100.2"
    assert jobs.forwarded_address([]) == ""

    class Headers(dict):
        def get_all(self, key):
            return self.get(key, [])

    import dataclasses

    conf = dataclasses.replace(settings(), visitor_address="forwarded")
    monkeypatch.setattr(jobs, "settings", lambda: conf)
    for sent in ("1.1.1.1", "2.2.2.2"):  # the same visitor, a new made-up first entry each time
        fake = types.SimpleNamespace(headers=Headers({"X-Forwarded-For": [
            f"{sent}, 198.51.100.2"]}), ip_address="10.0.0.9")
        monkeypatch.setattr(st, "context", fake)
        assert jobs.visitor_keys()[-1] == "address:198.51.100.2"


def test_one_visitors_tabs_together_hold_one_sessions_share_of_uploads():
    """Issue 34 item 6: the cap was per session; one visitor's eight tabs held eight shares
    (8 x 57 MB, in a straight line). Now the sessions a visitor's pages ran under (their address
    where the host tells visitors apart) share one cap: a file beyond it is refused with HTTP
    413 and the visitor's own words; other visitors are untouched."""
    from starlette.exceptions import HTTPException
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    from ui.server.uploads import UPLOAD_VISITOR_BUSY, cap_uploads

    visitors = {"t1": "address:10.0.0.1", "t2": "address:10.0.0.1", "t3": "address:10.0.0.1",
                "u1": "address:10.0.0.2"}
    mgr = MemoryUploadedFileManager("/_stcore/upload_file")
    assert cap_uploads(mgr, 10 * 2**20, 100 * 2**20, visitors.get)
    four = b"x" * (4 << 20)
    mgr.add_file("t1", UploadedFileRec("a", "a.json", "application/json", four))
    mgr.add_file("t2", UploadedFileRec("a", "a.json", "application/json", four))
    with pytest.raises(HTTPException) as e:  # 8 MB in two tabs + 4: over one share of 10 MB
        mgr.add_file("t3", UploadedFileRec("a", "a.json", "application/json", four))
    assert e.value.status_code == 413 and e.value.detail == UPLOAD_VISITOR_BUSY
    assert sorted(mgr.file_storage) == ["t1", "t2"]
    mgr.add_file("t3", UploadedFileRec("b", "b.json", "application/json", b"y" * (2 << 20)))
    mgr.add_file("u1", UploadedFileRec("a", "a.json", "application/json", four))  # another
    mgr.add_file("s9", UploadedFileRec("a", "a.json", "application/json", four))  # unknown
    mgr.add_file("t1", UploadedFileRec("c", "c.json", "application/json", b"z"))  # evicts a
    assert list(mgr.file_storage["t1"]) == ["c"]  # its own oldest made way, as in one tab
    held = sum(len(f.data) for sid in ("t1", "t2", "t3") for f in mgr.file_storage[sid].values())
    assert held <= 10 * 2**20
    mgr.remove_session_files("t2")  # a tab closes: room for the visitor again
    mgr.add_file("t3", UploadedFileRec("d", "d.json", "application/json", four))
    assert "d" in mgr.file_storage["t3"]


def test_a_session_is_noted_under_its_visitors_address(monkeypatch):
    """The page run tells the upload cap whose session it is (the upload handler is told the
    session only)."""
    import ui.server.uploads as resources

    monkeypatch.setattr(resources, "_SESSION_VISITOR", {})
    monkeypatch.setattr(resources, "visitor_keys",
                        lambda: ("session:abc", "address:203.0.113.9"))
    resources.note_visitor()
    assert resources._SESSION_VISITOR == {"abc": "address:203.0.113.9"}
    monkeypatch.setattr(resources, "visitor_keys", lambda: ("session:def",))  # local: no address
    resources.note_visitor()
    assert "def" not in resources._SESSION_VISITOR
