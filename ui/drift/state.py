"""The Fine-tuning drift page's state, named once: its widget keys (every one bound to the URL,
so these are also its URL parameters), the picked head (``drift_layer``/``drift_head``, set by
the page's select boxes and by a click on the cosine grid) and its job and chart keys."""

from __future__ import annotations

import streamlit as st

from ui.common.frame.models import SecondModel
from ui.common.frame.state import CorpusKeys

CORPUS = CorpusKeys("drift")
BEFORE = "drift_before"            # outside demo mode: the before box
BEFORE_NAME = "drift_before_name"  # demo mode: the before select box
AFTER = "drift_after"              # the after model (a box, or a select box in demo mode)
URL_CHECKED = "_drift_url_checked"  # the first run's check of a link's after model is done
COPY = "drift_copy"
TAB = "drift_tab"
THRESHOLD_VERTICAL = "drift_t_vertical"
THRESHOLD_DIAGONAL = "drift_t_diagonal"
THRESHOLD_MIXED = "drift_t_mixed"
THRESHOLD_BLOCK = "drift_t_block"
GALLERY_TYPE = "drift_gallery_type"
GALLERY_MODEL = "drift_gallery_model"
LAYER = "drift_layer"
HEAD = "drift_head"
EXAMPLE = "drift_example"
NOOP_KIND = "drift_noop_kind"
COSINE_CHART = "drift_cos_chart"  # the cosine grid's selection event
LOW_TABLE = "drift_low_table"
REPRESENTATION_TABLE = "drift_rep_table"
MOVES_TABLE = "drift_moves_table"
LAYER_TABLE = "drift_layer_table"

AFTER_HELP = ("A checkpoint of the same architecture and tokenizer as the before model: a name "
              "from the model list, a hub id or a folder. Empty: the example checkpoint (the "
              "embedded model fine-tuned on the bundled ABSA sample) once it is built.")
# the after box: empty = the example checkpoint; in demo mode a select box under the same key
AFTER_MODEL = SecondModel(AFTER, AFTER, "After: the fine-tuned checkpoint (model name, hub id "
                          "or folder)", "After: the fine-tuned model",
                          "empty: the example checkpoint", AFTER_HELP)


def pick_head(layer: int, head: int) -> None:
    """Show head ``layer``-``head`` (1-based) in the select boxes."""
    st.session_state[LAYER], st.session_state[HEAD] = int(layer), int(head)


def cosine_pick() -> tuple[int, int] | None:
    """The head a click on the cosine grid picked (1-based), if any."""
    event = st.session_state.get(COSINE_CHART)
    points = (event or {}).get("selection", {}).get("pick", []) if event else []
    return (int(points[0]["layer"]), int(points[0]["head"])) if points else None

# -- chart download and "Add to report" keys -------------------------------------------------
ADD_PATTERNS = "drift-patterns"
ADD_READING = "drift-reading"
ADD_COSINE = "drift-cos"
ADD_REPRESENTATION = "drift-rep"
DOWNLOAD_COSINE = "dl-drift-cos"
DOWNLOAD_COSINE_LAYERS = "dl-drift-layer"
DOWNLOAD_DISTRIBUTION = "dl-drift-dist"
DOWNLOAD_REPRESENTATION = "dl-drift-rep"
DOWNLOAD_NOOP = "dl-drift-noop"
DOWNLOAD_NOOP_LAYERS = "dl-drift-noop-layers"
DOWNLOAD_SHARES = "dl-drift-share"


# -- keys with a part: TEMPLATE.format(part) -----------------------------------------------
JOB, GROUP_TABLE = "drift-{}", "drift_group_{}"
DOWNLOAD_MAP, DOWNLOAD_GROUP = "dl-drift-map-{}", "dl-drift-group-{}"
