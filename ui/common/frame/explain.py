"""The everyday explanations every page shows: a term's few words where it first appears on
the page (:func:`glossed`), a "What am I looking at?" block beside a view with the glossary's
entries for the terms it uses (:func:`explain`), and the whole glossary (:func:`glossary_block`,
the Report page). The terms and their words are ``analysis.report.GLOSSARY``'s (and
``SHORT``'s)."""

from __future__ import annotations

import re

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from analysis.report import GLOSSARY, terms_in
from analysis.report.glossary import SHORT
from ui.common.errors import plain
from ui.common.frame.state import GLOSSED

# a term as a whole word; an acronym as written, a word in any case ("Noising", "noising")
_TERMS = {t: re.compile(r"(?<![\w\[-])" + re.escape(t) + r"(?![\w\]-])",
                        0 if t.isupper() or t[0].isupper() else re.I) for t in SHORT}


def new_page_run() -> None:
    """Forget the terms explained so far (a test outside a script run; a script run starts
    afresh by itself: :func:`_explained`)."""
    st.session_state.pop(GLOSSED, None)


def _explained() -> set:
    """The terms explained so far in this script run: kept with the run's own token (its
    cursors, which Streamlit makes anew for each run), so that every run, a page's or a
    rerun's, explains its terms again at their first use."""
    ctx = get_script_run_ctx()
    run = ctx.cursors if ctx is not None else None
    kept = st.session_state.get(GLOSSED)
    if not kept or kept[0] is not run:
        kept = (run, set())
        st.session_state[GLOSSED] = kept
    return kept[1]


def glossed(text: str, said: tuple[str, ...] = ()) -> str:
    """``text`` with each term of the short glossary that this page run has not explained yet
    followed, at its first use, by its few everyday words in parentheses ("RSA (do the two
    models find the same word pairs alike?)"), unless the text names it in parentheses after
    saying it in words, or ``said`` names it (the text explains it in its own words); plain
    text or Markdown (issue 49: NLI-M, micro
    F1, bootstrap, RSA, CKA, Spearman, ALTI, noising, UPOS, anisotropy, entropy in nats went
    unexplained where they first appeared)."""
    seen = _explained()
    seen.update(t for t in said if _TERMS.get(t) is not None and _TERMS[t].search(text))
    for term, pattern in _TERMS.items():
        if term in seen:
            continue
        m = pattern.search(text)
        if m is None:
            continue
        seen.add(term)
        if text[:m.start()].endswith("(") and text[m.end():].startswith(")"):
            continue  # "... each word's share of every layer's output (ALTI)": said already
        text = f"{text[:m.end()]} ({SHORT[term]}){text[m.end():]}"
    return text


def explain(text: str, label: str = "What am I looking at?") -> None:
    """A short everyday explanation beside a view, with the glossary's entries for the terms
    it uses."""
    with st.expander(label, icon=":material/help:"):
        st.markdown(text)
        terms = terms_in(text)
        if terms:
            st.markdown("\n".join(f"- **{plain(t)}**: {plain(GLOSSARY[t])}" for t in terms))
        st.page_link("pages/report.py", label="Every term: the glossary on the Report page",
                     icon=":material/menu_book:")


def glossary_block() -> None:
    """Every term the pages use, in everyday words."""
    st.markdown("\n".join(f"- **{plain(t)}**: {plain(d)}" for t, d in GLOSSARY.items()))
