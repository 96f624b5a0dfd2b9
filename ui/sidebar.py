"""The shared sidebar: model picker and input text(s), bound to the URL for deep links.

``render()`` is called once per run by app.py; pages read the result with ``context()``.
A model that fails to load shows a plain message and the last model that loaded stays in use,
so the user's view and text are never lost.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from analysis.models import DEFAULT_NAME, DEFAULT_SPEC, LoadedModel, ModelLoadError
from ui.html import esc
from ui.links import MODE_PAIR, MODES, SOURCE_DEFAULT, SOURCE_HUB, SOURCES
from ui.resources import get_model

EXAMPLE_A = "The pasta was superb, but the waiter ignored us for twenty minutes."
EXAMPLE_B = "what do you think of the service of it ?"
_CTX_KEY = "_sidebar_context"
_GOOD_SPEC = "_last_good_spec"


@dataclass
class Context:
    spec: str
    loaded: LoadedModel
    text: str
    pair: str | None
    model_error: str | None = None

    @property
    def is_pair(self) -> bool:
        return self.pair is not None


def _model_spec() -> str:
    src = st.radio("Model", SOURCES, key="src", bind="query-params",
                   captions=[DEFAULT_NAME, "cached or online", "a saved checkpoint"])
    if src == SOURCE_DEFAULT:
        return DEFAULT_SPEC
    label = "Model id" if src == SOURCE_HUB else "Folder path"
    placeholder = "bert-base-uncased" if src == SOURCE_HUB else "/path/to/checkpoint"
    value = st.text_input(label, key="model", placeholder=placeholder, bind="query-params",
                          help="Any BERT, RoBERTa, DistilBERT, ALBERT or ELECTRA style encoder. "
                               "Hub ids load from the local cache or the hub when online.")
    return value.strip() or ""


def _load(spec: str) -> tuple[LoadedModel, str | None]:
    error = None
    if spec:
        try:
            loaded = get_model(spec)
            st.session_state[_GOOD_SPEC] = loaded.spec
            return loaded, None
        except ModelLoadError as exc:
            error = str(exc)
    else:
        error = "Enter a model id or folder to load another model."
    fallback = st.session_state.get(_GOOD_SPEC, DEFAULT_SPEC)
    return get_model(fallback), error


def _model_card(loaded: LoadedModel) -> None:
    specials = " ".join(f"<code>{esc(v)}</code>" for v in loaded.special_tokens.values())
    st.markdown(
        f"<div class='model-card'><b>{esc(loaded.name)}</b><br>"
        f"{esc(loaded.model_type)} &middot; {loaded.n_layers} layers &times; "
        f"{loaded.n_heads} heads &middot; {loaded.n_params / 1e6:.1f}M parameters<br>"
        f"max {loaded.max_length} tokens &middot; special tokens: {specials}</div>",
        unsafe_allow_html=True,
    )


def render() -> Context:
    """Draw the shared sidebar and remember the context for the pages of this run."""
    with st.sidebar:
        spec = _model_spec()
        loaded, error = _load(spec)
        if error:
            st.error(error, icon=":material/error:")
            if spec:
                st.caption(f"Still showing {loaded.name}.")
        _model_card(loaded)
        st.divider()
        mode = st.radio("Input", MODES, key="mode", bind="query-params", horizontal=True)
        text = st.text_area("Text A" if mode == MODE_PAIR else "Text", value=EXAMPLE_A, key="a",
                            bind="query-params", height=90, max_chars=20000)
        pair = None
        if mode == MODE_PAIR:
            pair = st.text_area("Text B", value=EXAMPLE_B, key="b", bind="query-params",
                                height=70, max_chars=20000)
    ctx = Context(spec=loaded.spec, loaded=loaded, text=text, pair=pair, model_error=error)
    st.session_state[_CTX_KEY] = ctx
    return ctx


def leave_legacy_navigation() -> None:
    """Streamlit starts a server in its legacy pages-folder mode when pages/ exists, and in that
    mode a URL such as /attention runs the page file alone, without app.py (no sidebar, no
    st.navigation). Switch the mode off and start the run again through app.py."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def context() -> Context:
    """The sidebar's model and input for this run (app.py renders the sidebar first)."""
    leave_legacy_navigation()
    ctx = st.session_state.get(_CTX_KEY)
    if ctx is None:
        ctx = render()
    return ctx
