"""Drift: what fine-tuning changed in each head and layer, over a corpus. Every control is in
the URL (models by name, hub id or, locally, folder; corpus; head; statistic; thresholds;
gallery; tab), so a copied link opens the same view."""

from __future__ import annotations

import numpy as np
import streamlit as st

from analysis.drift import PATTERN_TYPES, DriftError, PatternThresholds
from analysis.core.cards import trained_of
from analysis.drift.reading import reading
from analysis.core.errors import DataError, InputError
from analysis.core.example import example_ready
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError
from ui.drift import blocks, precomputed, state
from ui.common.frame.corpus import corpus_name, corpus_picker, session_only_note
from ui.common.errors import plain, show_error
from ui.common.example import wait_for_example
from ui.common.frame.links import copy_link
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.server.settings import settings
from ui.common.frame.sidebar import context
from ui.common.frame.url_select import url_choice, url_selectbox


def render() -> None:
    """The page, top to bottom (pages/drift.py calls it on every run)."""
    Q = "query-params"
    st.title("Fine-tuning drift")
    st.caption(glossed(
        "What fine-tuning changed, head by head and layer by layer, over a corpus: cosine "
        "similarity of each head's attention maps before vs after (Kovaleva et al. 2019), "
        "layerwise RSA (Merchant et al. 2020) and linear CKA (Kornblith et al. 2019), the drift of "
        "attention to [CLS]/[SEP]/punctuation, and Kovaleva's pattern types."
    ))
    ctx = context()

    before_spec, after_spec = blocks.before_after_models(ctx.spec, ctx.loaded.name)
    dataset = corpus_picker(state.CORPUS, labels=True)
    copy_link(state.COPY, note=session_only_note(state.CORPUS))
    # empty, the after model is the example; while it is built the page says what it will show
    if not after_spec or (after_spec == EXAMPLE_SPEC and not example_ready()):
        st.info(
            "This page compares a model before and after fine-tuning, over a corpus: which heads "
            "changed most, how far each layer's representations moved, and which attention "
            "patterns came and went. It opens on the embedded model against the example "
            "checkpoint: the same model fine-tuned to find the aspects of restaurant reviews "
            "(food, service, price...) and their sentiment. You can also enter another fine-tuned "
            "model above, or fine-tune one on the Aspect heads page.", icon=":material/info:")
        if not settings().demo:
            with st.expander("For local users: compare your own checkpoint"):
                st.markdown(
                    "Enter a local folder (with config.json and weights) or a hub id as the after "
                    "model. To make one from the command line: `python -m analysis aspects "
                    "finetune --data FILE --task qa_m --out DIR`, then enter DIR.")
        if wait_for_example():  # built meanwhile (a background build reruns the page itself)
            st.rerun()
        if not after_spec or after_spec == EXAMPLE_SPEC:
            precomputed.show_for(before_spec, dataset)  # the example's, meanwhile (issue 49)
        st.stop()
    if dataset is None:
        st.stop()

    try:
        before, after = blocks.model_pair(before_spec, after_spec)
        result = blocks.drift_result(before, after, dataset)
        rkey = blocks.result_key(before, after, dataset)  # the charts are built once per result
    except (ModelLoadError, DriftError, DataError, InputError) as exc:
        # in demo mode both models are the host's: their specs (maybe folders) stay unsaid
        show_error("One of the models is not available right now." if settings().demo
                   and isinstance(exc, ModelLoadError) else exc)
        st.stop()

    # ---------------------------------------------------------------------------------------------
    # Summary

    L, H = result.n_layers, result.n_heads
    cos = result.cosine
    if result.identical or result.all_ones:
        st.info(result.summary(), icon=":material/info:")
    else:
        st.success(result.summary(), icon=":material/compare_arrows:")
    for note in result.notices:
        st.caption(note)
    trained = trained_of(after)  # what the after model's fine-tune trained (its card)
    st.caption(f"After model: {trained.words()}.")
    lo = np.unravel_index(int(np.argmin(cos)), cos.shape)
    numbers = {"Examples": str(result.n_examples), "Tokens": str(int(result.n_tokens.sum())),
               "Mean head cosine": f"{cos.mean():.3f}",
               "Most changed head": f"{lo[0] + 1}-{lo[1] + 1}",
               "RSA, last layer": f"{result.rsa[-1]:.3f}",
               "CKA, last layer": f"{result.cka[-1]:.3f}"}
    for row in (list(numbers.items())[:3], list(numbers.items())[3:]):
        for col, (label, value) in zip(st.columns(3), row):
            col.metric(label, value,
                       f"cosine {cos[lo]:.3f}" if label == "Most changed head" else None,
                       delta_color="off", delta_arrow="off")

    reading_box = st.container()  # filled once the pattern thresholds (in their tab) are read
    source = dict(loaded=before, data=corpus_name(state.CORPUS, dataset), page="Fine-tuning drift",
                  url_path="drift", settings={"before": before.name, "after": after.name,
                                              "after model's fine-tuning": trained.words()})
    tab_heads, tab_layers, tab_noop, tab_patterns, tab_labels = st.tabs(
        ["Heads: cosine", "Layers: RSA and CKA", "No-op drift", "Pattern types", "By label"],
        key=state.TAB, bind=Q)

    with tab_patterns:
        st.subheader("Pattern types (Kovaleva et al. 2019)")
        explain("Every attention map gets three scores: **vertical** (how much lands on "
                "[CLS]/[SEP], "
                "the vertical pattern), **diagonal** (how much stays on the token or its "
                "neighbours) and **block** (how evenly it spreads within its own sentence). The "
                "sliders turn the scores into a type; move them to see how the shares respond.")
        s = st.columns(4)
        thr = PatternThresholds(
            vertical=s[0].slider("vertical >=", 0.0, 1.0, 0.5, 0.05, key=state.THRESHOLD_VERTICAL,
                                 bind=Q),
            diagonal=s[1].slider("diagonal >=", 0.0, 1.0, 0.5, 0.05, key=state.THRESHOLD_DIAGONAL,
                                 bind=Q),
            mixed=s[2].slider("both (vertical+diagonal) >=", 0.0, 1.0, 0.3, 0.05,
                              key=state.THRESHOLD_MIXED, bind=Q),
            block=s[3].slider("block >=", 0.0, 1.0, 0.6, 0.05, key=state.THRESHOLD_BLOCK, bind=Q),
        )
        st.markdown("\n".join(f"{k + 1}. {line}" for k, line in enumerate(thr.describe())))
        shares_chart = blocks.pattern_moves(result, thr, rkey)
        add_button("Share of maps per pattern type", state.ADD_PATTERNS, chart=shares_chart,
                   settings={**source["settings"], "thresholds": str(thr)},
                   **{k: v for k, v in source.items() if k != "settings"})
        g1, g2 = st.columns(2)
        pattern = g1.selectbox("Gallery: type", list(PATTERN_TYPES), key=state.GALLERY_TYPE, bind=Q)
        which = g2.radio("Maps of", blocks.MODELS, key=state.GALLERY_MODEL, horizontal=True, bind=Q)
        blocks.pattern_gallery(result, before, after, which, pattern, thr, rkey)

    lines = reading(result, thr, trained=trained)
    with reading_box:
        st.subheader("Reading")
        st.markdown(glossed("\n".join(f"- {plain(line)}" for line in lines)))
        add_button("Fine-tuning drift: the reading", state.ADD_READING, reading=lines,
                   numbers=numbers, **source)
        if not (result.identical or result.all_ones):
            blocks.layer_table(result)

    with tab_heads:
        st.subheader("Per-head cosine similarity, before vs after")
        explain("Each square is one attention head (rows: layers, columns: heads). Its colour is "
                "how alike the head's attention maps are before and after fine-tuning, as a cosine "
                "similarity averaged over the corpus: 1 means unchanged, lower means the head "
                "changed more. Click a square to look at that head below.")
        grid = blocks.cosine_grid(result, rkey)
        add_button("Cosine similarity per head, before vs after", state.ADD_COSINE, chart=grid,
                   numbers=numbers, **source)
        st.subheader("One head")
        p1, p2 = st.columns(2)
        # the most changed head by default: bound by url_choice (a link to layer or head 1 keeps it)
        layer = int(url_choice(p1, "Layer", list(range(1, L + 1)), key=state.LAYER,
                               default=int(lo[0]) + 1, follows=rkey))
        head = int(url_choice(p2, "Head", list(range(1, H + 1)), key=state.HEAD,
                              default=int(lo[1]) + 1, follows=rkey))
        order = blocks.head_examples(result, before.spec, layer, head, rkey)
        per_ex = result.cosine_examples[:, layer - 1, head - 1]
        shown = [int(i) for i in order[: min(len(order), 200)]]
        # the link keeps the example's index in the corpus, not its label (a number and a text)
        choice = url_selectbox(
            st, "Example (most changed first)", shown, key=state.EXAMPLE,
            format_func=lambda i: f"{per_ex[i]:.3f}  {result.texts[i][:90]}")
        blocks.head_maps(*blocks.example_maps(before, after, result, choice), choice, layer, head,
                         rkey)

    with tab_layers:
        st.subheader("Layerwise representation similarity")
        explain("How alike the two models' internal representations are at each layer (layer 0 "
                "is the embeddings). RSA compares which token pairs each model finds alike; CKA "
                "compares the representations over the whole corpus. 1 = the same; lower = the "
                "layer changed more.")
        rep_chart, rep_df = blocks.representation(result, rkey)
        add_button("RSA and linear CKA per layer", state.ADD_REPRESENTATION, chart=rep_chart,
                   **source)

    with tab_noop:
        st.subheader("No-op drift")
        explain("The change, after minus before fine-tuning, in how much attention each head puts "
                "on [CLS], [SEP] or punctuation. Red squares put more there after fine-tuning: a "
                "move towards the vertical pattern, often a no-op resting place.")
        kind = st.radio("Statistic", list(blocks.KINDS), format_func=blocks.KINDS.get,
                        key=state.NOOP_KIND,
                        horizontal=True, bind=Q)
        blocks.noop_drift(result, kind, rkey)

    with tab_labels:
        st.subheader("Split by label and by prediction")
        explain("The cosine similarity again, averaged separately over the examples of each gold "
                "label, and over the examples the fine-tuned model gets right or wrong: did "
                "fine-tuning change the heads more for some kinds of example?")
        blocks.groups(result, rkey)
