"""Features: a sparse dictionary of what one layer represents (a top-k sparse autoencoder,
Gao et al. 2024), each feature's dashboard, a text's features token by token, and what
fine-tuning added (a crosscoder, Lindsey et al. 2024; Minder et al. 2025). Opens on the
example checkpoint with its dictionary already trained. docs/METHODS.md section 19."""

from __future__ import annotations

import streamlit as st

from analysis.core.encoding import encode
from analysis.core.errors import DataError, InputError
from analysis.features.browser import per_token
from analysis.features.data import EXAMPLE_LAYER, EXAMPLE_SETTINGS
from analysis.core.example import precomputed, precomputed_label
from analysis.features.precomputed import recipe_version
from analysis.features.reading import reading
from analysis.features.study import NAME
from analysis.core.forward import forward
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError
from ui.common.errors import plain, show_error
from ui.common.exports.export import chart_downloads, csv_download, json_download
from ui.common.exports.findings import add_button
from ui.common.frame.corpus import session_only_note
from ui.common.frame.explain import explain
from ui.common.frame.links import copy_link, folder_note
from ui.common.frame.sidebar import context
from ui.common.frame.url_select import url_choice, url_selectbox
from ui.features import blocks as B
from ui.features import compute as C
from ui.features import state as S

Q = "query-params"


def controls(n_layers: int) -> tuple[S.View, object]:
    """The view of the page's controls, and the picked corpus (data "corpus"; else None)."""
    c1, c2, c3 = st.columns(3)
    names = {v: "0 (embeddings)" if v == 0 else str(v) for v in range(n_layers + 1)}
    layer = url_selectbox(c1, "Layer", list(names), key=S.LAYER, format_func=names.get,
                          default=min(EXAMPLE_LAYER, n_layers),
                          help="The residual stream after this layer (hidden_states index).")
    data = url_selectbox(c2, "Corpus", list(S.DATAS), key=S.DATA, format_func=S.DATAS.get)
    compare = c3.toggle("Before and after (crosscoder)", value=True, key=S.COMPARE, bind=Q)
    dataset, fp = C.picked_corpus() if data == "corpus" else (None, "")
    with st.expander("Dictionary settings"):
        d1, d2, d3, d4 = st.columns(4)
        m = url_selectbox(d1, "Features (m)", S.M_CHOICES, key=S.M, default=0,
                          format_func=lambda v: "default" if v == 0 else str(v))
        k = url_selectbox(d2, "Kept per token (k)", S.K_CHOICES, key=S.K,
                          default=EXAMPLE_SETTINGS.k)
        epochs = url_selectbox(d3, "Epochs", S.EPOCH_CHOICES, key=S.EPOCHS,
                               default=EXAMPLE_SETTINGS.epochs)
        seed = int(d4.number_input("Seed", 0, 2 ** 31 - 1, 0, key=S.SEED, bind=Q))
    return S.View(int(layer), str(data), int(m), int(k), int(epochs), seed, bool(compare),
                  fp), dataset


def per_sentence(loaded, ctx, result, labels) -> None:
    """The sidebar's text coloured by the chosen feature, and every token's features."""
    try:
        enc = encode(loaded.tokenizer, ctx.text, ctx.pair, max_length=loaded.max_length)
        fw = forward(loaded.model, loaded.tokenizer, [enc], attentions=False,
                     hidden_states=True)
    except InputError as exc:
        show_error(exc)
        return
    sae = result.live.sae if result.live is not None else C.shipped(recipe_version())[1]
    view = per_token(sae, fw.hidden(0)[result.layer], enc.tokens)
    feature = int(st.session_state.get(S.FEATURE, 0) or 0)
    acts = [next((x["activation"] for x in f if x["feature"] == feature), 0.0)
            for f in view["features"]]
    st.html(B.CSS + "<p class='fx-item'>" + B.tokens_html(enc.tokens, acts, enc.special)
            + "</p>")
    st.caption(plain(f"Coloured by feature #{feature} ({labels[feature]}); pick another in "
                     "the Feature browser."))
    df = B.per_sentence_frame(view, labels)
    st.dataframe(df, hide_index=True, width="stretch")
    csv_download(lambda: df, "features_per_token.csv", S.DL.format("tokens"))


