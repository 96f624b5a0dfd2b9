"""The Attribution page's computations and blocks: which model (the example checkpoint with
its classifier head, else the sidebar's model), one input's attributions and the corpus
faithfulness (both cached, heavy work through the server-wide queue ``ui.common.jobs``, tokens
and examples capped in demo mode), the map of a method, the report helpers (docs/METHODS.md
section 11)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from analysis.attention.views import heatmap_payload, views_payload
from analysis.attribution import NAMES, cost
from analysis.attribution.run import check_methods
from analysis.attribution.study import FAITHFULNESS, STUDY, FaithfulnessInputs, Inputs
from analysis.attribution.gradients import has_task_head
from analysis.core.models import EXAMPLE_SPEC, checkpoint_stamp
from ui.common.attention.views import attention_views
from ui.attribution import state
from ui.common.chart_cache import show
from ui.common.charts import attention_heatmap, map_frame
from ui.common.errors import plain
from ui.common.exports.export import EXPORT_MAX_ROWS, blocks_chart, map_downloads
from ui.common.exports.findings import add_button
from ui.common.jobs import SHORT, job_queue, measured_words, run_job
from ui.common.frame.resources import check_listed, get_classifier, get_headed
from ui.server.settings import settings

LONG_INPUT = 96  # above this many tokens the map is drawn on the component's canvas
NO_EXAMPLE = ("Until the example checkpoint is ready, this page shows the sidebar's "
              "model. Gradient methods (gradient x input, integrated gradients) need a "
              "fine-tuned model with a classification head; the mixing methods work on any "
              "model.")
NOT_LISTED = ("This server does not offer the example checkpoint, so this page shows the "
              "sidebar's model.")
EXPLAIN = {
    "text": "Each row is one way of asking *which words did the model use?* The darker a word, "
            "the more that method says it mattered for the [CLS] token, which the classifier "
            "reads (hover a word for its number). Raw attention counts only the attention "
            "weights; the norm-based methods also weigh how much each word passes on; ALTI "
            "and value zeroing follow each word through the residual connections and layer "
            "norms of every layer; the two gradient methods ask how the predicted "
            "probability changes with each word (red: a word that speaks against it).",
    "map": "The map shows, for one method, how much each token (row) draws from each token "
           "(column) in one layer, or through all layers up to it (rollout). Rows sum to 1. "
           "Pick the layer with the Layer box; on a long input, drag over the map to zoom.",
    "agreement": "How similarly two methods rank the words of this input: 1 is the same "
                 "order, 0 unrelated, -1 reversed (Spearman rank correlation).",
    "faithfulness": "Which explanation to trust? For every sentence the words a method ranks "
                    "highest are removed (comprehensiveness: does the prediction fall?) or kept "
                    "alone (sufficiency: does it survive?), at 1 to 50% of the words; a "
                    "faithful method makes the prediction fall most when its words go, and "
                    "keeps it with its words alone. Leave-one-out compares a method's ranking "
                    "with the fall when each single word is dropped. A random ranking is the "
                    "baseline; the intervals are bootstrap 95% intervals.",
}


# ---------------------------------------------------------------------------------------------
# The model


def page_model(choice: str, ctx, example_ready: bool):
    """(loaded, note or None): the example checkpoint with its head when chosen and built,
    else the sidebar's model (with its head when it is a fine-tuned classifier)."""
    listed = settings().model_name(EXAMPLE_SPEC) is not None or not settings().demo
    if choice == state.MODEL_CHOICES[0] and example_ready and listed:
        check_listed(EXAMPLE_SPEC)
        return get_classifier(EXAMPLE_SPEC)[0], None  # the copy every page shares
    note = (NO_EXAMPLE if listed else NOT_LISTED) if choice == state.MODEL_CHOICES[0] else None
    headed = get_headed(ctx.spec)  # the copy every page shares; None: no task head
    return (ctx.loaded if headed is None else headed[0]), note


def token_cap(loaded) -> int:
    return int(settings().cap("max_tokens", min(512, loaded.max_length)))


# ---------------------------------------------------------------------------------------------
# Computations (cached; heavy work waits its turn in the queue)


