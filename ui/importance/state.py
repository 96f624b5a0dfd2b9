"""Every session-state key, URL parameter and cache key of the Head importance page, named
once. Widgets bound to the URL (``bind="query-params"``) use their key as the parameter's name,
so a copied link opens the same view."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

PREFIX = "importance"
# widget keys = URL parameters
MODEL = "importance_model"  # which classifier: the example or the sidebar's model
DATA = "importance_data"  # the held-out sentences of the bundled sample, or an upload
UPLOAD = "importance_upload"  # the uploaded file (never in the URL)
METHOD = "importance_method"  # uniform | mask
METRIC = "importance_metric"  # aspect_f1 | acc_4way | accuracy | loss
MAX = "importance_max"  # examples (ABSA: sentences)
TAB = "importance_tab"
SCOPE = "importance_scope"  # the held-out data set | one example
# one example (the per-example view; the Predictions page opens a row into it)
TEXT = "importance_text"  # the text (for an ABSA checkpoint: the review)
PAIR = "importance_pair"  # the optional second text (not with an aspect)
LABEL = "importance_label"  # the gold label (one of the classifier's labels)
ASPECT = "importance_aspect"  # the aspect category asked (ABSA checkpoints of QA-M / NLI-M)
MEASURE = "importance_measure"  # the per-example map's measure
ONE_JOB = "importance-one-job"  # the queue's job key prefix of one example
ONE_KIND = "Head importance, one example"  # its public kind (its measured speed)
ONE_TABLE = "importance-one-table"  # its table of the top heads
ONE_TOP = 10  # heads in that table (and every head that flips the answer)
LAYER = "importance_layer"  # 1-indexed, the head opened in the Attention page
HEAD = "importance_head"
COPY = "importance_copy"  # the Copy link button
JOB = "importance-job"  # the queue's job key prefix
KIND = "Head importance"  # the queue's public kind of the study (its measured speed)
REPORT = "importance"  # prefix of the Add to report buttons' keys
DOWNLOADS = "importance-dl"  # prefix of the charts' download buttons' keys
TABLE = "importance-table"  # the heads-beyond-the-interval table

SET, ONE = "Held-out data", "One example"
SCOPES = [SET, ONE]
EXAMPLE, SIDEBAR = "Example checkpoint", "Sidebar model"
MODELS = [EXAMPLE, SIDEBAR]
SAMPLE, UPLOADED = "Bundled sample (held-out sentences)", "Upload a file"
DATAS = [SAMPLE, UPLOADED]
METHODS = {"uniform": "uniform attention (Kovaleva)", "mask": "output zeroed (Michel)"}
METRIC_NAMES = {"aspect_f1": "aspect F1", "acc_4way": "4-way accuracy",
                "accuracy": "accuracy", "loss": "mean loss"}
FIRST_METRIC = "aspect_f1"  # the first score of ABSA data: the example's first view
EXAMPLE_DATA = "the example checkpoint's held-out sentences"  # a precomputed result's data
TABS = ["Map", "Layers", "Heads beyond the interval", "Pruning", "Gradient importance"]
DEFAULT_MAX = 40  # sentences of the sample: the example's 33 held-out ones fit
DEMO_MAX_HEADS = 144  # demo mode: models with more heads are refused (12 x 12)


@dataclass(frozen=True)
class View:
    """The page's controls as read this run (typed)."""

    model: str
    data: str
    method: str
    metric: str | None
    max_examples: int

    def cache_key(self, spec: str, stamp: str, data_key: str) -> tuple:
        """What a result is cached on (with the model's and the data's identity)."""
        return (PREFIX, spec, stamp, data_key, self.method, self.metric, self.max_examples)


def upload():
    """The uploaded file of this session (or None)."""
    return st.session_state.get(UPLOAD)


def set_head(layer: int, head: int) -> None:
    """Open head (layer, head), 1-indexed, in the head picker."""
    st.session_state[LAYER], st.session_state[HEAD] = int(layer), int(head)


def keep_metric_in(names) -> None:
    """A metric this data does not have (an old link) becomes its first."""
    if st.session_state.get(METRIC) not in names:
        st.session_state[METRIC] = names[0]


def is_first_visit(view: "View", first_metric: str) -> bool:
    """The view a first visit opens: the example on the sample's held-out sentences with the
    default method, the first score and the default number of examples."""
    return (view.model == EXAMPLE and view.data == SAMPLE and view.method == next(iter(METHODS))
            and view.metric == first_metric and view.max_examples == DEFAULT_MAX)


def download_key(name: str) -> str:
    """The download buttons' key of chart ``name``."""
    return f"{DOWNLOADS}-{name}"


def job_key(result_key, prefix: str = JOB) -> str:
    """The queue's job key for the run keyed by ``result_key`` (one job per distinct run)."""
    return f"{prefix}-{abs(hash(result_key)) % 10 ** 8}"


def given(key: str) -> bool:
    """Whether the session or the URL already holds ``key`` (a text box then shows that, not
    its default)."""
    return key in st.session_state or key in st.query_params
