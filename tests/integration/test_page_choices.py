"""Every page opened with every choice of its select boxes, radios, segmented controls and tabs,
each picked by its URL parameter (the way a shared link opens it) -- issue 34 item 5: a plain
link ``/attribution?attr_fdata=Another+corpus`` showed Streamlit's exception box.

For each choice the page must run without an exception or an error box, show the chosen
value in its widget, and still show a result (a chart, table, metric, view, or a sentence
saying what to do next). Numbered choices (layers, heads) are tried at their first and last
value.

The sidebar's model is a tiny seeded classifier, so every page (and the Attribution
page's corpus tab, which needs a task head) runs in seconds."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attribution_models import tiny_classifier_dir
from ui.common.errors import plain

APP = str(Path(__file__).resolve().parents[2] / "app.py")
KINDS = ("selectbox", "radio", "button_group")
RESULTS = ("vega_lite_chart", "dataframe", "metric", "arrow_data_frame", "iframe",
           "components_v1_iframe", "custom_component", "html")
TABS = {"aspects": "ah_tab", "attribution": "attr_tab", "drift": "drift_tab",
        "importance": "importance_tab", "noop": "noop_tab", "representations": "rep_tab",
        "syntax": "syntax_tab", "patching": "patching_tab"}
PAGES = ("attention", "noop", "aspects", "drift", "syntax", "attribution", "importance",
         "representations", "patching", "report", "search")
SMALL = {"noop_max": "10", "drift_max": "10", "syntax_max": "10", "attr_fmax": "3",
         "attr_max": "10", "rep_n": "40"}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tiny_classifier_dir(tmp_path_factory)
    return {"src": "Local folder", "model": str(folder), "attr_model": "The sidebar's model",
            **SMALL}


@pytest.fixture(autouse=True)
def _no_legacy_rerun(monkeypatch, tmp_path):

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))  # the example is not built


def open_page(page: str, params: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    return at


def widgets(at) -> dict:
    """key -> widget of the page's bound choice widgets (the sidebar's own are left out: the
    model must stay the tiny one)."""
    out = {}
    for kind in KINDS:
        for w in at.get(kind):
            key = getattr(w, "key", None)
            if key and not key.startswith("$$") and key not in ("src", "model", "mode"):
                out[key] = w
    return out


def tried(options: list) -> list:
    if len(options) > 3 and all(str(o).isdigit() for o in options):
        return [options[0], options[-1]]
    return list(options)


def check(at, page: str, what: str) -> None:
    from analysis.importance.evalset import SAMPLE_NEEDS_CARD

    assert not at.exception, (page, what, [e.value for e in at.exception][:1])
    errors = [e.value for e in at.error if e.value != plain(SAMPLE_NEEDS_CARD)]
    assert not errors, (page, what, errors)
    shown = sum(len(at.get(kind)) for kind in RESULTS) + len(at.info) + len(at.caption)
    assert shown > 0, (page, what)


@pytest.mark.parametrize("page", PAGES)
def test_every_choice_of_every_page_opens_from_its_link(page, base):
    at = open_page(page, base)
    check(at, page, "default")
    assert at.title and at.title[0].value
    found = widgets(at)
    for key, w in found.items():
        bound = bool(getattr(w.proto, "query_param_key", ""))  # Streamlit writes the label
        for label in tried([str(o) for o in w.options]):
            now = widgets(at).get(key)
            if now is None or label not in now.options:
                continue  # its choices depend on another widget's (a colouring, a relation)
            if not w.disabled:  # (a disabled one is only opened from its link)
                pick(now, label)
                at.run()
                check(at, page, f"{key}={label} (picked)")
            if bound:
                url = label
            elif key in at.query_params:  # ui.common.frame.url_select: str(option), not the label
                url = at.query_params[key]
            else:
                continue  # a default url_selectbox value, or a widget the URL does not carry
            fresh = open_page(page, {**base, key: url})
            check(fresh, page, f"?{key}={url}")
            now = widgets(fresh).get(key)
            assert now is not None and _label(now) == label, (page, key, label)
    for label in [t.label for t in at.tabs] if page in TABS else []:
        fresh = open_page(page, {**base, TABS[page]: label})
        check(fresh, page, f"?{TABS[page]}={label}")


def _value(w, label: str):
    """The value behind the widget's shown ``label``: the label itself, or (a widget with a
    ``format_func``) the key of the dict the format function reads whose text is ``label``."""
    fmt = getattr(w, "format_func", None)
    if fmt is None:
        return label
    pools = [getattr(fmt, "__self__", None)]
    code = getattr(fmt, "__code__", None)
    if code is not None:
        pools += [fmt.__globals__.get(n) for n in code.co_names]
        pools += [c.cell_contents for c in fmt.__closure__ or ()]
    for pool in pools:
        for v in pool if isinstance(pool, (dict, list, tuple)) else ():
            try:
                if str(fmt(v)) == label:
                    return v
            except Exception:  # noqa: BLE001, S112 -- a candidate the function does not take
                continue
    return label


def pick(w, label: str) -> None:
    """Choose ``label`` in ``w`` as a visitor would."""
    value = _value(w, label)
    if w.type == "selectbox" and value == label:
        w.select_index(w.options.index(label))
    else:
        w.set_value(value)


def _label(w) -> str:
    value = w.value
    index = getattr(w, "index", None)
    if index is not None and w.options:
        return str(w.options[index])
    return str(value)


def test_attribution_another_corpus_from_a_plain_link(base):
    """The issue's link: the corpus picker appears on the bundled sample, and the run button
    offers its first examples."""
    at = open_page("attribution", {**base, "attr_tab": "Which explanation to trust",
                                   "attr_fdata": "Another corpus"})
    check(at, "attribution", "Another corpus")
    captions = [c.value for c in at.caption]
    assert any("The bundled sample corpus" in c for c in captions), captions
    assert any(c.startswith("Press the button to explain 3 examples") for c in captions), \
        captions
