"""The Syntax page's URL state: every control is bound to the URL and a fresh session opened
from a link shows the same relation, direction, head, example, minimum, tab and probe rank --
the link's values win over the page's own resets (best head, default minimum)."""

from __future__ import annotations

from url_util import bound, open_page

LINK = {"syntax_rel": "nsubj", "syntax_dir": "head attends to its dependent",
        "syntax_layer": 3, "syntax_head": 4, "syntax_min": 5, "syntax_tab": "Structural probes",
        "syntax_rank": 32, "syntax_max": 60}


def test_a_link_restores_the_view(monkeypatch):
    at = open_page("syntax", monkeypatch, **LINK)
    assert not at.error, [e.value for e in at.error]
    got = bound(at)
    assert {k: got[k] for k in LINK} == {
        "syntax_rel": "nsubj", "syntax_dir": "head_to_dep", "syntax_layer": 3,
        "syntax_head": 4, "syntax_min": 5, "syntax_tab": "Structural probes",
        "syntax_rank": 32, "syntax_max": 60}
    assert {"syntax_source", "syntax_after"} <= set(got)
    assert {m.label: m.value for m in at.metric}["Sentences"] == "60"
    # the example view shows the linked head, not the relation's best one
    assert any("head 3-4's pick" in c.value for c in at.caption)
    again = open_page("syntax", monkeypatch, **LINK)
    assert bound(again) == got
    assert again.dataframe[0].value.equals(at.dataframe[0].value)
    assert [c.proto.component_name for c in at.get("bidi_component")].count("copy_link") == 1


def test_without_a_link_the_page_picks_the_best_head_and_paste_says_so(monkeypatch):
    at = open_page("syntax", monkeypatch, syntax_rel="nsubj", syntax_max=60)
    got = bound(at)
    table = at.dataframe[0].value
    best = table[table["relation"] == "nsubj"]["best head"].iloc[0]
    assert f"{got['syntax_layer']}-{got['syntax_head']}" == best
    assert got["syntax_min"] == 10  # the sample's default minimum
    at = open_page("syntax", monkeypatch, syntax_source="Paste")
    assert any("cannot carry pasted CoNLL-U text" in c.value for c in at.caption)


def _url(at, key):
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


def test_the_example_sentence_travels_by_its_number_not_its_text(monkeypatch):
    """The example selector's label is the sentence; the URL carries its number in the list."""
    base = {"syntax_rel": "nsubj", "syntax_max": 60}
    first = open_page("syntax", monkeypatch, **base)
    box = first.selectbox(key="syntax_example")
    labels = list(box.options)
    assert len(labels) > 3 and _url(first, "syntax_example") is None
    box.select_index(3)
    first.run()
    assert _url(first, "syntax_example") == "3" and first.selectbox(
        key="syntax_example").options[3] == labels[3]
    again = open_page("syntax", monkeypatch, **base, syntax_example="3")
    assert again.selectbox(key="syntax_example").value == 3
    svg = [m.value for m in again.markdown if "dep-scroll" in m.value]
    assert svg and svg == [m.value for m in first.markdown if "dep-scroll" in m.value]
    for bad in ("9999", "<i>2</i>", labels[3][:-1]):
        at = open_page("syntax", monkeypatch, **base, syntax_example=bad)
        assert not at.error and at.selectbox(key="syntax_example").value == 0, bad
        assert _url(at, "syntax_example") is None, bad
    # a link written by Streamlit's own binding carries the label: read as that option, and
    # the URL then carries its number
    at = open_page("syntax", monkeypatch, **base, syntax_example=labels[3])
    assert at.selectbox(key="syntax_example").value == 3
    assert _url(at, "syntax_example") == "3"
