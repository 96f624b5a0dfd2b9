"""The shared sidebar: model picker and input text(s), bound to the URL for deep links.

``render()`` is called once per run by app.py; pages read the result with ``context()``.
A model that fails to load shows a plain message and the last model that loaded stays in use,
so the user's view and text are never lost.

Models: the host's list (``ui.server.settings``: display name -> spec) by name, bound to the URL as
``model=<name>``. Outside demo mode two more sources take a Hugging Face id or a server folder
(``src=Hugging Face id|Local folder`` with ``model=<id or folder>``). In demo mode the list is
all there is: a link whose ``model`` or ``src`` asks for anything else gets one plain message
(the same whatever it names; nothing is looked up) and the default model.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from analysis.core.models import LoadedModel, ModelLoadError
from ui.common.errors import plain
from ui.common.frame.explain import glossed
from ui.common.html import esc
from ui.common.frame.legacy_pages import leave_legacy_navigation
from ui.common.frame.links import MODE_PAIR, MODES, SOURCE_HUB, SOURCE_LIST, SOURCES
from ui.common.frame.resources import embedded_model, get_model
from ui.common.frame import state
from ui.server.settings import Settings, settings

EXAMPLE_A = "The pasta was superb, but the waiter ignored us for twenty minutes."
EXAMPLE_B = "what do you think of the service of it ?"
MAX_TEXT_CHARS = 20000
UNLISTED = ("This link asks for a model that this demo does not offer; it offers only the "
            "models in its list. Showing {name}.")
DEMO_NOTE = ("A public demo: the models come from a fixed list, uploads stay in memory and are "
             "forgotten when you leave, and long jobs take turns in one queue.")
UNLISTED_LOCAL = ("This link names a model that is not in the model list. Showing {name}; "
                  "other models load from the Hugging Face id and Local folder sources.")


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


def _unlisted_link(conf: Settings) -> bool:
    """Whether the URL that opened this session asks for a model outside the host's list
    (compared by name only: nothing on the server is looked at). Checked once per session, on
    the link that opened it; in demo mode a ``src`` parameter is dropped from the URL."""
    if st.session_state.get(state.SIDEBAR_URL_CHECKED):
        return False
    st.session_state[state.SIDEBAR_URL_CHECKED] = True
    src, model = st.query_params.get(state.MODEL_SOURCE), st.query_params.get(state.MODEL)
    if conf.demo:
        if src is not None:
            del st.query_params[state.MODEL_SOURCE]
        return (src not in (None, SOURCE_LIST)) or (model is not None
                                                     and model not in conf.models)
    return src in (None, SOURCE_LIST) and model is not None and model not in conf.models


def _clear_model() -> None:
    """A new source: its own empty box (not the previous source's value)."""
    st.session_state.pop(state.MODEL, None)


def _model_spec(conf: Settings) -> tuple[str, str]:
    """(spec, what to call it in a message) of the sidebar's choice."""
    names = list(conf.models)
    src = SOURCE_LIST
    if not conf.demo:
        src = st.radio("Model", SOURCES, key=state.MODEL_SOURCE, bind="query-params",
                       on_change=_clear_model,
                       captions=["ready to use", "cached or online", "a saved checkpoint"])
    if src == SOURCE_LIST:
        name = st.selectbox("Model" if conf.demo else "Listed model", names, key=state.MODEL,
                            bind="query-params",
                            label_visibility="visible" if conf.demo else "collapsed")
        return conf.models[name], name
    label = "Model id" if src == SOURCE_HUB else "Folder path"
    placeholder = "bert-base-uncased" if src == SOURCE_HUB else "/path/to/checkpoint"
    value = st.text_input(label, key=state.MODEL, placeholder=placeholder, bind="query-params",
                          help="Any BERT, RoBERTa, DistilBERT, ALBERT or ELECTRA style encoder. "
                               "Hub ids load from the local cache or the hub when online.")
    return value.strip(), value.strip()


def _fallback(conf: Settings) -> LoadedModel:
    """The last model that loaded, else the list's default, else the embedded model."""
    for spec in (st.session_state.get(state.GOOD_SPEC), conf.models[conf.default_model]):
        if spec:
            try:
                return get_model(spec)
            except ModelLoadError:
                continue
    return embedded_model()


def _load(spec: str, label: str, conf: Settings) -> tuple[LoadedModel, str | None]:
    error = None
    if spec:
        try:
            loaded = get_model(spec)
            st.session_state[state.GOOD_SPEC] = loaded.spec
            return loaded, None
        except ModelLoadError as exc:
            # a listed model's spec is the host's business (it may be a server folder)
            error = f"{label} is not available right now." if conf.demo else str(exc)
    else:
        error = "Enter a model id or folder to load another model."
    return _fallback(conf), error


def _model_card(loaded: LoadedModel) -> None:
    specials = " ".join(f"<code>{esc(v)}</code>" for v in loaded.special_tokens.values())
    st.markdown(
        f"<div class='model-card'><b>{esc(loaded.name)}</b><br>"
        f"{esc(loaded.model_type)} &middot; {loaded.n_layers} layers &times; "
        f"{loaded.n_heads} heads &middot; {loaded.n_params / 1e6:.1f}M parameters<br>"
        f"max {loaded.max_length} tokens &middot; special tokens: {specials}</div>",
        unsafe_allow_html=True,
    )


def _input(conf: Settings) -> tuple[str, str | None]:
    """The input mode and text box(es), bound to the URL; their values are kept aside so that a
    page without the box (``render(text_box=False)``) loses nothing: back on a page with it,
    the box shows the text again (set before the widget, with no default beside it)."""
    kept = state.kept_input()
    if kept is not None:
        for key, value in zip((state.MODE, state.TEXT_A, state.TEXT_B), kept):
            if key not in st.session_state and key not in st.query_params and value is not None:
                st.session_state[key] = value
    mode = st.radio("Input", MODES, key=state.MODE, bind="query-params", horizontal=True)
    max_chars = min(MAX_TEXT_CHARS, conf.max_line_chars or MAX_TEXT_CHARS)
    text = st.text_area("Text A" if mode == MODE_PAIR else "Text", key=state.TEXT_A,
                        bind="query-params", height=90, max_chars=max_chars,
                        **({} if state.has(state.TEXT_A) else {"value": EXAMPLE_A}))
    pair = None
    if mode == MODE_PAIR:
        pair = st.text_area("Text B", key=state.TEXT_B, bind="query-params", height=70,
                            max_chars=max_chars,
                            **({} if state.has(state.TEXT_B) else {"value": EXAMPLE_B}))
    state.keep_input(mode, text, st.session_state.get(state.TEXT_B, pair))
    return text, pair


def _linked_input() -> tuple | None:
    """On a page without the input box (the Head atlas, the app's first page), a link's input
    (mode, text A, text B) kept for the pages with the box, which show it (None: the link
    carries no text)."""
    text = st.query_params.get(state.TEXT_A)
    if text is None:
        return None
    mode = st.query_params.get(state.MODE)
    mode = mode if mode in MODES else MODES[0]
    state.keep_input(mode, text, st.query_params.get(state.TEXT_B))
    return state.kept_input()


def render(text_box: bool = True) -> Context:
    """Draw the shared sidebar and remember the context for the pages of this run.
    ``text_box=False``: a page that reads its own data shows no input box (the context keeps
    the last text)."""
    conf = settings()
    with st.sidebar:
        unlisted = _unlisted_link(conf)
        spec, label = _model_spec(conf)
        if unlisted:
            text = UNLISTED if conf.demo else UNLISTED_LOCAL
            st.info(plain(text.format(name=conf.default_model)), icon=":material/info:")
        loaded, error = _load(spec, label, conf)
        if error:
            st.error(plain(error), icon=":material/error:")
            if spec:
                st.caption(plain(f"Still showing {loaded.name}."))
        _model_card(loaded)
        st.divider()
        if text_box:
            text, pair = _input(conf)
        else:
            mode, text, b = state.kept_input() or _linked_input() or (MODES[0], EXAMPLE_A, None)
            pair = b if mode == MODE_PAIR else None
        if conf.demo:
            st.caption(DEMO_NOTE)
    ctx = Context(spec=loaded.spec, loaded=loaded, text=text, pair=pair, model_error=error)
    st.session_state[state.CONTEXT] = ctx
    return ctx


def context() -> Context:
    """The sidebar's model and input for this run (app.py renders the sidebar first)."""
    leave_legacy_navigation()
    ctx = st.session_state.get(state.CONTEXT)
    if ctx is None:
        ctx = render()
    return ctx


def page_header(title: str, about: str) -> Context:
    """A study page's title and its first line (the sidebar's model, its size, then ``about``,
    Markdown written by the page, its terms explained: ``glossed``); returns the sidebar's
    context."""
    ctx = context()
    loaded = ctx.loaded
    st.title(title)
    st.caption(f"{plain(loaded.name)}: {loaded.n_layers} layers x {loaded.n_heads} heads, "
               f"numbered from 1. {glossed(about)}")
    return ctx
