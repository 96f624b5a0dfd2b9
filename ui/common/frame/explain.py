"""The everyday explanations every page shows: a "What am I looking at?" block beside a view
with the glossary's entries for the terms it uses (:func:`explain`), and the whole glossary
(:func:`glossary_block`, the Report page). The terms and their words are
``analysis.report.GLOSSARY``'s."""

from __future__ import annotations

import streamlit as st

from analysis.report import GLOSSARY, terms_in
from ui.common.errors import plain


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
