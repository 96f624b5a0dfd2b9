"""Every session key, URL parameter, widget key and job key of the Search page, named once
(the page and the blocks use these constants, never a string key of their own), and the link
that opens the page on a token and a layer (the Attention page's "find similar")."""

from __future__ import annotations

from urllib.parse import urlencode

from ui.common.frame.state import CorpusKeys
from ui.common.frame.links import input_params, spec_params

Q = "query-params"  # widgets bound to the URL: a copied link opens the same view

# Widgets bound to the URL (the key is the URL parameter)
CORPUS = "s_corpus"   # treebank | absa | ewt | text (the corpus picker's sources)
TOKEN = "s_token"     # the query piece's position in the sidebar's text ([CLS] = 0)
LAYER = "s_layer"     # 0 = the embeddings .. L
HEAD = "s_head"       # "layer" (the hidden states) or a head, 1-based
K = "s_k"             # matches shown
LABEL = "s_label"     # the label the histogram counts (upos | deprel | role | label)
N_SENTENCES = "s_n"   # sentences of the shared EWT dev file indexed
TEXT_CORPUS = CorpusKeys("s_text")  # the text corpus picker (sample, paste, upload, dataset)

# Widget keys that are not in the URL
COPY = "s_copy"
CHART = "s_chart"
DL_CHART = "dl-search-labels"
JSON = "s_json"

# "Add to report" keys
ADD = "search"

# Job keys (ui.common.jobs)
JOB_INDEX = "search-index"
JOB_KIND = "Search index"

DEFAULT_LAYER = 2
DEFAULT_K = 20
MAX_K = 200
WHOLE_LAYER = "layer"


def search_params(token: int, layer: int) -> dict:
    """The Search page's own URL parameters presetting the query piece and the layer."""
    return {TOKEN: int(token), LAYER: int(layer)}


def search_link(params: dict) -> str:
    """Relative URL of the Search page with ``params`` (the sidebar's model and text, and
    :func:`search_params`)."""
    return f"./search?{urlencode(params)}"


def find_similar_params(spec: str, text: str, pair: str | None, token: int, layer: int) -> dict:
    """Every URL parameter of the Search page opened on piece ``token`` of the input at
    ``layer``: the model (by its listed name, never a path in demo mode), the input, the piece
    and the layer."""
    return {**spec_params(spec), **input_params(text, pair), **search_params(token, layer)}