@st.cache_resource(max_entries=8, show_spinner=False)
def _estimate(spec: str, stamp: str, text: str, pair: str | None, max_tokens: int, _loaded
              ) -> dict[str, float]:
    return cost.estimate_input(_loaded, text, pair, max_tokens)


def slow_to_ask(loaded, text: str, pair: str | None) -> dict[str, float]:
    """{method: estimated seconds} of the methods that would take longer than
    ``cost.SLOW_AFTER_SECONDS`` on this input, unless the visitor chose to run them for it
    (InputError for an input attribution refuses)."""
    if st.session_state.get(state.RUN_SLOW) == (loaded.spec, text, pair):
        return {}
    est = _estimate(loaded.spec, checkpoint_stamp(loaded.spec), text, pair, token_cap(loaded),
                    loaded)
    return cost.slow_methods(est, cost.SLOW_AFTER_SECONDS)


def ask_slow(loaded, text: str, pair: str | None, slow: dict[str, float]) -> None:
    """Say how long the held-back methods would take and offer to run them."""
    names = " and ".join(NAMES[m] for m in slow)
    total = cost.duration_words(sum(slow.values()))
    extra = (" (gradient x input waits with it: one pass computes both)"
             if "integrated_gradients" in slow else "")
    st.info(plain(f"{names} would take {total} on this input on this server, so they have not "
                  f"been started{extra}. The other methods are shown below."),
            icon=":material/schedule:")
    if st.button(f"Run {names} too ({total})", key=state.W_RUN_SLOW):
        st.session_state[state.RUN_SLOW] = (loaded.spec, text, pair)
        st.rerun()


@st.cache_resource(max_entries=8, show_spinner=False)
def _explain(spec: str, stamp: str, text: str, pair: str | None, max_tokens: int, _loaded,
             methods: tuple[str, ...] | None = None):
    work = STUDY.plan(Inputs(spec, text, pair, methods, max_tokens=max_tokens), _loaded)
    # one input, bounded by the token cap: the short lane, behind no corpus job
    return run_job("Attribution", work, key=state.JOB_INPUT, lane=SHORT,
                   kind="Attribution of one input")


def explain_input(loaded, text: str, pair: str | None, hold: tuple[str, ...] = ()):
    """One input's :class:`analysis.attribution.Attribution` (InputError for bad input), by
    every method the model allows but those in ``hold``."""
    methods = None
    if hold:
        methods = tuple(m for m in check_methods(None, loaded) if m not in hold)
    return _explain(loaded.spec, checkpoint_stamp(loaded.spec), text, pair, token_cap(loaded),
                    loaded, methods)


@st.cache_data(max_entries=8, show_spinner=False)
def _faithfulness(spec: str, stamp: str, fingerprint: str, n: int, removal: str,
                  max_tokens: int, _loaded, _texts, _pairs):
    inputs = FaithfulnessInputs(spec, tuple(_texts), tuple(_pairs), removal=removal,
                                max_tokens=max_tokens, max_length=_loaded.max_length)
    # with DASHBOARD_RAY_ADDRESS: on the cluster (here if its workers cannot load the model)
    return run_job("Faithfulness", FAITHFULNESS.plan(inputs, _loaded), key=state.JOB_FAITH,
                   kind=state.KIND_FAITH, size=n, unit="examples")


@st.cache_resource(max_entries=8, show_spinner=False)
def _faith_seconds(spec: str, stamp: str, fingerprint: str, n: int, max_tokens: int, _loaded,
                   _texts, _pairs) -> float:
    return cost.estimate_faithfulness(_loaded, _texts, _pairs, max_tokens)


def faith_expected(loaded, fingerprint: str, texts, pairs) -> str:
    """How long the faithfulness run of ``texts`` should take here, in words: from this
    server's last runs when it measured some, else estimated from one timed forward."""
    per_example = job_queue().measured(state.KIND_FAITH)
    if per_example is not None:
        return (f"{cost.duration_words(per_example * len(texts))}, at this server's speed "
                "measured on its last runs")
    seconds = _faith_seconds(loaded.spec, checkpoint_stamp(loaded.spec), fingerprint,
                             len(texts), token_cap(loaded), loaded, list(texts), list(pairs))
    return (f"{cost.duration_words(seconds)} here, estimated from one timed pass of the model "
            "(longer while the server is busy)")


