"""The Aspect heads page's state, named once: its widget keys (the URL parameters of those bound
to it), its session keys and its job keys, and :class:`ModelState`, what one model source holds
(model, card, found heads, causal check). One state per source, so switching sources loses
nothing; the shown one is also kept under :data:`MODEL`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

# -- widgets (bound to the URL where the page binds them) -------------------------------------
SOURCE = "ah_source"
TASK = "ah_task"
ORDER = "ah_order"
EPOCHS = "ah_epochs"
SEED = "ah_seed"
TRAIN = "ah_train"
FOLDER = "ah_folder"
LOAD = "ah_load"
COPY = "ah_copy"
DATA = "ah_data"
MAX_SENTENCES = "ah_max"
UPLOAD = "ah_upload"
UPLOAD_OPINIONS = "ah_upload_op"
SKIP = "ah_skip"
FIND = "ah_find"
TAB = "ah_tab"
CHART = "ah_chart_{}"  # a kind's before | after heatmap (format: the kind)
EXAMPLE_KIND = "ah_ekind"
EXAMPLE_HEAD = "ah_ehead"
EXAMPLE_PAIR = "ah_epair"
CAUSAL_KIND = "ah_ckind"
CAUSAL_K = "ah_k"
CAUSAL_RUN = "ah_causal_btn"
CAUSAL_TABLE = "ah_causal_tab"
HEAD_VIEW_MODEL = "ah_hv_model"
ZIP_DOWNLOAD = "ah_zip_dl"
SAVE_TO = "ah_save_to"
SAVE = "ah_save"

# -- session keys ------------------------------------------------------------------------------
MODEL = "ah_model"    # the shown source's ModelState (or None)
STATES = "ah_states"  # source -> ModelState
ZIP_GENERATION = "ah_zip_gen"

# -- jobs --------------------------------------------------------------------------------------
JOB_FINETUNE = "aspects-finetune"
JOB_HEADS = "aspects-heads"
JOB_CAUSAL = "aspects-causal"
JOB_UPLOAD = "aspects-upload"


@dataclass
class ModelState:
    """One model source's state: the fine-tuned model and its card, where it lives (``folder``:
    a folder or the spec "example"; None for one in memory), its base model's spec, the
    held-out evaluation pairs and training losses (when trained here), whether it is the
    example, the heads found (``disc``, on ``disc_data``) and the last causal check
    (``(kind, result)``)."""

    loaded: Any
    card: dict
    folder: str | None
    base: str
    eval: Any = None
    losses: list | None = None
    example: bool = False
    disc: dict | None = None
    disc_data: Any = None
    causal: tuple | None = None


def model_state(source: str) -> ModelState | None:
    """The state of ``source`` (None before it has a model); it becomes the shown one."""
    state = st.session_state.setdefault(STATES, {}).get(source)
    st.session_state[MODEL] = state
    return state


def set_model_state(source: str, state: ModelState) -> None:
    """``source``'s new model; it becomes the shown one."""
    st.session_state.setdefault(STATES, {})[source] = state
    st.session_state[MODEL] = state


def shown_model() -> ModelState | None:
    return st.session_state.get(MODEL)


def zip_key() -> str:
    """The upload box's key: a new one after each loaded .zip, so the upload is forgotten."""
    return f"ah_zip_{st.session_state.get(ZIP_GENERATION, 0)}"


def forget_zip() -> None:
    st.session_state[ZIP_GENERATION] = st.session_state.get(ZIP_GENERATION, 0) + 1

# -- chart download and "Add to report" keys -------------------------------------------------
ADD_READING = "ah-reading"
ADD_CAUSAL = "ah-causal"


# -- keys with a part: TEMPLATE.format(part) -----------------------------------------------
DOWNLOAD, TABLE_OF = "ah_dl_{}", "ah_tab_{}"
BASELINES_OF, HEAD_VIEW = "ah_base_{}", "ah_head_view_{}"
ADD_CHART, ADD_TABLE = "ah-chart-{}", "ah-table-{}"
