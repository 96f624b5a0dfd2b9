"""Every session-state key, URL parameter and cache key of the Attribution page, named once.

Widgets bound to the URL use their key as the query parameter (``attr_model=...``); the
other keys live in the session only. Typed helpers read and write them, so no other module
spells a key.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui.common.frame.state import CorpusKeys

# URL parameters (bound widgets)
MODEL = "attr_model"  # "Example checkpoint" | "The sidebar's model"
ASPECT = "attr_aspect"  # the aspect word given to the example checkpoint as the second text
MAP_METHOD = "attr_map"  # the method whose per-layer map is shown
AGGREGATE = "attr_agg"  # "Each layer" | "Through the layers"
LAYER = "attr_layer"  # 1-indexed
TAB = "attr_tab"
FAITH_DATA = "attr_fdata"  # "Held-out ABSA pairs" | "Another corpus"
FAITH_MAX = "attr_fmax"
REMOVAL = "attr_removal"  # "Drop the words" | "Mask the words"
CORPUS = CorpusKeys("attr")  # the corpus picker: attr_source, attr_max, ...
URL_KEYS = (MODEL, ASPECT, MAP_METHOD, AGGREGATE, LAYER, TAB, FAITH_DATA, FAITH_MAX, REMOVAL)

# session-only keys
COPY = "attr_copy"
VIEWS = "attr_views"  # the map component
LAST_GOOD = "_attr_last_good"  # (spec, result) of the last input that worked
DIMS = "_attr_dims"  # (layers, tokens) of the map shown, to check the component's state
FAITH_RUN = "_attr_faith_run"  # the settings of the faithfulness run the visitor started
RUN_SLOW = "_attr_run_slow"  # (spec, text, pair) whose slow methods the visitor chose to run

# widget keys (buttons and downloads; not in the URL)
W_READING = "attr-reading"
W_RUN_SLOW = "attr-run-slow"
W_AGREE_DL = "attr-agree-dl"
W_AGREE = "attr-agree"
W_AGREE_CHART = "attr-agree-chart"
W_CURVES_CHART = "attr-curves-chart"
W_JSON = "attr-json"
W_FAITH_RUN = "attr-faith-run"
W_FAITH_READING = "attr-faith-reading"
W_FAITH_TABLE = "attr-faith-table"
W_CURVES_DL = "attr-curves-dl"
W_CURVES = "attr-curves"
W_FAITH_JSON = "attr-faith-json"
W_MAP_DL = "attr-map-dl"
W_MAP = "attr-map"

# cache names (keys of ui.common.chart_cache and job labels)
CACHE_AGREEMENT = "attribution agreement"
CACHE_CURVES = "attribution curves"
JOB_INPUT = "attribution-input"
JOB_FAITH = "attribution-faithfulness"
KIND_FAITH = "Attribution faithfulness"  # the job's public kind (its measured speed)

MODEL_CHOICES = ("Example checkpoint", "The sidebar's model")
AGGREGATES = ("Each layer", "Through the layers")
FAITH_SOURCES = ("Held-out ABSA pairs", "Another corpus")
REMOVALS = {"Drop the words": "drop", "Mask the words": "mask"}
SIDEBAR_PAIR = "(the sidebar's second text)"


@dataclass(frozen=True)
class MapState:
    method: str
    aggregate: str
    layer: int  # 1-indexed


def set_layer(value: int) -> None:
    st.session_state[LAYER] = int(value)


def dims() -> tuple[int, int] | None:
    return st.session_state.get(DIMS)


def set_dims(n_layers: int, n: int) -> None:
    st.session_state[DIMS] = (int(n_layers), int(n))


def last_good():
    return st.session_state.get(LAST_GOOD)


def set_last_good(spec: str, result) -> None:
    st.session_state[LAST_GOOD] = (spec, result)


def views_state():
    """The map component's last reported state (a dict) or None."""
    return (st.session_state.get(VIEWS) or {}).get("state")


def faith_run():
    return st.session_state.get(FAITH_RUN)


def set_faith_run(value) -> None:
    st.session_state[FAITH_RUN] = value