def faith_help() -> str:
    """The examples box's help: what each example costs, at this server's measured speed."""
    return ("Each example is explained by every method and then run again with words "
            "removed. " + measured_words(state.KIND_FAITH, "example"))


def corpus_faithfulness(loaded, fingerprint: str, texts, pairs, removal: str):
    return _faithfulness(loaded.spec, checkpoint_stamp(loaded.spec), fingerprint, len(texts),
                         removal, token_cap(loaded), loaded, list(texts), list(pairs))


def faith_cap(default: int = 40) -> tuple[int, int]:
    """(default, maximum) examples of a faithfulness run (demo: the gradient cap)."""
    maximum = int(settings().cap("max_gradient_examples", 2000))
    return min(default, maximum), maximum


# ---------------------------------------------------------------------------------------------
# The map of one method


def follow_component() -> None:
    """The map component reported a layer: the Layer box and the URL follow."""
    st_ = state.views_state()
    dims = state.dims()
    if not isinstance(st_, dict) or dims is None:
        return
    layer = st_.get("layer")
    if isinstance(layer, int) and 0 <= layer < dims[0]:
        state.set_layer(layer + 1)


def method_maps(result, method: str, aggregate: str) -> np.ndarray | None:
    r = result.methods.get(method)
    if r is None or r.layers is None:
        return None
    return r.rollout if aggregate == state.AGGREGATES[1] else r.layers


def map_block(result, method: str, aggregate: str, layer: int, source: dict) -> None:
    """Every layer of ``method`` in the attention component (layer switch in the browser; the
    canvas heatmap above LONG_INPUT tokens), else an Altair heatmap; downloads, Add to report."""
    maps = method_maps(result, method, aggregate)
    if maps is None:
        st.info("A gradient method scores the input words only; it has no per-layer map.",
                icon=":material/info:")
        return
    enc = result.encoding
    labels = list(result.tokens)
    L, n = maps.shape[0], maps.shape[1]
    state.set_dims(L, n)
    l0 = min(layer, L) - 1
    matrix = maps[l0]
    what = "through layers 1 to" if aggregate == state.AGGREGATES[1] else "layer"
    title = f"{NAMES[method]}: {what} {l0 + 1}"
    if n > LONG_INPUT:
        payload = views_payload(labels, maps[:, None], enc.segments, enc.special,
                                is_pair=enc.is_pair)
        payload["heatmap"] = heatmap_payload(labels, matrix, layer=l0, head=0)
        attention_views(payload, key=state.VIEWS, on_change=follow_component,
                        ui={"view": "heatmap", "layer": l0, "heads": None, "pin": None,
                            "segment": "All"})
        chart = blocks_chart(labels, matrix, title)
    else:
        chart = lambda: attention_heatmap(map_frame(labels, matrix), labels, title)  # noqa
        show(chart())  # at most its own width: its column's on a phone
    map_downloads(labels, matrix, title, f"attribution_{method}_L{l0 + 1}", state.W_MAP_DL)
    add_button(f"Attribution map: {title}", state.W_MAP,
               chart=chart if n * n <= EXPORT_MAX_ROWS or n > LONG_INPUT else None,
               caption=plain("Rows: the token being built; columns: the tokens it draws "
                             "from. Every row sums to 1."), **source)


def sources(loaded, page_settings: dict, data: str | None = None) -> dict:
    """The report's provenance arguments for this page."""
    out = dict(loaded=loaded, page="Attribution", url_path="attribution",
               settings=page_settings)
    if data:
        out["data"] = data
    return out


def prediction_text(result) -> str | None:
    if result.prediction is None:
        return None
    probs = result.prediction["probabilities"]
    return "; ".join(f"{plain(k)} {100 * v:.1f}%" for k, v in
                     sorted(probs.items(), key=lambda kv: -kv[1]))


def with_cap(loaded):
    """The model with the page's token cap as its ``max_length`` (a shallow copy)."""
    cap = token_cap(loaded)
    return loaded if cap == loaded.max_length else replace(loaded, max_length=cap)


__all__ = ["EXPLAIN", "page_model", "explain_input", "corpus_faithfulness", "map_block",
           "faith_cap", "sources", "prediction_text", "has_task_head", "with_cap"]
