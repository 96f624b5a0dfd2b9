"""The model pickers beside the sidebar's: the one second-model picker (:func:`second_model`, a
fine-tuned checkpoint to compare with; the Syntax page's second model and the Drift page's
"after" model) and the Drift page's before/after pair (:func:`pick_models`). Outside demo mode a
box takes a listed model's name, a hub id or a folder (empty or "example" = the example
checkpoint once it is built); in demo mode the models come from the host's model list by name
(``ui.server.settings``), so no path can be named. The widget keys (and URL parameters) are the
calling study's, passed in from its ``state`` module."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from analysis.core import example
from analysis.core.models import EXAMPLE_SPEC, normalise_spec
from ui.common.errors import plain
from ui.common.frame.links import folder_note
from ui.server.settings import settings
from ui.common.frame.url_select import url_selectbox

Q = "query-params"
SIDEBAR_MODEL = "(the sidebar's model)"
UNLISTED = ("This link asks for an after model that this demo does not offer; it offers only "
            "the models in its list.")

# ---------------------------------------------------------------------------------------------
# Model choice


def example_ready() -> bool:
    """Whether the example checkpoint is built (the second model's default)."""
    return bool(example.example_ready())


def _named(value: str) -> str:
    """A box's value: a listed model's display name gives its spec; else the value itself."""
    conf = settings()
    value = value.strip()
    return normalise_spec(conf.models.get(value, value)) if value else ""


@dataclass(frozen=True)
class SecondModel:
    """How a page shows its second-model box: its widget key (= URL parameter), the demo
    select box's key, labels and texts, and whether an empty box means the example checkpoint
    (else the box starts filled with "example" once it is built)."""

    key: str
    demo_key: str
    label: str
    demo_label: str
    placeholder: str
    help: str
    empty_is_example: bool = True


def second_model(container, how: SecondModel, demo_default: str | None = None) -> str:
    """The one second-model picker -> a spec ('' while none is given). Demo mode: one of the
    host's listed models by name (``demo_default`` first, else the example's name, else the
    last one). Otherwise a box for a listed model's name, a hub id or a folder."""
    conf = settings()
    if conf.demo:
        names = list(conf.models)
        default = demo_default if demo_default in names else (
            conf.model_name(EXAMPLE_SPEC) or names[-1])
        # its default is not the first name: bound by url_selectbox, so that a link keeps a
        # choice of the first
        name = url_selectbox(container, how.demo_label, names, key=how.demo_key,
                             default=default)
        return normalise_spec(conf.models[name])
    if not how.empty_is_example:
        st.session_state.setdefault(how.key, EXAMPLE_SPEC if example_ready() else "")
    value = container.text_input(how.label, key=how.key, bind=Q, max_chars=500,
                                 placeholder=how.placeholder, help=how.help)
    if not value.strip() and how.empty_is_example:
        return EXAMPLE_SPEC if example_ready() else ""
    return _named(value)


def pick_models(sidebar_spec: str, sidebar_name: str | None, before: tuple[str, str],
                after: SecondModel, url_checked: str) -> tuple[str, str]:
    """The Drift page's before and after widgets -> (before spec, after spec; '' when none is
    given). ``before``: the before box's key outside demo mode and its select box's key in demo
    mode (both bound to the URL); ``after``: the second-model picker; ``url_checked``: the
    session key marking the first run's check of a link's after model (demo mode)."""
    conf = settings()
    c1, c2 = st.columns(2)
    if not conf.demo:
        before_in = c1.text_input(
            "Before (model name, hub id or folder)", key=before[0], bind=Q,
            placeholder=f"empty: the sidebar's model ({sidebar_name or sidebar_spec})",
            help="Leave empty to use the model chosen in the sidebar.", max_chars=500)
        after_spec = second_model(c2, after)
        note = folder_note(before_in, st.session_state.get(after.key) or "")
        if note:
            st.caption(plain(note))
        return _named(before_in) or sidebar_spec, after_spec
    names = list(conf.models)
    if not st.session_state.get(url_checked):
        st.session_state[url_checked] = True
        asked = st.query_params.get(after.demo_key)
        if asked is not None and asked not in names:
            st.info(plain(UNLISTED), icon=":material/info:")
    before_name = c1.selectbox("Before", [SIDEBAR_MODEL] + names, key=before[1], bind=Q)
    after_spec = second_model(c2, after)
    spec = sidebar_spec if before_name == SIDEBAR_MODEL else conf.models[before_name]
    return normalise_spec(spec), after_spec
