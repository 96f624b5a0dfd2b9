"""The No-op statistics page's URL state: every control is bound to the URL under its own key,
and a fresh session opened from a link restores the controls and shows the same numbers."""

from __future__ import annotations

import json

from url_util import bound, open_page

CAP = 12


def test_every_control_is_bound_to_the_url(monkeypatch):
    at = open_page("noop", monkeypatch, noop_max=CAP)
    assert bound(at) == {"noop_source": "Sample corpus", "noop_max": CAP, "noop_batch": 64,
                         "noop_norms": True, "noop_grads": False, "noop_ngrad": 32,
                         "noop_tab": "Special tokens (fig. 2)", "noop_rank": "cls+sep"}
    # the embedded model has no loss: the gradient toggle is off and locked, and so is its cap
    assert at.toggle(key="noop_grads").proto.disabled
    assert at.number_input(key="noop_ngrad").proto.disabled
    assert any("no trained masked-language-model head" in i.value for i in at.info)
    # a copy-link button and the "What am I looking at?" help are on the page
    assert [c.proto.component_name for c in at.get("bidi_component")].count("copy_link") == 1
    assert any(e.label == "What am I looking at?" for e in at.expander)


def test_a_link_restores_the_view_and_the_numbers(monkeypatch):
    link = {"noop_max": CAP, "noop_batch": 16, "noop_norms": "false", "noop_tab": "Entropy",
            "noop_source": "Sample corpus"}
    at = open_page("noop", monkeypatch, **link)
    assert bound(at) == {"noop_source": "Sample corpus", "noop_max": CAP, "noop_batch": 16,
                         "noop_norms": False, "noop_grads": False, "noop_ngrad": 32,
                         "noop_tab": "Entropy", "noop_rank": "cls+sep"}
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Examples"] == str(CAP)
    titles = json.dumps([json.loads(c.proto.spec).get("title") for c in at.get("vega_lite_chart")])
    assert "Weight vs norm" not in titles and "Norm share per head" not in titles  # norms off
    # a second fresh session from the same link: the same numbers
    again = open_page("noop", monkeypatch, **link)
    assert {m.label: m.value for m in again.metric}["Tokens"] == metrics["Tokens"]
    assert again.markdown[0].value == at.markdown[0].value  # the reading


def test_bad_link_values_fall_back_to_defaults(monkeypatch):
    at = open_page("noop", monkeypatch, noop_max="999999999", noop_batch="7",
                   noop_source="<script>", noop_tab="nope", noop_norms="maybe")
    assert not at.error, [e.value for e in at.error]
    got = bound(at)
    assert got["noop_batch"] == 64 and got["noop_source"] == "Sample corpus"
    assert got["noop_tab"] == "Special tokens (fig. 2)" and got["noop_norms"] is True
    assert 1 <= got["noop_max"] <= 20000


def test_pasted_corpus_says_the_link_cannot_carry_it(monkeypatch):
    at = open_page("noop", monkeypatch, noop_source="Paste")
    assert any("A link cannot carry pasted lines" in c.value for c in at.caption)


def test_add_to_report_pins_the_chart_with_its_link_and_provenance(monkeypatch, default_model):
    at = open_page("noop", monkeypatch, noop_max=CAP, noop_norms="false")
    buttons = [b for b in at.button if b.label == "Add to report"]
    assert len(buttons) >= 5  # the reading, fig. 2, the heatmaps, entropy, the heads table
    buttons[1].click().run()  # fig. 2
    assert not at.exception
    (f,) = at.session_state["_report"].findings
    assert f.kind == "chart" and f.page == "No-op statistics"
    assert f.title.startswith("Attention to special tokens and punctuation per layer")
    assert f.svg.startswith("<svg") and f.svg.count("<path") > 30
    assert "noop_max=12" in f.link and "noop_norms=false" in f.link
    assert f.source["model"] == default_model.name
    assert f.source["data"] == "the bundled sample corpus (12 examples)"
    assert f.source["setting: attention norms"] == "False"
    [b for b in at.button if b.label == "Add to report"][0].click().run()  # the reading
    reading = at.session_state["_report"].findings[1]
    assert reading.kind == "view" and reading.numbers["Examples"] == "12"
    assert reading.reading[0].startswith(f"In {default_model.name} the main attention sink is")


def test_report_links_are_relative_or_under_the_hosts_public_url(monkeypatch, tmp_path):
    """Issue 35: a pinned finding's link is the page's path and query, relative to the app, or
    under the settings' public_url; never the address the server is reached at here
    (127.0.0.1:PORT), which a collaborator cannot open."""
    import streamlit as st

    import ui.server.settings

    # the browser's address, as the server sees it on the host's own machine
    monkeypatch.setattr(type(st.context), "url",
                        property(lambda self: "http://127.0.0.1:8501/noop?noop_max=12"))
    at = open_page("noop", monkeypatch, noop_max=CAP, noop_norms="false")
    [b for b in at.button if b.label == "Add to report"][0].click().run()
    (f,) = at.session_state["_report"].findings
    assert f.link.startswith("./noop?") and "noop_max=12" in f.link, f.link
    conf = tmp_path / "s.toml"
    conf.write_text('public_url = "https://demo.example.org/dash/"\n', encoding="utf-8")
    monkeypatch.setenv("DASHBOARD_SETTINGS", str(conf))
    ui.server.settings.settings.cache_clear()
    try:
        at = open_page("noop", monkeypatch, noop_max=CAP, noop_norms="false")
        [b for b in at.button if b.label == "Add to report"][0].click().run()
        (f,) = at.session_state["_report"].findings
        assert f.link.startswith("https://demo.example.org/dash/noop?noop_max=12"), f.link
    finally:
        ui.server.settings.settings.cache_clear()