def render() -> None:
    st.title("Features")
    st.caption("A sparse dictionary of what one layer holds: each token's vector written as a "
               "few of many learned directions (features), each firing on something one can "
               "name; and, against the model before fine-tuning, what fine-tuning added.")
    ctx = context()
    choice = url_choice(st, "Model", S.MODELS, key=S.MODEL, widget="radio", horizontal=True)
    spec = EXAMPLE_SPEC if choice == S.EXAMPLE else ctx.spec
    explain("A sparse autoencoder (SAE) rewrites each token's vector at a layer as a sum of a "
            "few directions out of many (here at most k of m); each direction is a **feature**, "
            "and a good one fires on tokens that share something: a part of speech, an aspect "
            "word, a sentiment. The quality numbers say how faithful the rewrite is: the share "
            "of the vectors' variation it rebuilds on text it never saw, and whether the model "
            "still answers the same with the layer swapped for the rewrite. A **crosscoder** "
            "learns one dictionary for two models at once: a feature whose direction exists "
            "only in the fine-tuned model is a candidate for what fine-tuning added, once a "
            "check (Latent Scaling) rules out training artefacts.")
    pre, _ = C.shipped(recipe_version()) if spec == EXAMPLE_SPEC else (None, None)
    try:
        loaded, card = C.model(spec)
    except (InputError, DataError, ModelLoadError) as exc:
        if pre is None:
            show_error(exc)
            st.stop()
        loaded, missing = None, exc
    view, dataset = controls(loaded.n_layers if loaded is not None else pre.settings["n_layers"])
    copy_link(S.COPY, note=folder_note(spec) or (session_only_note(S.TEXT_CORPUS)
                                                 if view.data == "corpus" else None))
    if view.data == "corpus" and dataset is None:
        st.stop()  # the picker says what to do
    key = view.cache_key(spec, loaded.name if loaded else "", loaded.max_length if loaded
                         else 0)
    result = C.cached(key)
    default = C.is_example_default(spec, view)
    if result is None and default and pre is not None:
        result = pre
        st.caption(plain(precomputed_label(precomputed(NAME)) + " 'Compute live' opens every "
                         "feature."))
    if loaded is None:
        st.info(plain(f"{missing} Until then the page shows the precomputed example; the "
                      "per-sentence view and live results wait for the checkpoint."))
        if result is None:
            st.stop()
    elif st.button("Compute live" if default else "Train a dictionary", key=S.TRAIN,
                   icon=":material/model_training:") or (result is None and default):
        try:
            result = C.compute(spec, view, key, use_shipped=default, dataset=dataset)
        except (InputError, DataError, ModelLoadError) as exc:
            show_error(exc)
            st.stop()
    if result is None:
        st.info("Press 'Train a dictionary' to train one for this model, layer and corpus "
                "(about a minute for the bundled samples on two cores; a dictionary trained "
                "before on the same weights, corpus and settings is read from the disk cache).")
        st.stop()
    lines = reading(result)
    source = dict(loaded=loaded or None, page="Features", url_path="features",
                  data=result.corpus["name"], settings={"layer": str(result.layer),
                                                        "m": str(result.settings["m"]),
                                                        "k": str(result.settings["k"])})
    B.metrics(result.quality, result.settings["m"], result.settings["k"])
    B.corpus_line(result)
    st.subheader("Reading")
    st.markdown("\n".join(f"- {plain(line)}" for line in lines))
    add_button("Features: the reading", S.ADD.format("reading"), reading=lines,
               numbers={k: v for k, v in result.quality.items()
                        if isinstance(v, (int, float))}, **source)
    json_download(result.to_json, "features.json", S.JSON, "the result")
    for note in result.notes:
        st.caption(plain(note))
    tabs = st.tabs(S.TABS, key=S.TAB, bind=Q)
    labels = result.features["label"]
    with tabs[0]:
        sort = url_selectbox(st, "Sort features by", list(S.SORTS), key=S.SORT,
                             format_func=S.SORTS.get)
        df = B.features_frame(result, sort)
        shown = [int(f) for f in df["feature"] if result.features["freq"][int(f)] > 0]
        names = {f: f"#{f}: {labels[f]}" for f in shown}
        if not shown:
            st.info("No feature fires on this corpus.")
        else:
            feature = url_selectbox(st, "Feature", shown, key=S.FEATURE, format_func=names.get)
            B.show_dashboard(result, int(feature), source)
    with tabs[1]:
        explain("The sidebar's text, each token coloured by how strongly the chosen feature "
                "fires on it; the table lists every token's strongest features.")
        if loaded is None:
            st.info("The per-sentence view needs the model itself: it opens once the "
                    "checkpoint is built.")
        else:
            per_sentence(loaded, ctx, result, labels)
    with tabs[2]:
        cc = result.crosscoder
        if not cc:
            st.info("Switch 'Before and after' on (a checkpoint whose card names its base "
                    "model) to train the crosscoder.")
        else:
            chart = B.share_chart(cc)
            st.altair_chart(chart, width="stretch", key=S.CHART.format("shares"))
            chart_downloads(chart, "crosscoder_shares", key=S.DL.format("shares"),
                            df=B.latents_frame(cc))
            st.dataframe(B.latents_frame(cc), hide_index=True, width="stretch")
            st.caption("The latents leaning furthest towards the fine-tuned model (its own "
                       "alone where there are any), with their top contexts:")
            for x in [x for x in cc["latents"] if x.get("side", "after") == "after"][:4]:
                st.markdown(f"**Latent #{x['latent']}** ({x['class']}, share "
                            f"{100 * x['share']:.0f}%, {x['spurious'] or 'genuine'}): "
                            + plain(x["label"]))
                st.html(B.contexts_html(x["contexts"]))
            add_button("Features: before and after", S.ADD.format("diff"), chart=chart,
                       reading=lines[-3:], **source)
    with tabs[3]:
        df = B.features_frame(result, "frequency")
        st.dataframe(df, hide_index=True, width="stretch", height=360)
        csv_download(lambda: df, "features.csv", S.DL.format("all"))
