"""Syntax: attention heads that find dependency relations (Clark et al. 2019, section 4) and
structural probes that recover the parse tree from hidden states (Hewitt & Manning 2019),
for the sidebar's model and a second (fine-tuned) checkpoint. docs/METHODS.md section 10."""

from __future__ import annotations

import streamlit as st

from analysis.errors import DataError, InputError
from analysis.models import ModelLoadError, checkpoint_stamp, normalise_spec
from analysis.syntax.heads import reading
from analysis.syntax.treebank import treebank_notes
from ui.syntax import blocks as S
from ui.syntax import views as V
from ui.common.errors import plain, show_error
from ui.common.export import chart_downloads
from ui.common.links import CANNOT_CARRY, copy_link, folder_note
from ui.common.findings import add_button, explain
from ui.common.resources import get_model
from ui.common.sidebar import context

Q = "query-params"

ctx = context()
loaded = ctx.loaded
L, H = loaded.n_layers, loaded.n_heads

st.title("Syntax")
st.caption(
    f"{loaded.name}: {L} layers x {H} heads, numbered from 1. Does a single attention head find "
    "each word's syntactic head more often than a fixed-position baseline (Clark et al. 2019)? "
    "Can a linear probe read the whole parse tree from the hidden states (Hewitt & Manning "
    "2019)? And what does fine-tuning keep of both (Merchant et al. 2020)?"
)

# -- treebank and settings -------------------------------------------------------------------
try:
    source, dataset = S.treebank_picker("syntax")
except (DataError, InputError) as exc:
    show_error(exc)
    st.stop()
CARRY = {S.PASTE: "pasted CoNLL-U text", S.UPLOAD: "an uploaded treebank"}
copy_link("syntax_copy", note=CANNOT_CARRY.format(what=CARRY[source]) if source in CARRY
          else None)
if dataset is None:
    st.stop()
for note in treebank_notes(dataset):
    st.caption(plain(note))
min_count = S.min_count_input(st, source)

try:
    result = S.heads_result(loaded, dataset)
except (DataError, InputError) as exc:
    show_error(exc)
    st.stop()
for note in result.notes:
    st.warning(plain(note), icon=":material/info:")

table = S.heads_table(result, min_count)
m = st.columns(4)
m[0].metric("Sentences", result.n_sentences)
m[1].metric("Skipped (too long)", result.skipped, help=f"more than {loaded.max_length} tokens")
m[2].metric("Dependents", f"{result.relations['all'].n:,}" if "all" in result.relations else 0)
m[3].metric("Relations shown", max(len(table) - 1, 0), help=f"at least {min_count} dependents")

st.subheader("Reading")
lines = reading(result, min_count=min_count)
st.markdown(S.reading_lines(lines))
report = dict(loaded=loaded, page="Syntax", url_path="syntax",
              data=f"{S.treebank_name(source)} ({result.n_sentences} sentences)",
              settings={"minimum dependents": min_count})
add_button("Syntax: the reading", "syntax-reading", reading=lines, numbers={
    "Sentences": str(result.n_sentences), "Relations shown": str(max(len(table) - 1, 0))},
    **report)

