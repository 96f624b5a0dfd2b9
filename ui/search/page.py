"""Search: the pieces of a corpus a model treats alike at a layer or in a head's context
vectors, as exBERT does (Hoover et al. 2020). docs/METHODS.md section 16."""

from __future__ import annotations

import streamlit as st

from analysis.core.errors import DataError, InputError
from analysis.search import reading
from analysis.search.study import STUDY, Inputs
from analysis.search.reading import label_rows, others
from ui.common.errors import plain, show_error
from ui.common.exports.export import chart_downloads, json_download
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain
from ui.common.frame.links import CANNOT_CARRY, copy_link, folder_note
from ui.common.frame.resources import token_capped
from ui.common.frame.sidebar import context
from ui.search import blocks as B
from ui.search import state as S
from analysis.core.corpus import corpus_notes
from analysis.core.encoding import encode


def render() -> None:
    """The page, top to bottom (pages/search.py calls it on every run)."""
    ctx = context()
    loaded = token_capped(ctx.loaded)  # demo mode: at most max_tokens per input
    st.title("Search")
    st.caption(f"{plain(loaded.name)}: pick a token of the sidebar's text and a layer; the "
               f"corpus's "
               "tokens whose vectors there are closest to it (cosine) are listed with their "
               "sentences, as in exBERT (Hoover et al. 2020).")
    explain("Inside the model every token is a list of numbers at every layer. Tokens with similar "
            "lists are ones the model treats alike at that layer. Here the chosen token of your "
            "text is compared with every token of a corpus, and the closest ones are shown in "
            "their sentences. Their labels (part of speech, dependency relation, aspect role) tell "
            "what those tokens have in common, against how often each label comes up in the whole "
            "corpus (the chance level). A head's context vectors are what one attention head "
            "passes on. Beware: all vectors of a BERT-style model point roughly the same way "
            "(anisotropy), so cosines are high everywhere; compare them within one list.")

    kind, dataset, data_name = B.corpus_choice()
    copy_link(S.COPY, note=folder_note(ctx.spec) or (
        CANNOT_CARRY.format(what="an uploaded or pasted corpus") if kind == "text" else None))
    if dataset is None:
        st.stop()
    try:
        index = B.index_for(loaded, kind, dataset)
    except (InputError, DataError) as exc:
        show_error(exc)
        st.stop()
    if not isinstance(index, B.SearchIndex):  # the server's shared index, built in the background
        B.watch(index)
        st.stop()
    said = corpus_notes(dataset) if kind == "text" else []  # the corpus picker said these
    for note in index.meta.get("notes", []):
        if note not in said:  # once (issue 49: an upload's multiword-token note came twice)
            st.caption(plain(note))

    try:
        enc = encode(loaded.tokenizer, ctx.text, ctx.pair, max_length=loaded.max_length)
    except InputError as exc:
        show_error(exc)
        st.stop()
    token, layer, head, k, label = B.query_controls(enc.tokens, enc.special, index.n_layers,
                                                    index.n_heads, index.label_names)
    try:  # one query vector and a search: in this run (it never waits behind a corpus job)
        found = STUDY.run(Inputs(index, loaded.spec, ctx.text, token, layer, head, k, ctx.pair),
                          models=loaded)
    except (InputError, DataError) as exc:
        show_error(exc)
        st.stop()

    q, matches, own = found.query, found.matches, found.own
    lines = reading(index, q.piece, matches, layer, head, own)
    st.subheader("Reading")
    st.markdown("\n".join(f"- {plain(line)}" for line in lines))

    m = st.columns(3)
    m[0].metric("Corpus tokens", f"{index.n:,}", help=f"{index.meta['n_sentences']:,} sentences")
    info = index.info(layer, head)
    m[1].metric("Search", "exact" if info.backend == "exact" else "HNSW",
                help="Exact: every token compared (faiss IndexFlatIP). HNSW: an approximate graph "
                     "search, used for large corpora.")
    m[2].metric("Recall@50", f"{100 * (info.recall or 0):.0f}%",
                help="The share of the exact 50 nearest tokens the search finds (measured when the "
                     "index was built; exact search finds all).")

    settings_ = {"layer": str(layer), "vectors": "whole layer" if head is None else
                 f"head {head + 1} context", "token": f"{q.token}: {q.piece}", "k": str(k)}
    report = dict(loaded=loaded, page="Search", url_path="search")
    if label is not None:
        rows = label_rows(index, others(matches, own), label)
        chart = B.histogram(rows, label)
        st.altair_chart(chart, width="stretch", key=S.CHART)
        st.caption("Each label's share of the matches (the query itself left out) against its "
                   "share of all the corpus's tokens: the rate a random token would give.")
        chart_downloads(chart, "search_labels", key=S.DL_CHART,
                        df=B.matches_frame(index, matches))
        add_button("Search: labels of the nearest tokens", S.ADD, chart=chart, reading=lines,
                   data=data_name, settings=settings_, **report)
    else:
        st.caption("This corpus has no labels (a plain text corpus without a 'label' column), so "
                   "the matches are not counted by label.")
        add_button("Search: the nearest tokens", S.ADD, reading=lines, data=data_name,
                   settings=settings_, **report)

    st.subheader(f"The {len(matches)} nearest tokens to «{q.piece}»")
    st.html(B.matches_html(ctx.spec, index, matches, layer, head, own))
    json_download(found.to_json, "search_matches.json", S.JSON, "the matches")
