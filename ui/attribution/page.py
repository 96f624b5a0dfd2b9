"""Attribution: what the model used for its prediction, by seven methods beyond raw attention,
and which explanation this model's predictions follow (docs/METHODS.md section 11)."""

from __future__ import annotations

import json

import streamlit as st

from analysis.absa.example import example_ready
from analysis.absa.tasks import ASPECT_WORDS
from analysis.attribution import MIXING, NAMES, agreement, cost, \
    input_reading
from analysis.attribution.data import HELDOUT_NAME, dataset_examples, heldout_examples
from analysis.attribution.gradients import no_head_message
from analysis.core.errors import DataError, InputError
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError
from ui.attribution import state
from ui.attribution.blocks import (EXPLAIN, NO_EXAMPLE, ask_slow, corpus_faithfulness,
                                   explain_input, faith_cap, faith_expected, faith_help,
                                   has_task_head,
                                   map_block, page_model, prediction_text, slow_to_ask,
                                   sources)
from ui.attribution.views import (FALLS, agreement_chart, agreement_frame, coloured_rows,
                                  curves_chart, curves_frame, faithfulness_frame)
from ui.common.charts import side_by_side
from ui.common.frame.corpus import cap_widget, corpus_name, corpus_picker, fingerprint
from ui.common.exports.download import download_button
from ui.common.errors import plain, show_error
from ui.common.example import wait_for_example
from ui.common.exports.export import chart_downloads, json_download, json_help, json_label
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.common.frame.links import copy_link, folder_note
from ui.common.frame.sidebar import context
from ui.common.frame.url_select import url_selectbox