tab_heads, tab_probes, tab_compare = st.tabs(
    ["Syntactic heads", "Structural probes", "Before and after fine-tuning"], key="syntax_tab",
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
    S.show_table(table, key="syntax_table")
    add_button("Syntactic heads per relation", "syntax-table", df=table, **report)
    S.json_download(result.to_json, "syntax_heads.json", "syntax_json",
                    "every relation's head accuracies")
    rels = table["relation"].tolist() or ["all"]
    if len(rels) <= 1:
        st.info(f"No relation has {min_count} or more dependents; lower the minimum above.",
                icon=":material/info:")
    c1, c2 = st.columns([1, 2])
    if st.session_state.get("syntax_rel") not in rels:
        st.session_state["syntax_rel"] = "det" if "det" in rels else rels[min(1, len(rels) - 1)]
    rel = c1.selectbox("Relation", rels, key="syntax_rel", bind=Q)
    S.reset_for("_syntax_dir_for", rel, {"syntax_dir": result.relations[rel].best["direction"]})
    direction = c2.radio("Direction", list(S.DIRECTIONS), format_func=S.DIRECTIONS.get,
                         key="syntax_dir", horizontal=True, bind=Q)
    grid = S.heads_grid(result, rel, direction, key="syntax_grid", result_key=(
        loaded.spec, checkpoint_stamp(loaded.spec), S.fingerprint(dataset)))
    add_button(f"Head accuracy for {rel}", "syntax-grid", chart=grid, **report)
    st.caption("Accuracy of every head for this relation and direction. Click a cell to open "
               "that head in the example below.")
    layer, head = S.pick_head(result, rel, direction, L, H)
    V.example_block(loaded, result, rel, direction, layer, head)

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
    rank = int(p1.selectbox("Probe rank", [16, 32, 64, 128], index=2, key="syntax_rank",
                            bind=Q))
    probed = st.session_state.setdefault("syntax_probed", set())
    pkey = (loaded.spec, S.fingerprint(dataset), rank)
    if p2.button("Train probes", key="syntax_train", icon=":material/model_training:"):
        probed.add(pkey)
    if pkey not in probed:
        st.info("Probe training takes a while (all layers); press Train probes. (A link keeps "
                "the rank; the probes are trained again where it is opened.)",
                icon=":material/info:")
    else:
        try:
            probes = S.probe_result(loaded, dataset, rank)
        except (DataError, InputError) as exc:
            show_error(exc)
        else:
            for note in probes.notes:
                st.caption(plain(note))
            chart, df = S.probe_chart(probes)
            st.altair_chart(chart)
            chart_downloads(chart, "syntax_probes", key="dl-syntax-probes", df=df)
            add_button("Structural probes per layer", "syntax-probes", chart=chart,
                       **{**report, "settings": {**report["settings"], "probe rank": rank}})
            S.json_download(probes.to_json, "syntax_probes.json", "syntax_probe_json",
                            "the probe metrics")
            V.probe_tree_block(probes, "syntax_tree")

# -- before and after ------------------------------------------------------------------------
with tab_compare:
    explain("The same questions for a second model, usually the first one after fine-tuning: "
            "does its best head per grammatical relation still find the word each word belongs "
            "to, and can the probes still read the tree? Positive differences mean the second "
            "model does better.")
    after_spec = S.second_model_spec(loaded.spec)
    if not after_spec:
        st.info("Enter a second checkpoint to compare with the sidebar's model, e.g. one "
                "fine-tuned on the Aspect heads page, or 'example' for the ABSA example "
                "checkpoint once it is built.", icon=":material/info:")
        st.stop()
    try:
        after = get_model(normalise_spec(after_spec))
        after_result = S.heads_result(after, dataset)
    except (ModelLoadError, DataError, InputError) as exc:
        show_error(exc, prefix="Second model: ")
        st.stop()
    st.caption(f"Before: {plain(loaded.name)}. After: {plain(after.name)}. Each model's own "
               "best head per relation, on the same sentences.")
    note = folder_note(after_spec)
    if note:
        st.caption(plain(note))
    diff = S.compare_table(result, after_result, min_count)
    st.dataframe(diff, hide_index=True, key="syntax_compare_table",
                 column_config=S.percent_columns(diff))
    if len(diff):
        dchart = S.difference_chart(diff)
        st.altair_chart(dchart)
        chart_downloads(dchart, "syntax_heads_difference", key="dl-syntax-diff", df=diff)
    both = (loaded.spec, after.spec, S.fingerprint(dataset), rank)
    if st.button("Train probes for both models", key="syntax_train_both",
                 icon=":material/model_training:"):
        probed.add(both)
    if both in probed:
        try:
            runs = {"before": S.probe_result(loaded, dataset, rank),
                    "after": S.probe_result(after, dataset, rank)}
        except (DataError, InputError) as exc:
            show_error(exc, prefix="Probes: ")
            st.stop()
        pchart, pdf = S.compare_probe_chart(runs)
        st.altair_chart(pchart)
        chart_downloads(pchart, "syntax_probes_before_after", key="dl-syntax-pboth", df=pdf)
