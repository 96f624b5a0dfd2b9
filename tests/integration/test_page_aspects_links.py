"""The Aspect heads page's URL state: every control is bound to the URL, a fresh session from a
link restores the source, data, tabs, example and causal-check choices and shows the same heads,
and session-only inputs say that a link cannot carry them."""

from __future__ import annotations

# the page tests' fixtures: an empty example cache per test (autouse) and a stand-in example
from test_page_aspects import _stay_on_page, copy_example, stand_in_example  # noqa: F401
from ui.aspects import state as aspects_state
from url_util import bound, open_page

LINK = {"ah_source": "Example checkpoint", "ah_data": "Bundled sample", "ah_max": 40,
        "ah_tab": "Aspect-sentiment", "ah_ekind": "Aspect-sentiment", "ah_ckind": "No-op",
        "ah_k": 2, "ah_hv_model": "before fine-tuning"}


def _url(at, key):
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


def test_a_link_restores_the_view_and_the_heads(stand_in_example, monkeypatch):  # noqa: F811
    copy_example(stand_in_example)
    first = open_page("aspects", monkeypatch, **LINK)
    # the head and pair selectors' labels hold a score and a text; their URL values are the
    # head as "layer-head" and the pair's index in the data
    first.selectbox(key="ah_ehead").select_index(2)
    first.selectbox(key="ah_epair").select_index(3)
    first.run()
    head, pair = first.selectbox(key="ah_ehead").value, first.selectbox(key="ah_epair").value
    assert _url(first, "ah_ehead") == head and _url(first, "ah_epair") == str(pair)
    assert "score" in first.selectbox(key="ah_ehead").options[2] and "score" not in head
    link = {**LINK, "ah_ehead": head, "ah_epair": str(pair)}
    at = open_page("aspects", monkeypatch, **link)
    assert not at.error, [e.value for e in at.error]
    got = bound(at)
    assert got == {"ah_source": "Example checkpoint", "ah_data": "Bundled sample", "ah_max": 40,
                   "ah_tab": "Aspect-sentiment", "ah_ekind": "aspect_sentiment",
                   "ah_ckind": "noop", "ah_k": 2, "ah_hv_model": "before fine-tuning",
                   "ah_ehead": head, "ah_epair": pair}  # the last two: url_selectbox's
    assert (at.selectbox(key="ah_ehead").value, at.selectbox(key="ah_epair").value) == (head, pair)
    assert (at.selectbox(key="ah_ehead").index, at.selectbox(key="ah_epair").index) == (2, 3)
    disc = at.session_state[aspects_state.MODEL].disc["after"]
    pick = disc.ranked["aspect_sentiment"][:5][2]
    assert head == f"{pick['layer'] + 1}-{pick['head'] + 1}"
    caption = " ".join(c.value for c in at.caption)
    assert f"head {head} from the" in caption
    again = open_page("aspects", monkeypatch, **link)
    assert bound(again) == got
    assert (again.selectbox(key="ah_ehead").value, again.selectbox(key="ah_epair").value) == \
        (head, pair)
    assert [d.value.to_dict() for d in again.dataframe] == [d.value.to_dict() for d in at.dataframe]
    assert [c.proto.component_name for c in at.get("bidi_component")].count("copy_link") == 1
    # a head not in the top 5, a pair that is not of this kind: the first of each
    bad = open_page("aspects", monkeypatch, **{**LINK, "ah_ehead": "99-99", "ah_epair": "-1"})
    assert not bad.error
    assert (bad.selectbox(key="ah_ehead").index, bad.selectbox(key="ah_epair").index) == (0, 0)
    # a whole label (what a link written by Streamlit's binding carries) is that head
    old = open_page("aspects", monkeypatch, **{**LINK, "ah_ehead": first.selectbox(
        key="ah_ehead").options[2]})
    assert not old.error and old.selectbox(key="ah_ehead").index == 2
    assert _url(bad, "ah_ehead") is None and _url(bad, "ah_epair") is None


def test_session_only_sources_say_the_link_cannot_carry_them(monkeypatch):
    at = open_page("aspects", monkeypatch, ah_source="Fine-tune on the bundled sample",
                   ah_task="nli_m", ah_epochs="2.0", ah_seed="7")
    got = bound(at)
    assert (got["ah_task"], got["ah_epochs"], got["ah_seed"]) == ("nli_m", 2.0, 7)
    assert any("cannot carry a model fine-tuned in this session" in c.value for c in at.caption)
    at = open_page("aspects", monkeypatch, ah_source="Upload a checkpoint .zip")
    assert any("cannot carry an uploaded checkpoint" in c.value for c in at.caption)
    # no internal names on the page
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "(T)" not in text and "base default" not in text


def test_before_and_after_stack_on_a_phone(stand_in_example, monkeypatch):  # noqa: F811
    """Issue 35: the before | after heatmap of each kind is drawn twice: side by side for a
    wide screen and one panel per row for a phone (the page's CSS shows one of them below
    640 px), each panel narrow enough for a 390 px screen; both hold both models."""
    import json

    from ui.common.charts import PHONE_PANEL_PX
    from ui.common.frame.state import fit_keys

    copy_example(stand_in_example)
    at = open_page("aspects", monkeypatch, **LINK)
    assert not at.error, [e.value for e in at.error]
    blocks = {}
    stack = [at._tree]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", {}).values())
        key = str(getattr(node, "key", None) or "")
        if key.startswith(("fitwide-ah_chart_", "fitnarrow-ah_chart_")):
            charts = [c for c in getattr(node, "children", {}).values()
                      if getattr(c, "type", None) == "vega_lite_chart"]
            blocks[key] = json.loads(charts[0].proto.spec)
    wide, narrow = fit_keys(aspects_state.CHART.format("aspect_sentiment"))
    assert wide in blocks and narrow in blocks
    assert blocks[wide]["columns"] == 2 and blocks[narrow]["columns"] == 1
    assert blocks[narrow]["spec"]["width"] <= PHONE_PANEL_PX
    assert blocks[narrow]["facet"] == blocks[wide]["facet"]  # the same panels: before, after