def render() -> None:
    """The page, top to bottom (pages/attribution.py calls it on every run)."""
    ctx = context()
    st.title("Attribution")
    st.caption("What did the model use for its prediction? Seven ways of answering, side by side, "
               "and a check of which one this model's predictions actually follow.")

    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    choice = c1.segmented_control("Model", state.MODEL_CHOICES, default=state.MODEL_CHOICES[0],
                                  key=state.MODEL, bind="query-params") or state.MODEL_CHOICES[0]
    ready = example_ready()
    try:
        loaded, note = page_model(choice, ctx, ready)
    except (ModelLoadError, InputError) as exc:  # InputError: a checkpoint's damaged card
        show_error(exc)
        st.stop()
    if note:
        st.info(plain(note), icon=":material/info:")
        if note == NO_EXAMPLE:
            wait_for_example()
    pair = ctx.pair
    if loaded.spec == EXAMPLE_SPEC:
        aspects = [*ASPECT_WORDS.values(), state.SIDEBAR_PAIR]
        aspect = c2.selectbox("Aspect", aspects, index=aspects.index("service"), key=state.ASPECT,
                              bind="query-params",
                              help="The example checkpoint reads the review (the sidebar's text) "
                                   "with one aspect word as the second text, as it was trained.")
        pair = ctx.pair if aspect == state.SIDEBAR_PAIR else aspect
    st.caption(plain(f"Model: {loaded.name} ({loaded.shape}). Review: the sidebar's text; "
                     f"second text: {pair if pair is not None else 'none'}."))
    copy_link(state.COPY, note=folder_note(ctx.spec))

    tab_input, tab_corpus = st.tabs(["This input", "Which explanation to trust"], key=state.TAB,
                                    bind="query-params")

    with tab_input:
        slow = {}
        try:
            slow = slow_to_ask(loaded, ctx.text, pair)
            result = explain_input(loaded, ctx.text, pair, cost.methods_to_hold(slow))
            state.set_last_good(loaded.spec, result)
        except InputError as exc:
            show_error(exc)
            last = state.last_good()
            if last is None or last[0] != loaded.spec:
                st.stop()
            result = last[1]
            st.caption("Showing the last input that worked.")
        for line in result.notes:
            st.info(plain(line), icon=":material/info:")
        if slow:
            ask_slow(loaded, ctx.text, pair, slow)
        source = sources(loaded, {"second text": pair or "none"})
        if result.prediction is not None:
            p1, p2 = st.columns([1, 3])
            label = result.prediction["label"]
            p1.metric("Prediction", plain(label),
                      f"{100 * result.prediction['probabilities'][label]:.1f}% sure",
                      delta_color="off")
            p2.caption("Probabilities: " + prediction_text(result))
        reading = input_reading(result)
        st.markdown(glossed(plain(reading)))
        add_button("Attribution: what the model used", state.W_READING, reading=[reading],
                   numbers={"prediction": prediction_text(result) or "no task head"}, **source)

        st.subheader("The input, coloured by each method")
        st.caption(glossed("Raw attention and the attention norms read the attention tables; "
                           "ALTI and value zeroing follow what each layer passes on; gradient x "
                           "input and integrated gradients follow the prediction back to the "
                           "words. The darker a word, the more the method says it mattered."))
        explain(EXPLAIN["text"])
        scores = {m: r.input for m, r in result.methods.items()}
        st.markdown(coloured_rows(result.tokens, result.special, scores), unsafe_allow_html=True)
        ig = result.methods.get("integrated_gradients")
        if ig is not None:
            st.caption(f"Integrated gradients, 50 steps: the words' scores add up to the change in "
                       f"the predicted probability from a blank input to within "
                       f"{ig.completeness_gap:.4f}.")

        st.subheader("How tokens mix, layer by layer")
        explain(EXPLAIN["map"])
        mixing = [m for m in MIXING if m in result.methods]
        m1, m2, m3 = st.columns([2, 2, 1], vertical_alignment="bottom")
        method = url_selectbox(m1, "Method", mixing, key=state.MAP_METHOD, default="alti",
                               format_func=lambda m: NAMES[m])
        aggregate = m2.segmented_control("Show", state.AGGREGATES, default=state.AGGREGATES[0],
                                         key=state.AGGREGATE, bind="query-params") \
            or state.AGGREGATES[0]
        n_layers = result.methods[method].layers.shape[0]
        # the last layer by default (also for a layer another model had and this one lacks): bound
        # by url_selectbox, so that a link to layer 1 keeps it
        layer = url_selectbox(m3, "Layer", list(range(1, n_layers + 1)), key=state.LAYER,
                              default=n_layers)
        map_block(result, method, aggregate, int(layer), source)

        st.subheader("Do the methods agree on this input?")
        explain(EXPLAIN["agreement"])
        names, rho = agreement(result)
        chart = agreement_chart(names, rho)
        side_by_side(chart, state.W_AGREE_CHART, narrow=agreement_chart(names, rho, phone=True))
        chart_downloads(chart, "attribution_agreement", state.W_AGREE_DL,
                        df=lambda: agreement_frame(names, rho))
        add_button("Attribution: agreement between methods", state.W_AGREE, chart=chart, **source)
        download_button(json_label("every method's numbers"),
                        lambda: json.dumps(result.to_json()),
                        "attribution.json", "application/json", state.W_JSON,
                        help=json_help("python -m analysis attribution"))

    with tab_corpus:
        explain(EXPLAIN["faithfulness"])
        if not has_task_head(loaded.model):
            st.info(plain(no_head_message(loaded.name)), icon=":material/info:")
            st.stop()
        f1, f2, f3 = st.columns([2, 1.2, 1.6], vertical_alignment="bottom")
        where = f1.segmented_control("Sentences", state.FAITH_SOURCES,
                                     default=state.FAITH_SOURCES[0], key=state.FAITH_DATA,
                                     bind="query-params") or state.FAITH_SOURCES[0]
        default, maximum = faith_cap()
        cap = cap_widget(f2, state.FAITH_MAX, "Examples (at most)", default, maximum, 10, bind=True,
                         help=faith_help())
        removal = f3.radio("Removal", list(state.REMOVALS), key=state.REMOVAL,
                           bind="query-params", horizontal=True,
                           help="Drop the words from the input, or put the mask token in their "
                                "place.")
        try:
            if where == state.FAITH_SOURCES[0]:
                texts, pairs, notes = heldout_examples(cap)
                data_name, fp = f"{HELDOUT_NAME}, {len(texts)} pairs", f"heldout-{len(texts)}"
            else:
                dataset = corpus_picker(state.CORPUS, default_cap=cap, max_cap=maximum)
                if dataset is None:
                    st.stop()
                texts, pairs, notes = dataset_examples(dataset, cap)
                data_name, fp = corpus_name(state.CORPUS, dataset), fingerprint(dataset)
        except (DataError, InputError) as exc:
            show_error(exc)
            st.stop()
        for line in notes:
            st.caption(plain(line))
        run_key = (loaded.spec, fp, len(texts), removal)
        if st.button("Measure faithfulness", key=state.W_FAITH_RUN, type="primary",
                     icon=":material/play_arrow:"):
            state.set_faith_run(run_key)
        if state.faith_run() != run_key:
            st.caption(plain(
                f"Press the button to explain {len(texts)} examples by every method and remove "
                "their words (queued with other heavy work on this server): "
                + faith_expected(loaded, fp, texts, pairs) + "."))
            st.stop()
        try:
            faith = corpus_faithfulness(loaded, fp, texts, pairs, state.REMOVALS[removal])
        except (DataError, InputError) as exc:
            show_error(exc)
            st.stop()
        data = faith.to_json()
        fsource = sources(loaded, {"removal": removal, "examples": faith.n_examples}, data_name)
        st.markdown(plain(data["reading"]))
        add_button("Attribution: which explanation to trust", state.W_FAITH_READING,
                   reading=[data["reading"]], **fsource)
        for line in faith.notes:
            st.caption(plain(line))
        table = faithfulness_frame(faith)
        st.dataframe(table, hide_index=True, width="stretch", column_config={
            c: st.column_config.NumberColumn(format="%.1f") for c in FALLS.values()})
        add_button("Attribution: faithfulness table", state.W_FAITH_TABLE, df=table, **fsource)
        curves = curves_chart(faith)
        # the two measures; one under the other on a phone
        side_by_side(curves, state.W_CURVES_CHART)
        chart_downloads(curves, "attribution_faithfulness", state.W_CURVES_DL,
                        df=lambda: curves_frame(faith))
        add_button("Attribution: comprehensiveness and sufficiency curves", state.W_CURVES,
                   chart=curves, **fsource)
        json_download(data, "faithfulness.json", state.W_FAITH_JSON, "the faithfulness numbers")
