"""The page frame's state, named once: the sidebar's widget keys (also its URL parameters:
``src``, ``model``, ``mode``, ``a``, ``b``) and session keys, the URL select boxes' kept choices,
the side-by-side charts' containers and the corpus pickers' keys (:class:`CorpusKeys`, one set
per page). The exports' keys (downloads, the report) are in ``ui/common/exports/state.py``; each
study's own keys in its ``ui/<study>/state.py``; no other module writes a session key as a
string (tests/test_layout.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

# -- the sidebar (widgets bound to the URL: these are its parameters) --------------------------
MODEL_SOURCE = "src"
MODEL = "model"
MODE = "mode"
TEXT_A = "a"
TEXT_B = "b"
# -- the sidebar's session keys -----------------------------------------------------------------
CONTEXT = "_sidebar_context"      # the page's Context, built once per run
GOOD_SPEC = "_last_good_spec"     # the last model spec that loaded
SIDEBAR_URL_CHECKED = "_sidebar_url_checked"
KEPT_INPUT = "_sidebar_input"     # (mode, text A, text B) of the last run that showed the box


def kept_choice_key(key: str) -> str:
    """The session slot that keeps URL select box ``key``'s choice across a page change
    (``ui.common.frame.url_select``): Streamlit drops a widget's own state on a page that does not
    draw it, and the browser drops the URL's parameters when the page changes."""
    return f"_kept_choice_{key}"


def followed_key(key: str) -> str:
    """The session slot that keeps what URL select box ``key``'s default belongs to (its
    ``follows``: a result's key), so that a new result puts the box back on its default."""
    return f"_followed_{key}"


def fit_keys(key: str) -> tuple[str, str]:
    """The two containers of side-by-side chart ``key`` (``ui.common.charts.side_by_side``):
    its wide version's and its stacked (phone) version's; the page's CSS shows one of them."""
    return f"fitwide-{key}", f"fitnarrow-{key}"


@dataclass(frozen=True)
class CorpusKeys:
    """The keys of one page's corpus picker (``ui.common.frame.corpus``) or treebank picker
    (``ui.syntax.treebank``): ``{prefix}_source``, ``{prefix}_max``, ... The widgets bound to
    the URL have these as their parameters."""

    prefix: str

    def _k(self, name: str) -> str:
        return f"{self.prefix}_{name}"

    source = property(lambda self: self._k("source"))
    cap = property(lambda self: self._k("max"))
    paste = property(lambda self: self._k("paste"))
    upload = property(lambda self: self._k("upload"))
    csv_text = property(lambda self: self._k("csv_text"))
    csv_pair = property(lambda self: self._k("csv_pair"))
    hf_pick = property(lambda self: self._k("hf_pick"))
    hf_name = property(lambda self: self._k("hf_name"))
    hf_split = property(lambda self: self._k("hf_split"))
    hf_column = property(lambda self: self._k("hf_col"))
    hf_pair = property(lambda self: self._k("hf_pair"))


# -- typed read / write helpers ------------------------------------------------------------------


def read(key: str, default: Any = None) -> Any:
    """A session value (``default`` when absent or None)."""
    value = st.session_state.get(key)
    return default if value is None else value


def write(key: str, value: Any) -> None:
    st.session_state[key] = value


def has(key: str) -> bool:
    return key in st.session_state


def kept_input() -> tuple | None:
    """(mode, text A, text B) of the sidebar's last run that showed the input box."""
    return st.session_state.get(KEPT_INPUT)


def keep_input(mode: str, text: str, pair: str | None) -> None:
    st.session_state[KEPT_INPUT] = (mode, text, pair)


GLOSSED = "_glossed_terms"  # (the run, the terms it explained) (explain.glossed)
