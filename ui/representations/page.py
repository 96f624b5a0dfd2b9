"""Representations: token vectors layer by layer (van Aken et al. 2019), before and after
fine-tuning, with per-layer linear probes, anisotropy and self-similarity (Ethayarajh 2019),
for the sidebar's model and a second checkpoint. docs/METHODS.md section 13."""

from __future__ import annotations

import streamlit as st

from analysis.core.cards import trained_of
from analysis.core.errors import DataError, InputError
from analysis.core.models import ModelLoadError
from analysis.representations import corpus_reading, input_reading
from analysis.representations.reading import colour_reading
from analysis.representations.projection import METHOD_NAMES
from analysis.representations.states import check_same_shape, encode_input
from ui.common.charts import side_by_side
from ui.common.frame.corpus import fit_narrow_screens
from ui.common.errors import plain, show_error
from ui.common.example import wait_for_example
from ui.common.exports.export import chart_downloads, json_download
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.common.frame.links import CANNOT_CARRY, copy_link, folder_note
from ui.common.frame.resources import get_model, token_capped
from ui.server.settings import settings
from ui.common.frame.sidebar import context
from ui.representations import blocks as B
from ui.representations import charts as C
from ui.representations import state as S


def render() -> None:
    """The page, top to bottom (pages/representations.py calls it on every run)."""
    ctx = context()
    loaded = ctx.loaded
    fit_narrow_screens()  # on a phone the side-by-side panels scroll sideways
    st.title("Representations")
    st.caption(glossed(
        f"{plain(loaded.name)}: how the vectors of every token move and group, layer by layer (0 "
        "= the embeddings), drawn in 2-D as VisBERT does (van Aken et al. 2019); the same tokens "
        "in a second checkpoint with the same projection, so the effect of fine-tuning shows; "
        "and over a corpus, linear probes per layer, anisotropy and self-similarity (Ethayarajh "
        "2019)."))

    after_spec = B.second_model_spec()
    copy_link(S.COPY, note=CANNOT_CARRY.format(what="an uploaded file")
              if S.corpus_is_upload() else None)
    compare = None
    if not after_spec:
        st.info("No second model: enter a fine-tuned checkpoint above to see it beside the "
                "sidebar's model ('example' is the example checkpoint once it is built; the box "
                "starts with it then).", icon=":material/info:")
        wait_for_example()
    else:
        note = folder_note(after_spec)
        if note:
            st.caption(plain(note))
        try:
            compare = get_model(after_spec)
            check_same_shape(loaded, compare)
        except (ModelLoadError, InputError) as exc:
            show_error("The second model is not available right now." if settings().demo
                       and isinstance(exc, ModelLoadError) else exc, prefix="Second model: ")
            compare = None
    names = [loaded.name] + ([compare.name] if compare is not None else [])
    report = dict(loaded=loaded, page="Representations", url_path="representations")

    tab_one, tab_corpus = st.tabs(["One input", "A corpus"], key=S.TAB, bind=S.Q)

    # -- one input --------------------------------------------------------------------------------
    with tab_one:
        explain("Inside the model every token is a long list of numbers (its hidden state) after "
                "each layer. Here each layer's token vectors are squeezed onto a flat map with "
                "PCA: "
                "tokens that sit close together have similar vectors at that layer. Move the layer "
                "slider under the chart to watch them regroup; the line follows one token through "
                "the layers. With PCA each layer has its own axes; the aligned view turns every "
                "layer onto the one before (Procrustes alignment), so the line's moves mean "
                "something. The second panel is the second model on the same tokens. Pick a review "
                "of the ABSA sample or a treebank sentence as the input to colour its tokens by "
                "their role or their part of speech.")
        src = B.input_source()
        try:
            one = token_capped(loaded)  # demo mode: at most max_tokens per input
            labelled = B.labelled_input(one, src)
            tokens = (labelled.encoder(one) if labelled is not None
                      else encode_input(one, ctx.text, ctx.pair)).tokens
            view = B.input_controls(tokens, src.kind)
            res = B.input_result(one, token_capped(compare) if compare is not None else None,
                                 ctx.text, ctx.pair, view.method, src)
        except (InputError, DataError) as exc:
            show_error(exc)
        else:
            for notice in res.notices:
                st.caption(plain(notice))
            lines = input_reading(res) + colour_reading(res, view.colour)
            st.markdown(glossed(B.reading_lines(lines)))
            built, picture, rows = C.input_chart(
                res, view.colour, view.token,
                key=B.input_key(one, compare, ctx.text, ctx.pair, view.method, src))
            side_by_side(built, S.CHART_INPUT)  # A | B, one under the other on a phone
            st.caption(f"{len(res.tokens)} tokens, {res.n_layers} layers. Hover a point for its "
                       "token in its sentence («marked»); the slider changes the layer without a "
                       "rerun.")
            chart_downloads(built.chart, "representations_input", key=S.DL_INPUT, df=rows)
            settings_ = {"projection": METHOD_NAMES[res.method], "models": " | ".join(names)}
            what = res.source or "the sidebar's text"
            add_button("Token vectors layer by layer", S.ADD_INPUT, chart=picture, reading=lines,
                       data=f"{what} ({len(res.tokens)} tokens)", settings=settings_,
                       **report)
            json_download(res.to_json, "representations_input.json", S.JSON_INPUT,
                            "every layer's points")

    # -- a corpus ---------------------------------------------------------------------------------
    with tab_corpus:
        explain("Many sentences at once. A linear probe is a simple classifier trained on one "
                "layer's vectors to guess each word's part of speech (UPOS), whether it names "
                "the aspect asked about, or (a labelled corpus) its sentence's label; its "
                "cross-validated accuracy per layer shows where that "
                "information is easiest to read, against the majority baseline; the band and the "
                "table's intervals are 95% bootstrap intervals over the sentences, and the reading "
                "calls a difference within noise when its interval covers 0. Anisotropy: how "
                "much all vectors point the same way; self-similarity: how much one word keeps its "
                "vector from sentence to sentence (lower = more shaped by its sentence).")
        cview, upload = B.corpus_controls()
        if cview.corpus == "upload" and upload is None:
            st.stop()
        try:
            cres = B.corpus_result(loaded, compare, cview, upload)
        except (InputError, DataError) as exc:
            show_error(exc)
            st.stop()
        for note in cres.notes:
            st.caption(plain(note))
        m = st.columns(3)
        m[0].metric("Sentences", cres.n_sentences)
        m[1].metric("Words", f"{cres.n_words:,}")
        m[2].metric("Layers", cres.n_layers, help="the embeddings and every encoder layer")
        trained = trained_of(compare) if compare is not None else None  # its fine-tune's card
        clines = corpus_reading(cres, trained=trained)
        st.subheader("Reading")
        st.markdown(glossed(B.reading_lines(clines)))
        data = f"{B.CORPORA[cview.corpus]} ({cres.n_sentences} sentences)"
        if upload is not None:
            data = f"{upload[1]} ({cres.n_sentences} sentences)"
        csettings = {"scatter": METHOD_NAMES[cview.corpus_method], "models": " | ".join(names)}
        if trained is not None:
            csettings["second model's fine-tuning"] = trained.words()
        add_button("Representations over a corpus: the reading", S.ADD_CORPUS_READING,
                   reading=clines, data=data, settings=csettings, **report)
        if cres.scatter is not None:
            schart, spicture, srows = C.corpus_scatter(
                cres, key=B.corpus_key(loaded, compare, cview, upload))
            side_by_side(schart, S.CHART_SCATTER)
            st.caption("Both panels share their axes: a model whose cloud looks small has word "
                       "vectors that differ less from each other at that layer.")
            chart_downloads(schart.chart, "representations_corpus", key=S.DL_SCATTER, df=srows)
            add_button("Words of a corpus layer by layer", S.ADD_SCATTER, chart=spicture, data=data,
                       settings=csettings, **report)
        if cres.model.probes:
            pchart, pdf = C.probe_chart(cres)
            side_by_side(pchart, S.CHART_PROBES)
            ptable = C.probe_table(cres)
            st.dataframe(ptable, hide_index=True, key=S.PROBE_TABLE, column_config={
                c: st.column_config.NumberColumn(format="%.1f") for c in ptable.columns
                if c.endswith("(%)") and "interval" not in c})
            chart_downloads(pchart, "representations_probes", key=S.DL_PROBES, df=pdf)
            add_button("Linear probes per layer", S.ADD_PROBES, chart=pchart, data=data,
                       settings=csettings, **report)
        gchart, gdf = C.geometry_chart(cres)
        st.altair_chart(gchart, width="stretch")
        chart_downloads(gchart, "representations_geometry", key=S.DL_GEOMETRY, df=gdf)
        add_button("Anisotropy and self-similarity", S.ADD_GEOMETRY, chart=gchart, data=data,
                   settings=csettings, **report)
        json_download(cres.to_json, "representations_corpus.json", S.JSON_CORPUS,
                        "the probes and curves")
