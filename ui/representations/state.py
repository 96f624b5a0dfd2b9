"""Every session-state key, URL parameter and widget key of the Representations page, named
once (the page and the blocks use these constants, never a string key of their own)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui.common.frame.models import SecondModel

Q = "query-params"  # widgets bound to the URL: a copied link opens the same view

# Widgets bound to the URL (the key is the URL parameter)
METHOD = "rep_method"        # one input's projection: pca | aligned | tsne | umap
COLOUR = "rep_colour"        # one input's colouring: segment | special | role | upos
SOURCE = "rep_source"        # one input from: text (the sidebar's) | absa | treebank (samples)
EXAMPLE = "rep_example"      # the sample's review / sentence id (with SOURCE absa | treebank)
CATEGORY = "rep_category"    # the category the ABSA review is asked about
TOKEN = "rep_token"          # the token whose path across layers is drawn (0-based index)
AFTER = "rep_after"          # the second model (hub id, folder or "example"), outside demo
AFTER_NAME = "rep_after_name"  # the second model by its listed name, in demo mode
CORPUS = "rep_corpus"        # treebank | absa | sentiment (bundled) | ewt | upload
N_SENTENCES = "rep_n"        # sentences of the corpus part
CORPUS_METHOD = "rep_cmethod"  # the corpus scatter's projection: pca | tsne | umap
TAB = "rep_tab"              # One input | A corpus
UPLOAD = "rep_upload"        # the corpus file uploaded (session only: a link cannot carry it)

# Widget keys that are not in the URL
COPY = "rep_copy"
DL_INPUT = "dl-rep-input"
DL_SCATTER = "dl-rep-scatter"
DL_PROBES = "dl-rep-probes"
DL_GEOMETRY = "dl-rep-geometry"
JSON_INPUT = "rep_json_input"
JSON_CORPUS = "rep_json_corpus"
CHART_INPUT = "rep_chart_input"
CHART_SCATTER = "rep_chart_scatter"
PROBE_TABLE = "rep_probe_table"
CHART_PROBES = "rep_chart_probes"

# "Add to report" keys (ui.common.exports.findings.add_button prefixes them)
ADD_INPUT = "rep-input"
ADD_INPUT_READING = "rep-input-reading"
ADD_SCATTER = "rep-scatter"
ADD_PROBES = "rep-probes"
ADD_GEOMETRY = "rep-geometry"
ADD_CORPUS_READING = "rep-corpus-reading"

# Cache keys (job keys of ui.common.jobs.run_job)
JOB_INPUT = "representations-input"
JOB_CORPUS = "representations-corpus"

SECOND_MODEL = SecondModel(
    key=AFTER, demo_key=AFTER_NAME,
    label="Second model: the fine-tuned checkpoint (model name, hub id or folder)",
    demo_label="Second model (fine-tuned)",
    placeholder="example, or /path/to/fine-tuned-checkpoint",
    help="Shown beside the sidebar's model on the same tokens with the same projection. "
         "'example' is the ABSA example checkpoint (the embedded model fine-tuned on the "
         "bundled restaurant sample). It needs as many layers and vectors of the same size.",
    empty_is_example=False)

URL_PARAMS = (METHOD, COLOUR, SOURCE, EXAMPLE, CATEGORY, TOKEN, AFTER, AFTER_NAME, CORPUS,
              N_SENTENCES, CORPUS_METHOD, TAB)


@dataclass
class View:
    """The page's controls as read this run."""

    method: str = "pca"
    colour: str = "segment"
    source: str = "text"
    token: int = 0
    corpus: str = "treebank"
    n_sentences: int = 0
    corpus_method: str = "pca"


@dataclass(frozen=True)
class InputSource:
    """Where the one input comes from: the sidebar's text, or a sample's row (its id) and,
    for an ABSA review, the category asked about."""

    kind: str = "text"
    example: str = ""
    category: str = ""


def token_index(n_tokens: int) -> int:
    """The chosen token (clamped to the input; a bad URL value gives token 1, the first after
    [CLS])."""
    value = st.session_state.get(TOKEN, st.query_params.get(TOKEN))
    try:
        k = int(value)
    except (TypeError, ValueError):
        k = 1
    return max(0, min(n_tokens - 1, k))


def corpus_is_upload() -> bool:
    return st.session_state.get(CORPUS, st.query_params.get(CORPUS)) == "upload"


def set_default(key: str, value) -> None:
    """``value`` for ``key`` unless the session or the URL already has one."""
    if key not in st.session_state and key not in st.query_params:
        st.session_state[key] = value
