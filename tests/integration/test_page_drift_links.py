"""The Drift page's URL state: every control is bound to the URL, and a fresh session opened
from a link restores the models, corpus, head, statistic, thresholds, gallery and tab, with
the same numbers; the plain reading is computed from the result."""

from __future__ import annotations

import pytest

from url_util import bound, open_page


@pytest.fixture(autouse=True)
def no_example(monkeypatch, tmp_path):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")


@pytest.fixture(scope="module")
def finetuned(finetuned_copy):
    return str(finetuned_copy)  # tests/conftest.py: made once per test process


def test_a_link_restores_every_control_and_the_numbers(monkeypatch, finetuned):
    link = {"drift_after": finetuned, "drift_max": 10, "drift_layer": 2, "drift_head": 3,
            "drift_tab": "Pattern types", "drift_t_vertical": 0.3, "drift_t_block": 0.9,
            "drift_noop_kind": "attention to [SEP]", "drift_gallery_type": "diagonal",
            "drift_gallery_model": "after", "drift_source": "Sample corpus"}
    at = open_page("drift", monkeypatch, **link)
    assert not at.error, [e.value for e in at.error]
    got = bound(at)
    assert got["drift_after"] == finetuned and got["drift_before"] == ""
    assert (got["drift_max"], got["drift_layer"], got["drift_head"]) == (10, 2, 3)
    assert got["drift_tab"] == "Pattern types" and got["drift_source"] == "Sample corpus"
    assert got["drift_t_vertical"] == pytest.approx(0.3)
    assert got["drift_t_block"] == pytest.approx(0.9)
    assert got["drift_t_diagonal"] == pytest.approx(0.5)  # not in the link: the default
    assert got["drift_noop_kind"] == "sep"
    assert (got["drift_gallery_type"], got["drift_gallery_model"]) == ("diagonal", "after")
    assert "drift_before" in got and got["drift_example"] in range(10)  # its index
    assert at.selectbox(key="drift_example").value in range(10)
    # a folder in the link: said plainly that it opens only on this machine
    assert any("folder on this server" in c.value for c in at.caption)
    assert [c.proto.component_name for c in at.get("bidi_component")].count("copy_link") == 1

    # the same numbers as the library on the same models, corpus and thresholds
    from analysis.core.corpus import sample_corpus
    from analysis.drift import PatternThresholds, compare_models, load_pair
    from analysis.drift.reading import reading
    from analysis.core.encoding import encode_dataset

    before, after = load_pair("default", finetuned)
    ref = compare_models(before, after, encode_dataset(
        before.tokenizer, sample_corpus(max_examples=10), max_examples=10))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Mean head cosine"] == f"{ref.cosine.mean():.3f}"
    assert metrics["CKA, last layer"] == f"{ref.cka[-1]:.3f}"
    assert metrics["RSA, last layer"] == f"{ref.rsa[-1]:.3f}"
    lines = reading(ref, PatternThresholds(vertical=0.3, block=0.9))
    text = " ".join(m.value for m in at.markdown)
    first = lines[0].split(";")[0]  # "Layer k changed most (mean head cosine x.xxx)"
    assert first.startswith("Layer ") and first in text
    assert "vertical pattern" in text
    assert "Head 2-3" in " ".join(c.value for c in at.caption)

    # a second session from the same link: the same view, the same numbers
    again = open_page("drift", monkeypatch, **link)
    assert bound(again) == got
    assert {m.label: m.value for m in again.metric} == metrics


def test_bad_link_values_fall_back(monkeypatch, finetuned):
    at = open_page("drift", monkeypatch, drift_after=finetuned, drift_max=6, drift_layer="99",
                   drift_head="-1", drift_t_vertical="7", drift_gallery_type="<b>x</b>",
                   drift_tab="nope", drift_noop_kind="nope")
    assert not at.error, [e.value for e in at.error]
    got = bound(at)
    assert 1 <= got["drift_layer"] <= 6 and 1 <= got["drift_head"] <= 12
    assert 0.0 <= got["drift_t_vertical"] <= 1.0
    assert got["drift_gallery_type"] == "vertical" and got["drift_tab"] == "Heads: cosine"
    assert got["drift_noop_kind"] == "cls"



def _url(at, key):
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


def test_a_link_restores_the_example_by_its_index_not_its_label(monkeypatch, finetuned):
    """The example selector's label holds a number and a text of the data; the URL holds the
    example's index in the corpus, so a link restores it even where the numbers differ."""
    base = {"drift_after": finetuned, "drift_max": 10, "drift_layer": 2, "drift_head": 3}
    first = open_page("drift", monkeypatch, **base)
    box = first.selectbox(key="drift_example")
    most_changed, labels = box.value, list(box.options)
    assert len(labels) == 10 and _url(first, "drift_example") is None  # the default: no param
    box.select_index(2)
    first.run()
    box = first.selectbox(key="drift_example")
    picked = box.value
    assert picked != most_changed and box.options[2] == labels[2]
    # the URL carries the example's index in the corpus, not its label
    assert _url(first, "drift_example") == str(picked) and str(picked) != labels[2]
    # a fresh session from that link shows the same example (its label, its maps' numbers)
    again = open_page("drift", monkeypatch, **base, drift_example=str(picked))
    assert again.selectbox(key="drift_example").value == picked
    assert again.selectbox(key="drift_example").index == 2
    assert _url(again, "drift_example") == str(picked)
    assert [c.value for c in again.caption] == [c.value for c in first.caption]
    # an index that is not in the list, markup, or a cut label: ignored (the most changed
    # example) and dropped from the URL
    for bad in ("999", "<b>1</b>", labels[2][:-1]):
        at = open_page("drift", monkeypatch, **base, drift_example=bad)
        assert not at.error and at.selectbox(key="drift_example").value == most_changed, bad
        assert _url(at, "drift_example") is None, bad
    # a whole label (what a link written by Streamlit's binding carries) is that example
    at = open_page("drift", monkeypatch, **base, drift_example=labels[2])
    assert at.selectbox(key="drift_example").value == picked
    assert _url(at, "drift_example") == str(picked)
