"""Every session-state key, URL parameter and cache key of the Predictions page, named once.
Widgets bound to the URL use their key as the parameter's name, so a copied link opens the same
view: the classifier, the data (a Hugging Face dataset by name), the second model, the table's
filters and order, the selected row, the open tab, the edit's method and the counterfactual
kind (an upload and typed edits stay in the session)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from analysis.predictions.table import Filter

PREFIX = "predictions"
# widget keys = URL parameters
MODEL = "pred_model"  # Example checkpoint | Sidebar model
DATA = "pred_data"  # held-out sentences | upload | Hugging Face dataset
MAX = "pred_max"  # examples at most (ABSA: sentences)
HF_NAME, HF_SPLIT = "pred_hf_name", "pred_hf_split"
HF_TEXT, HF_PAIR, HF_LABEL = "pred_hf_text", "pred_hf_pair", "pred_hf_label"
COMPARE = "pred_compare"  # the second model
TAB = "pred_tab"
ROW = "pred_row"  # the selected row (its index in the data, 0-based)
ORDER = "pred_order"  # errors | disagreements | a column
DESCENDING = "pred_desc"
SLICE_METRIC = "pred_metric"  # the metric the slice chart shows
CHANGE_METRIC = "pred_change"  # the metric whose change between the two models is drawn
METHOD = "pred_method"  # the attribution method of Edit and compare
KIND = "pred_kind"  # the counterfactual kind of the robustness view
FILTER_PREFIX = "pf_"  # the table's filter: pf_label, pf_prediction, pf_outcome, ...
FILTER = {name: f"{FILTER_PREFIX}{name}" for name in Filter.__dataclass_fields__}
URL_KEYS = (MODEL, DATA, MAX, HF_NAME, HF_SPLIT, HF_TEXT, HF_PAIR, HF_LABEL, COMPARE, TAB, ROW,
            ORDER, DESCENDING, SLICE_METRIC, CHANGE_METRIC, METHOD, KIND, *FILTER.values())

# session-only keys
UPLOAD = "pred_upload"  # the uploaded data file
COMPARE_UPLOAD = "pred_compare_upload"  # the uploaded second checkpoint (.zip)
COMPARE_MODEL = "_pred_compare_model"  # (upload name, LoadedModel, card) of that checkpoint
EDIT_TEXT, EDIT_PAIR = "pred_edit_text", "pred_edit_pair"  # prefixes of the edit boxes
SUGGESTION = "pred_suggestion"  # prefix of the suggestion picker (per row)
COPY = "pred_copy"
TABLE = "pred_table"  # the table (its row selection)
CONFUSION = "pred_confusion"  # the confusion matrix (its cell selection)
JOB = "predictions-job"
JOB_EDIT = "predictions-edit"
JOB_UPLOAD = "predictions-upload"
KIND_JOB = "Predictions"  # the queue's public kind (its measured speed)
REPORT = "predictions"  # prefix of the Add to report buttons' keys
DOWNLOADS = "predictions-dl"

EXAMPLE, SIDEBAR = "Example checkpoint", "Sidebar model"
MODELS = [EXAMPLE, SIDEBAR]
SAMPLE, UPLOADED, HUB = "Held-out sentences", "Upload a file", "Hugging Face dataset"
DATAS = [SAMPLE, UPLOADED, HUB]
BEFORE, NO_COMPARE = "Before fine-tuning", "No second model"
OTHER_EXAMPLE, OTHER_SIDEBAR, OTHER_UPLOAD = ("Example checkpoint", "Sidebar model",
                                             "Uploaded checkpoint (.zip)")
COMPARES = [BEFORE, NO_COMPARE, OTHER_SIDEBAR, OTHER_EXAMPLE, OTHER_UPLOAD]
TABS = ["Table", "Metrics by slice", "Two models", "Edit and compare", "Robustness"]
ANY = ""  # a filter's "any" choice
OUTCOME_NAMES = {"all": "all", "wrong": "wrong", "right": "right",
                 "disagree": "the models disagree", "agree": "the models agree"}
ORDER_NAMES = {"errors": "errors first", "disagreements": "disagreements first",
               "loss": "loss", "confidence": "confidence", "tokens": "length", "row": "data order"}
DEFAULT_MAX = 2000  # examples (ABSA: sentences): the example's 33 held-out ones fit
TABLE_ROWS = 10_000  # rows drawn at most (the filter narrows them)


@dataclass(frozen=True)
class View:
    """The page's data and model choices as read this run."""

    model: str
    data: str
    max_examples: int
    compare: str


def upload():
    return st.session_state.get(UPLOAD)


def compare_model():
    return st.session_state.get(COMPARE_MODEL)


def set_compare_model(value) -> None:
    st.session_state[COMPARE_MODEL] = value


def set_row(row: int) -> None:
    st.session_state[ROW] = int(row)


def keep_row(default: int, n: int) -> None:
    """Before the row box is drawn: a link's row (when it is one of the ``n``), else the row
    kept in the session, else ``default`` (the first row of the table's order)."""
    if ROW in st.session_state and 0 <= int(st.session_state[ROW]) < n:
        return
    raw = str(st.query_params.get(ROW, ""))
    st.session_state[ROW] = int(raw) if raw.isdigit() and int(raw) < n else int(default)


def current_filter() -> Filter:
    """The table's filter from its widgets' values."""
    values = {}
    for name, key in FILTER.items():
        v = st.session_state.get(key)
        if v is not None:
            values[name] = int(v) if name.endswith("_tokens") else str(v)
    return Filter(**values)


def set_filter(**values) -> None:
    """Set the filter's widgets (before they are drawn: from a callback)."""
    for name, value in values.items():
        st.session_state[FILTER[name]] = value


def edit_keys(row: int, suggestion: int) -> tuple[str, str]:
    """The edit boxes' keys of row ``row`` and a suggestion (each gets boxes of its own)."""
    return f"{EDIT_TEXT}-{row}-{suggestion}", f"{EDIT_PAIR}-{row}-{suggestion}"


def suggestion_key(row: int) -> str:
    return f"{SUGGESTION}-{row}"


def download_key(name: str) -> str:
    return f"{DOWNLOADS}-{name}"


def job_key(result_key) -> str:
    return f"{JOB}-{abs(hash(result_key)) % 10 ** 8}"
