"""A selectbox whose link carries a stable value, not its label.

A selectbox bound to the URL (``bind="query-params"``) writes its *visible label* there: for a
list whose labels hold numbers or texts of the data ("0.815  The pasta was...", "3-4 (score
0.912)") a copied link then restores the choice only on the very same numbers. Here the URL
carries ``str(option)``: the options are stable values (an example's index, a "layer-head"
string, a pair's index) and ``format_func`` only draws the label. A value from a URL is checked
against the options on the way in (anything else is ignored and dropped from the URL; an
option's label, which a link written by ``bind`` carries, is read as that option).

A page change loses both the widget's state (Streamlit cleans up the widgets a run does not
draw) and the URL's parameters (the browser opens the other page's bare path); the choice is
kept in a session slot of its own (:func:`ui.common.frame.state.kept_choice_key`), so that coming
back restores the box and puts its value back in the URL, as the widgets bound with
``bind="query-params"`` do.

A choice whose page default is not the widget's first option (the last layer, the best head,
the relation "det", a review the page picks) must be bound here, not with ``bind``: Streamlit
leaves a bound widget's value out of the URL while it equals the widget's own default, its
first option, whatever the page set in the session, so a link to the first option opened on
the page's default instead (seen in Chromium). Here the value is left out only while it is the
page's ``default``, which a fresh session opening the link computes again. :func:`url_choice`
does the same for a radio.

A default that belongs to a result (the head carrying most, the most changed head) is given
with ``follows``, what it belongs to (the result's key): when that changes (a rerun on an
edited input), the choice goes back to the new result's default, as its headline does; before,
the picker kept the last result's head and wrote it into the URL (issue 49: "3-2" under a
headline naming 6-11). A link's choice still wins on the run that opens it."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import streamlit as st

from ui.common.frame.state import followed_key, kept_choice_key


def _tokens(options: Sequence) -> dict[str, Any]:
    return {str(o): o for o in options}


def url_selectbox(container, label: str, options: Sequence, *, key: str,
                  format_func: Callable[[Any], str] = str, default=None, follows=None, **kw):
    """``container.selectbox(label, options, format_func=..., key=key, **kw)`` kept in the URL
    under ``key`` as ``str(option)`` (left out while it is ``default``: the first option unless
    given). On the session's first showing of the widget the URL's value wins when it is one of
    the options; a value that is no longer an option falls back to ``default``."""
    return url_choice(container, label, options, key=key, format_func=format_func,
                      default=default, widget="selectbox", follows=follows, **kw)


def url_choice(container, label: str, options: Sequence, *, key: str,
               format_func: Callable[[Any], str] = str, default=None,
               widget: str = "selectbox", follows=None, **kw):
    """:func:`url_selectbox` for any one-of-many widget of ``container`` (``widget``:
    "selectbox" or "radio"); ``follows``: what the default belongs to (module docstring)."""
    options = list(options)
    if not options:
        return None
    tokens = _tokens(options)
    default = options[0] if default is None or str(default) not in tokens else default
    raw = url = st.query_params.get(key)
    if url is not None and url not in tokens:  # a link written by bind=: the option's label
        by_label = {str(format_func(o)): str(o) for o in options}
        url = by_label.get(url, url)
    kept = kept_choice_key(key)
    if follows is not None:
        seen = st.session_state.get(followed_key(key))
        st.session_state[followed_key(key)] = follows
        if seen is not None and seen != follows and key in st.session_state:
            st.session_state[key] = default  # another result: its own default
    if key not in st.session_state:
        # a widget drawn anew starts at its index, never at a value written to the session
        # first: Streamlit's browser side shows the first option for a widget it drew before
        # (then left out of a run: a page that stopped above it) whose value the session
        # gets back unchanged, while the run reads that value (issue 49: Search's boxes read
        # "0: [CLS]", "0 (embeddings)", "10" after an upload while it searched token 2 at
        # layer 4 for 20 matches)
        if url is not None and url in tokens:
            start = tokens[url]
        elif kept in st.session_state and st.session_state[kept] in tokens:  # page change
            start = tokens[str(st.session_state[kept])]
        else:
            start = default
    else:
        if str(st.session_state[key]) not in tokens:
            st.session_state[key] = default
        start = st.session_state[key]
    draw = getattr(container, widget)
    value = draw(label, options, index=options.index(tokens[str(start)]),
                 format_func=format_func, key=key, **kw)
    token = str(value)
    st.session_state[kept] = token
    if token == str(default):
        if key in st.query_params:
            del st.query_params[key]
    elif raw != token:
        st.query_params[key] = token
    return value
