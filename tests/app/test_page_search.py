"""AppTest of the Search page: before any click it shows a query for a token of the sidebar's
default sentence over the bundled treebank sample (the library's matches, scores and reading,
the label histogram against the corpus rates, links to the Attention page); the URL presets
the token, layer and head (the Attention page's "find similar"); a bad URL value falls back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.core.encoding import encode
from analysis.search import build_index, own_row, query, reading
from analysis.search.reading import label_rows, others
from analysis.syntax.treebank import sample_treebank
from ui.common.errors import plain
from ui.server.settings import settings as host_settings
from ui.common.frame.sidebar import EXAMPLE_A
from ui.search import state as S

from apptest_util import APP, chart_frames, local_app, open_app_page

@pytest.fixture(autouse=True)
def _local(monkeypatch, tmp_path_factory):
    local_app(monkeypatch, tmp_path_factory.getbasetemp() / "search-cache")
    yield
    host_settings.cache_clear()


def open_page(**params) -> AppTest:
    return open_app_page("search", **params)


def reading_md(at) -> str:
    return next(m.value for m in at.markdown if "pieces of the corpus nearest to" in m.value)


def page_html(at) -> str:
    return "".join(h.proto.body for h in at.get("html") if "sm-list" in h.proto.body)


def test_default_view_is_the_librarys_query_over_the_treebank(default_model, tmp_path):
    at = open_page()
    assert not at.error
    index = build_index(default_model, sample_treebank(), tmp_path / "ix")
    token = next(i for i, s in enumerate(encode(default_model.tokenizer, EXAMPLE_A).special)
                 if not s)
    q, matches = query(default_model, index, EXAMPLE_A, token, S.DEFAULT_LAYER, S.DEFAULT_K)
    lines = reading(index, q.piece, matches, S.DEFAULT_LAYER, None,
                    own_row(index, EXAMPLE_A, token))
    assert reading_md(at) == "\n".join(f"- {plain(line)}" for line in lines)
    body = page_html(at)
    scores = [float(s) for s in re.findall(r"cosine (\d\.\d{3})", body)]
    assert scores == [round(m.score, 3) for m in matches]
    assert body.count("<mark>") == len(matches)
    # every match opens the Attention page on its sentence with its piece pinned
    hrefs = re.findall(r"href='([^']+)'", body)
    assert len(hrefs) == len(matches)
    assert hrefs[0].startswith("./attention?") and f"pin={matches[0].position + 1}" in hrefs[0]
    # the histogram: the labels' shares among the matches against the corpus rates
    frame = next(f for f in chart_frames(at) if "share (%)" in f.columns)
    rows = label_rows(index, others(matches, None), "upos")[:12]
    got = frame[frame["among"] == "matches"].set_index("label")["share (%)"]
    for r in rows:
        assert got[r["label"]] == pytest.approx(r["matches (%)"])
    chance = frame[frame["among"] == "corpus (chance)"].set_index("label")["share (%)"]
    assert chance["NOUN"] == pytest.approx(100 * index.label_rates()["upos"]["NOUN"])


def test_url_presets_token_layer_and_head(default_model, tmp_path):
    text = "The waiter recommended the house wine ."
    at = open_page(a=text, **{S.TOKEN: "2", S.LAYER: "4", S.HEAD: "3"})
    assert not at.error
    index = build_index(default_model, sample_treebank(), tmp_path / "ix")
    q, matches = query(default_model, index, text, 2, 4, S.DEFAULT_K, head=2)
    assert q.piece == "waiter"
    body = page_html(at)
    assert [float(s) for s in re.findall(r"cosine (\d\.\d{3})", body)] == \
        [round(m.score, 3) for m in matches]
    # the sentence is in the treebank: its own piece comes first, marked as the query
    assert "(the query itself)" in body.split("</li>")[0]
    lines = reading(index, q.piece, matches, 4, 2, own_row(index, text, 2))
    assert reading_md(at) == "\n".join(f"- {plain(line)}" for line in lines)
    assert "head 3's context vectors" in lines[0]
    assert any("share the word's part of speech (NOUN)" in line for line in lines)


def test_bad_url_values_fall_back_to_the_defaults():
    at = open_page(**{S.LAYER: "99", S.TOKEN: "-4", S.K: "7"})
    assert not at.error
    assert reading_md(at).startswith(f"- At layer {S.DEFAULT_LAYER},")
    assert len(re.findall(r"cosine \d", page_html(at))) == S.DEFAULT_K


def test_attention_page_links_to_search_with_token_and_layer():
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"a": "The waiter recommended the house wine .", "view": "Heatmap",
                            "layer": "3", "pin": "3"})
    at.switch_page("pages/attention.py")  # not the app's first page (the Head atlas)
    at.run()
    assert not at.exception, at.exception
    link = next(e for e in at.get("page_link") if "Find similar" in e.proto.label)
    assert "«waiter» at layer 3" in link.proto.label
    assert link.proto.page.endswith("search")
    params = dict(p.split("=", 1) for p in link.proto.query_string.split("&"))
    assert params[S.TOKEN] == "2" and params[S.LAYER] == "3"
    assert params["a"].startswith("The+waiter")


def test_demo_mode_builds_the_bundled_index_once_per_server(monkeypatch, tmp_path):
    import ui.server.settings
    from ui.search.blocks import _BACKGROUND

    conf = tmp_path / "s.toml"
    conf.write_text("max_examples = 50\n")
    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    monkeypatch.setenv("DASHBOARD_SETTINGS", str(conf))
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "demo-cache"))
    ui.server.settings.settings.cache_clear()
    _BACKGROUND.clear()
    try:
        first = open_page()
        # the first visit starts the server's background build and shows its progress
        assert not first.error and not page_html(first)
        assert len(_BACKGROUND) == 1
        job = next(iter(_BACKGROUND.values()))
        assert job.done.wait(300) and job.error is None
        first.run()
        assert not first.exception and len(re.findall(r"cosine \d", page_html(first))) == 20
        # a second visitor finds the same index: no second job, results at once
        second = open_page(**{S.LAYER: "1"})
        assert len(_BACKGROUND) == 1 and not second.error
        assert reading_md(second).startswith("- At layer 1,")
    finally:
        _BACKGROUND.clear()
        ui.server.settings.settings.cache_clear()


TXT = b"The cat sat on the mat.\n\nA dog barked at the postman.\n\n\nThe cat slept on the sofa.\n"


def test_an_uploaded_txt_file_is_numbered_by_its_lines_as_the_cli_numbers_it(default_model,
                                                                             tmp_path):
    from analysis.cli.search import read_data
    from analysis.search.corpus import with_lines

    text = "The cat sat on the mat."
    at = open_page(a=text, **{S.CORPUS: "text", S.TEXT_CORPUS.source: "Upload",
                              S.TOKEN: "2", S.LAYER: "3"})
    uploader = at.file_uploader(key=S.TEXT_CORPUS.upload)
    assert ".conllu" in uploader.proto.type and "CoNLL-U treebank" in uploader.label
    uploader.set_value(("c.txt", TXT, "text/plain")).run()
    assert not at.exception and not at.error
    path = tmp_path / "c.txt"
    path.write_bytes(TXT)
    dataset, lines = read_data(str(path))  # what `python -m analysis search index` reads
    assert lines == [0, 2, 5]
    index = build_index(default_model, with_lines(dataset, lines), tmp_path / "ix")
    q, matches = query(default_model, index, text, 2, 3, S.DEFAULT_K)
    shown = re.findall(r"sentence (\d+) · piece (\d+)", page_html(at))
    assert [(int(s), int(p)) for s, p in shown] == \
        [(index.numbers[index.sentence[m.row]], int(index.position[m.row])) for m in matches]
    # the other cat is on line 5 of the file (the page once said sentence 2, its row)
    assert ("5", "2") in shown and {int(s) for s, _ in shown} <= {0, 2, 5}


def test_an_uploaded_conllu_file_is_searched_as_a_treebank(default_model, tmp_path):
    data = (Path(__file__).resolve().parents[2] / "data" / "treebank" /
            "sample.conllu").read_bytes()
    text = "The soup was cold , but the bread was fresh ."  # the file's first sentence
    at = open_page(a=text, **{S.CORPUS: "text", S.TEXT_CORPUS.source: "Upload",
                              S.TOKEN: "2", S.LAYER: "3"})
    at.file_uploader(key=S.TEXT_CORPUS.upload).set_value(
        ("mine.conllu", data, "text/plain")).run()
    assert not at.exception and not at.error
    # labelled by the treebank's parts of speech, as the bundled treebank sample is
    assert at.selectbox(key=S.LABEL).options[:2] == ["part of speech (UPOS)",
                                                     "dependency relation"]
    index = build_index(default_model, sample_treebank(), tmp_path / "ix")
    q, matches = query(default_model, index, text, 2, 3, S.DEFAULT_K)
    lines = reading(index, q.piece, matches, 3, None, own_row(index, text, 2))
    assert reading_md(at) == "\n".join(f"- {plain(line)}" for line in lines)
    assert q.piece == "soup"
    assert any("share the word's part of speech (NOUN)" in line for line in lines)


def test_an_uploads_notes_are_said_once():
    """Issue 49: a .conllu file with a multiword token ("don't" = "do" + "n't") had its note
    said twice, by the corpus picker and again from the index."""
    data = ("# text = I don't know .\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
            "1\tI\tI\tPRON\t_\t_\t3\tnsubj\t_\t_\n2\tdo\tdo\tAUX\t_\t_\t4\taux\t_\t_\n"
            "3\tn't\tnot\tPART\t_\t_\t4\tadvmod\t_\t_\n4\tknow\tknow\tVERB\t_\t_\t0\troot\t_\t_\n"
            "5\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_\n\n").encode()
    at = open_page(a="I know .", **{S.CORPUS: "text", S.TEXT_CORPUS.source: "Upload"})
    at.file_uploader(key=S.TEXT_CORPUS.upload).set_value(
        ("mw.conllu", data, "text/plain")).run()
    assert not at.exception and not at.error
    notes = [c.value for c in at.caption if "multiword-token" in c.value]
    assert notes == ["Skipped 1 multiword-token range(s) and empty node(s); the words "
                     "themselves are kept."]


def test_an_unreadable_upload_is_one_line_and_keeps_the_page():
    at = open_page(**{S.CORPUS: "text", S.TEXT_CORPUS.source: "Upload"})
    at.file_uploader(key=S.TEXT_CORPUS.upload).set_value(
        ("bad.conllu", b"1\tThe\n", "text/plain")).run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "bad.conllu" in errs[0] and "\n" not in errs[0].strip()
