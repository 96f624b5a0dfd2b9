"""Every session-state key, URL parameter and cache key of the Causal patching page, named
once. Widgets bound to the URL (``bind="query-params"``) use their key as the parameter's
name, so a copied link opens the same view (typed counterfactual text excepted)."""

from __future__ import annotations

PREFIX = "patching"
MODEL = "patching_model"
REVIEW = "patching_review"  # index of the held-out sentence
ASPECT = "patching_aspect"
KIND = "patching_kind"  # another aspect | opposite opinion | typed
SUGGESTION = "patching_suggestion"
DIRECTION = "patching_direction"
SCALE = "patching_scale"  # share of the logit difference | probability
TAB = "patching_tab"
LAYER = "patching_layer"
HEAD = "patching_head"
CONTRAST = "patching_contrast"  # corpus view: aspect | opinion
COPY = "patching_copy"
TEXT, PAIR = "patching_text", "patching_pair"  # typed input (sidebar models)
CTEXT, CPAIR = "patching_ctext", "patching_cpair"  # the counterfactual, editable
CORPUS = "patching_corpus_go"
JOB_PAIR = "patching-pair"
JOB_CORPUS = "patching-corpus"
KIND_PAIR = "Patching one pair"
KIND_CORPUS = "Patching the held-out pairs"
REPORT = "patching"

EXAMPLE, SIDEBAR = "Example checkpoint", "Sidebar model"
MODELS = [EXAMPLE, SIDEBAR]
KINDS = {"aspect": "Another aspect", "opinion": "Opposite opinion word", "typed": "Typed text"}
# each way in everyday words where it first shows (issue 49: "noising" went unexplained)
DIRECTIONS = {"noising": "Noising: the counterfactual's parts copied into the input's run",
              "denoising": "Denoising: the input's parts copied into the counterfactual's run"}
SCALES = {"share": "Share of the change", "probability": "Probability change"}
TABS = ["Heads", "Layers x positions", "Corpus view"]
SITE_NAMES = {"residual": "Residual stream after the layer", "attention": "Attention output",
              "mlp": "MLP output"}
CORPUS_ON = "patching_corpus_on"  # (contrast, direction) of the corpus view asked for


def counter_key(field: str, suffix: str) -> str:
    """The key of an editable counterfactual box (``field``: CTEXT or CPAIR) for one
    suggestion (a new suggestion gets a fresh box holding it)."""
    return f"{field}-{suffix}"


def download_key(name: str) -> str:
    """The download buttons' key of chart ``name``."""
    return f"{PREFIX}-dl-{name}"
