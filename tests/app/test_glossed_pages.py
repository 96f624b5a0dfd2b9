"""Issue 49: jargon without an everyday explanation at first use (NLI-M, micro F1, bootstrap,
RSA, CKA, Spearman, ALTI, noising/denoising, UPOS, anisotropy, entropy in nats). Each term of
the short glossary is followed by its few everyday words where a page first writes it
(ui.common.frame.explain.glossed), in the text a visitor reads without opening anything
("What am I looking at?" blocks left out)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.report.glossary import SHORT

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")


def _open(page: str, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    for k, v in state.items():
        at.session_state[k] = v
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _read(at) -> str:
    """The page's words in order, without the closed "What am I looking at?" blocks."""
    out = []

    def walk(node):
        if getattr(node, "type", "") == "expander":
            return
        value = getattr(node, "value", None)
        if getattr(node, "type", "") in ("markdown", "caption", "alert", "info", "success") \
                and isinstance(value, str):
            out.append(value)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def _unexplained(text: str, own: dict) -> list[str]:
    """The short glossary's terms whose first use in ``text`` has no explanation after it, or
    (``own``: term -> the page's own words for it) its own words before it."""
    bad = []
    for term, words in SHORT.items():
        flags = 0 if term.isupper() or term[0].isupper() else re.I
        m = re.search(r"(?<![\w\[-])" + re.escape(term) + r"(?![\w\]-])", text, flags)
        if m is None:
            continue
        if term in own:
            if own[term] not in text[:m.start()]:
                bad.append(term)
        elif not text[m.end():].startswith(f" ({words})"):
            bad.append(term)
    return bad


@pytest.mark.parametrize("page, state, terms, own", [
    # the task, where the page says what it will show: "the aspect's name alone (the NLI-M task:
    # "food")", its example
    ("aspects", {}, {"NLI-M", "bootstrap"}, {"NLI-M": "the aspect's name alone"}),
    ("drift", {}, {"RSA", "CKA"}, {}),
    ("noop", {"noop_max": 5}, {"entropy", "nats"}, {}),
])
def test_a_term_is_explained_where_a_page_first_uses_it(page, state, terms, own):
    text = _read(_open(page, **state))
    used = {t for t in SHORT if re.search(re.escape(t), text, re.I)}
    assert terms <= used, (page, terms - used)  # the terms are on the page...
    assert _unexplained(text, own) == [], page  # ... and each is explained at its first use


def test_a_term_is_explained_once_per_page():
    from ui.common.frame.explain import glossed, new_page_run

    new_page_run()
    first = glossed("Layerwise RSA and CKA; entropy in nats; noising, then denoising.")
    assert first == (f"Layerwise RSA ({SHORT['RSA']}) and CKA ({SHORT['CKA']}); entropy "
                     f"({SHORT['entropy']}) in nats ({SHORT['nats']}); noising "
                     f"({SHORT['noising']}), then denoising ({SHORT['denoising']}).")
    assert glossed("RSA again, and Spearman 0.4.") == (
        f"RSA again, and Spearman ({SHORT['Spearman']}) 0.4.")
    new_page_run()  # another page (or run): explained again
    assert glossed("RSA").startswith("RSA (")
    # a term named in parentheses after its words is explained already
    assert glossed("each word's share of every layer's output (ALTI); ALTI") == (
        "each word's share of every layer's output (ALTI); ALTI")
