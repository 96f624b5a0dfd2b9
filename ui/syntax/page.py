"""Syntax: attention heads that find dependency relations (Clark et al. 2019, section 4) and
structural probes that recover the parse tree from hidden states (Hewitt & Manning 2019),
for the sidebar's model and a second (fine-tuned) checkpoint. docs/METHODS.md section 10."""

from __future__ import annotations

import streamlit as st

from analysis.core.cards import trained_of
from analysis.core.errors import DataError, InputError
from analysis.core.models import ModelLoadError, checkpoint_stamp, normalise_spec
from analysis.syntax.heads import reading
from analysis.syntax.reading import probe_compare_reading, probe_reading, trained_sentence
from analysis.syntax.treebank import treebank_notes
from ui.syntax import blocks, state, views
from ui.common.chart_cache import show
from ui.common.errors import plain, show_error
from ui.common.exports.export import chart_downloads, json_download
from ui.common.frame.links import CANNOT_CARRY, copy_link, folder_note
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.common.frame.resources import get_model
from ui.common.frame.sidebar import page_header
from ui.common.frame.url_select import url_choice


def render() -> None:
    """The page, top to bottom (pages/syntax.py calls it on every run)."""
    Q = "query-params"

    ctx = page_header("Syntax", (
        "Does a single attention head find each word's syntactic head more often than a "
        "fixed-position baseline (Clark et al. 2019)? Can a linear probe read the whole parse tree "
        "from the hidden states (Hewitt & Manning 2019)? And what does fine-tuning keep of both "
        "(Merchant et al. 2020)?"))
    loaded = ctx.loaded
    L, H = loaded.n_layers, loaded.n_heads

    # -- treebank and settings -------------------------------------------------------------------
    try:
        source, dataset = blocks.treebank_picker(state.TREEBANK)
    except (DataError, InputError) as exc:
        show_error(exc)
        st.stop()
    CARRY = {blocks.PASTE: "pasted CoNLL-U text", blocks.UPLOAD: "an uploaded treebank"}
    copy_link(state.COPY, note=CANNOT_CARRY.format(what=CARRY[source]) if source in CARRY
              else None)
    if dataset is None:
        st.stop()
    for note in treebank_notes(dataset):
        st.caption(plain(note))
    min_count = blocks.min_count_input(st, source)

    try:
        result = blocks.heads_result(loaded, dataset)
    except (DataError, InputError) as exc:
        show_error(exc)
        st.stop()
    for note in result.notes:
        st.warning(plain(note), icon=":material/info:")

    table = blocks.heads_table(result, min_count)
    m = st.columns(4)
    m[0].metric("Sentences", result.n_sentences)
    m[1].metric("Skipped (too long)", result.skipped, help=f"more than {loaded.max_length} tokens")
    m[2].metric("Dependents", f"{result.relations['all'].n:,}" if "all" in result.relations else 0)
    m[3].metric("Relations shown", max(len(table) - 1, 0), help=f"at least {min_count} dependents")

    st.subheader("Reading")
    lines = reading(result, min_count=min_count)
    st.markdown(glossed(blocks.reading_lines(lines)))
    report = dict(loaded=loaded, page="Syntax", url_path="syntax",
                  data=f"{blocks.treebank_name(source)} ({result.n_sentences} sentences)",
                  settings={"minimum dependents": min_count})
    add_button("Syntax: the reading", state.ADD_READING, reading=lines, numbers={
        "Sentences": str(result.n_sentences), "Relations shown": str(max(len(table) - 1, 0))},
        **report)

    tab_heads, tab_probes, tab_compare = st.tabs(
        ["Syntactic heads", "Structural probes", "Before and after fine-tuning"], key=state.TAB,
        bind=Q)

    # -- heads -----------------------------------------------------------------------------------
    with tab_heads:
        st.caption("For each dependent, a head predicts the word it attends to most (dependent "
                   "attends to its head) or the word that attends to it most (head attends to its "
                   "dependent), over words ([CLS], [SEP] and the word itself left out). Accuracy: "
                   "the share of a relation's dependents whose prediction is the gold head. "
                   "Baseline: the best fixed offset (the word k places away, 1 <= |k| <= 5).")
        explain("Grammar links words in pairs: in \"the cat sat\", \"the\" belongs to \"cat\" "
                "(a det relation) and \"cat\" to \"sat\" (nsubj). For each kind of link we ask "
                "whether some attention head points from each word to the word it belongs to, and "
                "compare it with the simplest rule: always the word k places away.")
        blocks.show_table(table, key=state.TABLE)
        add_button("Syntactic heads per relation", state.ADD_TABLE, df=table, **report)
        json_download(result.to_json, "syntax_heads.json", state.JSON,
                        "every relation's head accuracies")
        rels = table["relation"].tolist() or ["all"]
        if len(rels) <= 1:
            st.info(f"No relation has {min_count} or more dependents; lower the minimum above.",
                    icon=":material/info:")
        c1, c2 = st.columns([1, 2])
        # the page's defaults ("det", the relation's best direction) are not the first options:
        # bound by url_choice, so that a link to the first keeps it
        rel = url_choice(c1, "Relation", rels, key=state.RELATION,
                         default="det" if "det" in rels else rels[min(1, len(rels) - 1)])
        best_direction = result.relations[rel].best["direction"]
        state.reset_for(state.DIRECTION_FOR, rel, {state.DIRECTION: best_direction})
        direction = url_choice(c2, "Direction", list(blocks.DIRECTIONS),
                               format_func=blocks.DIRECTIONS.get, key=state.DIRECTION,
                               default=best_direction, widget="radio", horizontal=True)
        grid = blocks.heads_grid(result, rel, direction, key=state.GRID, result_key=(
            loaded.spec, checkpoint_stamp(loaded.spec), blocks.fingerprint(dataset)))
        add_button(f"Head accuracy for {rel}", state.ADD_GRID, chart=grid, **report)
        st.caption("Accuracy of every head for this relation and direction. Click a cell to open "
                   "that head in the example below.")
        layer, head = blocks.pick_head(result, rel, direction, L, H)
        views.example_block(loaded, result, rel, direction, layer, head)

    # -- probes ----------------------------------------------------------------------------------
    with tab_probes:
        st.caption("Per layer (0 = the embeddings), word vectors are the mean of their pieces' "
                   "hidden states. A distance probe (rank-k linear map) is trained so that squared "
                   "distances approximate tree distances, a depth probe so that squared norms "
                   "approximate depths; trained on the first three quarters of the treebank, "
                   "evaluated on the last quarter. UUAS: undirected edges of the minimum spanning "
                   "tree found in the gold tree (punctuation left out); DSpr: Spearman correlation "
                   "of distances; root accuracy: the shallowest word is the root.")
        p1, p2 = st.columns([1, 3], vertical_alignment="bottom")
        explain("A structural probe is a small linear map trained to read the sentence's grammar "
                "tree out of one layer's word vectors. UUAS is the share of the tree's links it "
                "recovers; a layer with a high UUAS holds the tree in a simple, readable form.")
        rank = int(p1.selectbox("Probe rank", [16, 32, 64, 128], index=2, key=state.RANK,
                                bind=Q))
        probed = state.probed()
        pkey = (loaded.spec, blocks.fingerprint(dataset), rank)
        if p2.button("Train probes", key=state.TRAIN, icon=":material/model_training:"):
            probed.add(pkey)
        if pkey not in probed:
            st.info("Probe training takes a while (all layers); press Train probes. (A link keeps "
                    "the rank; the probes are trained again where it is opened.)",
                    icon=":material/info:")
        else:
            try:
                probes = blocks.probe_result(loaded, dataset, rank)
            except (DataError, InputError) as exc:
                show_error(exc)
            else:
                for note in probes.notes:
                    st.caption(plain(note))
                chart, df = blocks.probe_chart(probes)
                show(chart)
                st.markdown(blocks.reading_lines(plines := probe_reading(probes)))
                chart_downloads(chart, "syntax_probes", key=state.PROBES_DOWNLOAD, df=df)
                add_button("Structural probes per layer", state.ADD_PROBES, chart=chart,
                           reading=plines,
                           **{**report, "settings": {**report["settings"], "probe rank": rank}})
                json_download(probes.to_json, "syntax_probes.json", state.PROBE_JSON,
                                "the probe metrics")
                views.probe_tree_block(probes, state.TREE)

    # -- before and after ------------------------------------------------------------------------
    with tab_compare:
        explain("The same questions for a second model, usually the first one after fine-tuning: "
                "does its best head per grammatical relation still find the word each word belongs "
                "to, and can the probes still read the tree? Positive differences mean the second "
                "model does better.")
        after_spec = blocks.second_model_spec(loaded.spec)
        if not after_spec:
            st.info("Enter a second checkpoint to compare with the sidebar's model, e.g. one "
                    "fine-tuned on the Aspect heads page, or 'example' for the ABSA example "
                    "checkpoint once it is built.", icon=":material/info:")
            st.stop()
        try:
            after = get_model(normalise_spec(after_spec))
            after_result = blocks.heads_result(after, dataset)
        except (ModelLoadError, DataError, InputError) as exc:
            show_error(exc, prefix="Second model: ")
            st.stop()
        trained = trained_of(after)  # what the second model's fine-tune trained (its card)
        st.caption(f"Before: {plain(loaded.name)}. After: {plain(after.name)}. Each model's own "
                   "best head per relation, on the same sentences. "
                   + plain(trained_sentence(trained)))
        note = folder_note(after_spec)
        if note:
            st.caption(plain(note))
        diff = blocks.compare_table(result, after_result, min_count)
        st.dataframe(diff, hide_index=True, key=state.COMPARE_TABLE,
                     column_config=blocks.percent_columns(diff))
        if len(diff):
            dchart = blocks.difference_chart(diff)
            show(dchart)
            chart_downloads(dchart, "syntax_heads_difference", key=state.DIFFERENCE_DOWNLOAD,
                            df=diff)
        both = (loaded.spec, after.spec, blocks.fingerprint(dataset), rank)
        if st.button("Train probes for both models", key=state.TRAIN_BOTH,
                     icon=":material/model_training:"):
            probed.add(both)
        if both in probed:
            try:
                runs = {"before": blocks.probe_result(loaded, dataset, rank),
                        "after": blocks.probe_result(after, dataset, rank)}
            except (DataError, InputError) as exc:
                show_error(exc, prefix="Probes: ")
                st.stop()
            pchart, pdf = blocks.compare_probe_chart(runs)
            show(pchart)
            st.markdown(blocks.reading_lines(probe_compare_reading(runs["before"], runs["after"],
                                                                  trained=trained)))
            chart_downloads(pchart, "syntax_probes_before_after", key=state.PROBES_BOTH_DOWNLOAD,
                            df=pdf)
