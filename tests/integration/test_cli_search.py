"""The search CLI on the embedded default model: index a .txt corpus (sentence numbers are its
line numbers) and the bundled treebank, query them, the same matches as the library and as
the Search page; bad input ends with one line on stderr and a non-zero exit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from analysis.search import SearchIndex, exact_search
from builders import run_cli

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
CORPUS = ["The cat sat on the mat.", "", "A dog barked at the postman.",
          "The waiter recommended the house wine.", "", "The cat slept on the sofa."]


def cli(*args):
    return run_cli("search", *args)


@pytest.fixture(scope="module")
def txt_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("search-cli")
    data = folder / "corpus.txt"
    data.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    out = folder / "ix"
    run = cli("index", "--model", "default", "--data", data, "--out", out)
    assert run.returncode == 0, run.stderr
    assert "4 sentences" in run.stdout and "searched exactly" in run.stdout
    return out


def test_query_numbers_are_line_numbers_and_brute_force(txt_index, tmp_path):
    out = tmp_path / "q.json"
    run = cli("query", "--index", txt_index, "--text", "The cat sat on the mat.", "--token", 2,
              "--layer", 3, "--k", 5, "--out", out)
    assert run.returncode == 0, run.stderr
    got = json.loads(out.read_text())
    assert got["piece"] == "cat" and got["layer"] == 3
    m = got["matches"]
    assert [x["score"] for x in m] == sorted((x["score"] for x in m), reverse=True)
    # the query's own piece (line 0) first, then the other cat (line 5, after two blank lines)
    assert (m[0]["sentence"], m[0]["position"], m[0]["token"]) == (0, 2, "cat")
    assert m[0]["score"] == pytest.approx(1.0, abs=2e-3)
    assert (m[1]["sentence"], m[1]["position"], m[1]["token"]) == (5, 2, "cat")
    assert {x["sentence"] for x in m} <= {0, 2, 3, 5}
    # the scores are the cosines of numpy brute force over the stored float16 vectors
    index = SearchIndex.open(txt_index)
    own = next(r for r in range(index.n) if index.numbers[index.sentence[r]] == 0
               and index.position[r] == 2)
    q = np.asarray(index.vectors(3)[own], np.float32)
    scores, rows = exact_search(np.asarray(index.vectors(3), np.float32), q[None], 5)
    np.testing.assert_allclose([x["score"] for x in m], scores[0], atol=1e-3)
    assert [index.numbers[index.sentence[r]] for r in rows[0]] == [x["sentence"] for x in m]


def test_bad_input_is_one_line_and_a_non_zero_exit(txt_index, tmp_path):
    out = tmp_path / "q.json"
    base = ["query", "--index", txt_index, "--text", "The cat", "--out", out]
    for extra, needle in [(["--token", 9, "--layer", 1], "token must be from 0 to 3"),
                          (["--token", 1, "--layer", 7], "layer must be from 0"),
                          (["--token", 1, "--layer", 1, "--k", 0], "--k must be"),
                          (["--token", "x", "--layer", 1], "--token must be a whole number"),
                          (["--token", 1, "--layer", 0, "--head", 2], "no heads")]:
        run = cli(*base, *extra)
        assert run.returncode != 0
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], run.stderr
        assert not out.exists()
    run = cli("query", "--index", tmp_path / "none", "--text", "a", "--token", 1, "--layer", 1,
              "--out", out)
    assert run.returncode != 0 and len(run.stderr.strip().splitlines()) == 1
    assert "does not exist" in run.stderr
    run = cli("index", "--data", tmp_path / "missing.txt", "--out", tmp_path / "ix")
    assert run.returncode != 0 and len(run.stderr.strip().splitlines()) == 1


def test_page_equals_cli_on_the_treebank(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    import ui.common.frame.models
    import ui.common.frame.sidebar
    from ui.server.settings import settings as host_settings
    from ui.common.frame.sidebar import EXAMPLE_A
    from ui.search import state as S

    ix = tmp_path / "tb"
    run = cli("index", "--data", "treebank", "--out", ix)
    assert run.returncode == 0, run.stderr
    out = tmp_path / "q.json"
    run = cli("query", "--index", ix, "--text", EXAMPLE_A, "--token", 1, "--layer", 4,
              "--k", 20, "--out", out)
    assert run.returncode == 0, run.stderr
    expected = json.loads(out.read_text())["matches"]

    monkeypatch.delenv("DASHBOARD_MODE", raising=False)
    monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(ui.common.frame.models, "example_ready", lambda: False)
    monkeypatch.setattr(ui.common.frame.sidebar, "leave_legacy_navigation", lambda: None,
                        raising=False)
    host_settings.cache_clear()
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({S.TOKEN: "1", S.LAYER: "4"})
    at.run()
    at.switch_page("pages/search.py")
    at.run()
    assert not at.exception and not at.error
    body = "".join(h.proto.body for h in at.get("html") if "sm-list" in h.proto.body)
    shown = re.findall(r"cosine (\d\.\d{3}) · sentence (\d+) · piece (\d+)", body)
    assert [(int(a), int(b)) for _, a, b in shown] == \
        [(m["sentence"], m["position"]) for m in expected]
    np.testing.assert_allclose([float(s) for s, _, _ in shown], [m["score"] for m in expected],
                               atol=6e-4)  # the page shows 3 decimals
    host_settings.cache_clear()
