"""The Drift page's model choice: outside demo mode a box for each model (a listed model's name,
a hub id or a folder; the after one bound to the URL as ``drift_after``; empty = the example
checkpoint once it is built); in demo mode both come from the host's model list by name
(``ui.common.settings``), so no path can be named."""

from __future__ import annotations

import streamlit as st

from analysis.models import EXAMPLE_SPEC, normalise_spec
from ui.common.errors import plain
from ui.common.links import folder_note
from ui.common.settings import settings

SIDEBAR_MODEL = "(the sidebar's model)"
UNLISTED = ("This link asks for an after model that this demo does not offer; it offers only "
            "the models in its list.")
_URL_CHECKED = "_drift_url_checked"

# ---------------------------------------------------------------------------------------------
# Model choice


def _example_ready() -> bool:
    from analysis.aspects.example import example_ready

    return example_ready()


def _named(value: str) -> str:
    """A box's value: a listed model's display name gives its spec; else the value itself."""
    conf = settings()
    value = value.strip()
    return normalise_spec(conf.models.get(value, value)) if value else ""


def pick_models(sidebar_spec: str, sidebar_name: str | None = None) -> tuple[str, str]:
    """The before and after widgets (bound to the URL as ``drift_before``/``drift_after``, or
    ``drift_before_name`` in demo mode) -> (before spec, after spec; '' when none is given).
    Outside demo mode a box takes a listed model's name, a hub id or a folder."""
    conf = settings()
    c1, c2 = st.columns(2)
    if not conf.demo:
        before_in = c1.text_input(
            "Before (model name, hub id or folder)", key="drift_before", bind="query-params",
            placeholder=f"empty: the sidebar's model ({sidebar_name or sidebar_spec})",
            help="Leave empty to use the model chosen in the sidebar.", max_chars=500)
        after_in = c2.text_input(
            "After: the fine-tuned checkpoint (model name, hub id or folder)", key="drift_after",
            bind="query-params", placeholder="empty: the example checkpoint", max_chars=500,
            help="A checkpoint of the same architecture and tokenizer as the before model: a "
                 "name from the model list, a hub id or a folder. Empty: the example "
                 "checkpoint (the embedded model fine-tuned on the bundled ABSA sample) once "
                 "it is built.")
        note = folder_note(before_in, after_in)
        if note:
            st.caption(plain(note))
        before = _named(before_in) or sidebar_spec
        after = _named(after_in) or (EXAMPLE_SPEC if _example_ready() else "")
        return before, after
    names = list(conf.models)
    if not st.session_state.get(_URL_CHECKED):
        st.session_state[_URL_CHECKED] = True
        asked = st.query_params.get("drift_after")
        if asked is not None and asked not in names:
            st.info(plain(UNLISTED), icon=":material/info:")
    after_default = conf.model_name(EXAMPLE_SPEC) or names[-1]
    before_name = c1.selectbox("Before", [SIDEBAR_MODEL] + names, key="drift_before_name",
                               bind="query-params")
    after_name = c2.selectbox("After: the fine-tuned model", names, key="drift_after",
                              index=names.index(after_default), bind="query-params")
    before = sidebar_spec if before_name == SIDEBAR_MODEL else conf.models[before_name]
    return normalise_spec(before), normalise_spec(conf.models[after_name])
