"""The Syntax page's state, named once: its widget keys (those bound to the URL are its
parameters), the markers that reset a widget when what it depends on changes
(:func:`reset_for`), the set of trained probe settings, and its job keys."""

from __future__ import annotations

import streamlit as st

from ui.common.frame.models import SecondModel
from ui.common.frame.state import CorpusKeys

TREEBANK = CorpusKeys("syntax")   # the treebank picker: syntax_source, syntax_max, ...
COPY = "syntax_copy"
TAB = "syntax_tab"
TABLE = "syntax_table"
JSON = "syntax_json"
RELATION = "syntax_rel"
DIRECTION = "syntax_dir"
GRID = "syntax_grid"
LAYER = "syntax_layer"
HEAD = "syntax_head"
MIN_COUNT = "syntax_min"
EXAMPLE = "syntax_example"
HEAD_VIEW = "syntax_head_view"
RANK = "syntax_rank"
TRAIN = "syntax_train"
PROBE_JSON = "syntax_probe_json"
TREE = "syntax_tree"              # the probe tree block: syntax_tree_layer, syntax_tree_sentence
PROBES_DOWNLOAD = "dl-syntax-probes"
COMPARE_TABLE = "syntax_compare_table"
DIFFERENCE_DOWNLOAD = "dl-syntax-diff"
TRAIN_BOTH = "syntax_train_both"
PROBES_BOTH_DOWNLOAD = "dl-syntax-pboth"
AFTER = "syntax_after"            # the second model's box
AFTER_NAME = "syntax_after_name"  # demo mode: its select box
# -- session only ----------------------------------------------------------------------------------
PROBED = "syntax_probed"          # the (models, treebank, rank) whose probes were asked for
DIRECTION_FOR = "_syntax_dir_for"
PICK_FOR = "_syntax_pick_for"
MIN_COUNT_FOR = "_syntax_min_for"
EXAMPLE_FOR = "_syntax_example_for"

SECOND_MODEL = SecondModel(
    key=AFTER, demo_key=AFTER_NAME,
    label="Second model: the fine-tuned checkpoint (model name, hub id or folder)",
    demo_label="Second model (fine-tuned)",
    placeholder="example, or /path/to/fine-tuned-checkpoint",
    help="'example' is the ABSA example checkpoint (the default model fine-tuned on the "
         "bundled restaurant sample). Any encoder works: both models read the same words.",
    empty_is_example=False)


def tree_keys(key: str) -> tuple[str, str]:
    """The probe tree block's layer and sentence keys."""
    return f"{key}_layer", f"{key}_sentence"


def probed() -> set:
    """The probe settings trained (or asked for) in this session."""
    return st.session_state.setdefault(PROBED, set())


def pick_head(layer: int, head: int) -> None:
    st.session_state[LAYER], st.session_state[HEAD] = int(layer), int(head)


def chart_pick(chart_key: str) -> tuple[int, int] | None:
    """The head a click on the chart ``chart_key`` picked (1-based), if any."""
    event = st.session_state.get(chart_key)
    points = (event or {}).get("selection", {}).get("pick", []) if event else []
    return (int(points[0]["layer"]), int(points[0]["head"])) if points else None


def hf_name() -> str:
    return str(st.session_state.get(TREEBANK.hf_name) or "")


def reset_for(marker: str, value, widgets: dict) -> None:
    """Set ``widgets`` (key -> value) whenever ``value`` (what they depend on) changes; on the
    session's first run the values a link carries win."""
    previous = st.session_state.get(marker)
    if previous == value:
        return
    st.session_state[marker] = value
    for key, default in widgets.items():
        if previous is None and key in st.query_params:
            continue
        st.session_state[key] = default

# -- chart download and "Add to report" keys -------------------------------------------------
ADD_READING = "syntax-reading"
ADD_TABLE = "syntax-table"
ADD_GRID = "syntax-grid"
ADD_PROBES = "syntax-probes"


# -- keys with a part: TEMPLATE.format(part) -----------------------------------------------
JOB_HEADS, JOB_PROBES = "syntax-heads-{}", "syntax-probes-{}"
DOWNLOAD_OF = "dl-{}"
