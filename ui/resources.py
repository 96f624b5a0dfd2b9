"""Cached, shared resources. Models are loaded once per spec and shared by every page and
session: treat them as read-only (train a deep copy)."""

from __future__ import annotations

import streamlit as st

from analysis.models import LoadedModel, checkpoint_stamp, load_model


@st.cache_resource(show_spinner="Loading model...", max_entries=4)
def _load(spec: str, stamp: str) -> LoadedModel:
    return load_model(spec)


def get_model(spec: str) -> LoadedModel:
    """Load (once per spec) the tokenizer + encoder; raises ModelLoadError on failure. A local
    folder written again (a new checkpoint in the same place) is loaded anew."""
    return _load(spec, checkpoint_stamp(spec))
