"""Aspects: fine-tune (or load) an ABSA sentence-pair model, then rank the heads that attend
from the auxiliary sentence's aspect word to the aspect terms, their opinion words, the other
aspect's terms, and [SEP] when the aspect is absent, before vs after fine-tuning
(docs/METHODS.md sections 6 to 8)."""

from __future__ import annotations

import streamlit as st

from analysis.aspects.gold import KINDS
from analysis.aspects.reading import task_explanation
from analysis.core.example import RECIPE
from analysis.absa.tasks import PAIR_ORDERS, TASK_NAMES, TASKS, default_pair_order
from ui.aspects import blocks, models, precomputed, state
from ui.common.frame.corpus import fit_narrow_screens
from ui.common.errors import plain
from ui.common.frame.links import CANNOT_CARRY, copy_link
from ui.server.settings import settings
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.common.frame.sidebar import context
from ui.common.frame.url_select import url_selectbox


def render() -> None:
    """The page, top to bottom (pages/aspects.py calls it on every run)."""
    Q = "query-params"


    st.title("Aspect heads")
    fit_narrow_screens()
    st.caption(glossed(
        "Aspect-based sentiment as sentence pairs (Sun et al. 2019): each review is paired with an "
        "auxiliary sentence per category (price, anecdotes, food, ambience, service). Which heads "
        "look from the aspect word of that sentence at the aspect terms, their opinion words, the "
        "other aspect, or [SEP] when the aspect is absent? Measured per head with bootstrap 95% "
        "intervals and baselines, before and after fine-tuning. Layers and heads are shown "
        "1-indexed."), help=settings().for_local("For command-line users: the JSON of python -m "
                                                "analysis aspects heads counts them from 0.")
        or None)
    ctx = context()

    # ---------------------------------------------------------------------------------------------
    st.header("1. The fine-tuned model")
    source = st.radio("Model", models.model_sources(), key=state.SOURCE, horizontal=True, bind=Q)
    CARRY = {models.TUNE: "a model fine-tuned in this session (the link keeps its recipe: "
                          "fine-tune again to get it)", models.UPLOAD: "an uploaded checkpoint",
             models.FOLDER: "a loaded checkpoint folder"}
    if source == models.EXAMPLE:
        models.use_example()
    elif source == models.TUNE:
        c1, c2, c3, c4 = st.columns([1, 2, 1, 1])
        task = c1.selectbox("Task", TASKS, format_func=lambda t: TASK_NAMES[t], key=state.TASK,
                            index=TASKS.index(RECIPE.task), bind=Q)
        order_label = c2.selectbox("Pair order", list(blocks.ORDERS), key=state.ORDER, bind=Q,
                                   help="The paper puts the review first for QA-M/NLI-M and the "
                                        "auxiliary sentence first for QA-B/NLI-B; the seed blog "
                                        "put the question first.")
        e_default, e_max = models.cap("max_epochs", float(RECIPE.epochs), 10.0)
        epochs = c3.number_input("Epochs", min_value=0.01, max_value=e_max, value=e_default,
                                 step=1.0, key=state.EPOCHS, bind=Q)
        seed = int(c4.number_input("Seed", min_value=0, value=RECIPE.seed, step=1, key=state.SEED,
                                   bind=Q))
        st.caption(plain(f"Base model: {ctx.loaded.name} (the sidebar's). A copy is trained with "
                         f"the example's recipe (AdamW, lr {RECIPE.lr:g}, warmup 0.1, batch "
                         f"{RECIPE.batch_size}, at most {RECIPE.max_length} tokens, "
                         f"length-bucketed); {RECIPE.heldout:.0%} of the sample is held out for "
                         "evaluation. " + models.trained_part_words(ctx.loaded.model)))
        if st.button("Fine-tune", type="primary", key=state.TRAIN,
                     icon=":material/model_training:"):
            models.fine_tune_on_sample(ctx, task,
                                       blocks.ORDERS[order_label] or default_pair_order(task),
                                  float(epochs), seed)
    elif source == models.FOLDER:
        c1, c2 = st.columns([4, 1])
        folder = c1.text_input("Checkpoint folder", key=state.FOLDER,
                               placeholder="/path/to/absa-checkpoint",
                               help="A folder written by this page or `python -m analysis aspects "
                                    "finetune` (config, safetensors, tokenizer, absa_card.json).")
        c2.write("")
        if c2.button("Load", key=state.LOAD, icon=":material/folder_open:") and folder.strip():
            models.load_folder(folder.strip(), ctx.spec)
    else:
        up_zip = st.file_uploader("A checkpoint .zip downloaded from this page", type=["zip"],
                                  key=state.zip_key(), max_upload_size=models.MAX_ZIP_MB)
        if up_zip is not None:
            models.load_zip(up_zip, ctx.spec)

    copy_link(state.COPY, note=CANNOT_CARRY.format(what=CARRY[source]) if source in CARRY else None)
    model_state = models.current(source)
    if model_state is None:
        if source != models.EXAMPLE:
            st.info(models.START, icon=":material/info:")
        else:  # the example is being built: its heads, precomputed, meanwhile (issue 49)
            precomputed.show()
        st.stop()

    after, card = model_state.loaded, model_state.card
    task = card["task"]
    order = card.get("pair_order") if card.get("pair_order") in PAIR_ORDERS else \
        default_pair_order(task)
    models.model_summary(model_state)
    models.model_export(model_state)

    # ---------------------------------------------------------------------------------------------
    st.header("2. Find the heads")
    c1, c2 = st.columns([3, 1])
    dsource = c1.radio("Gold data", blocks.DATA_SOURCES, key=state.DATA, horizontal=True, bind=Q,
                       help="Aspect terms with categories (SemEval-16, or SemEval-14 sentences "
                            "with one category, or this project's JSON), opinion words (ASTE), "
                            "absent aspects (sentence-level categories).")
    s_default, s_max = models.cap("max_examples", 60, 5000)
    max_sent = int(c2.number_input("Max sentences", min_value=1, max_value=s_max, value=s_default,
                                   step=20, key=state.MAX_SENTENCES, bind=Q))
    ds = None
    if dsource == blocks.DATA_SOURCES[0]:
        ds = blocks.bundled_sample()
    else:
        u1, u2 = st.columns(2)
        up = u1.file_uploader("Reviews: SemEval-2014/2016 XML or this project's JSON",
                              type=["xml", "json"], key=state.UPLOAD,
                              max_upload_size=settings().upload_mb)
        up_op = u2.file_uploader("Optional opinion words: ASTE triplets (.txt)", type=["txt"],
                                 key=state.UPLOAD_OPINIONS, max_upload_size=settings().upload_mb)
        skip = st.checkbox("Skip sentences whose offsets do not match their text", key=state.SKIP,
                           bind=Q)
        st.caption(plain(CANNOT_CARRY.format(what="uploaded gold data")))
        if up is not None:
            ds = blocks.uploaded_data(up, up_op, skip)
    if ds is None:
        st.info("Upload a gold data file to score heads on it.", icon=":material/info:")
        st.stop()

    before = blocks.base_model(model_state.base, after)
    sample = dsource == blocks.DATA_SOURCES[0]
    if st.button("Find aspect heads", type="primary", key=state.FIND, icon=":material/search:") \
            or blocks.auto_heads(model_state, sample):
        blocks.find_heads(model_state, before, ds, task, order, max_sent,
                     shared=sample and model_state.example)

    disc = model_state.disc
    if not disc:
        st.info("Press **Find aspect heads** to score every head.", icon=":material/info:")
        st.stop()
    d_after = disc["after"]
    n_pairs = {k: len(d_after.hs.scores[k]) for k in KINDS}
    st.caption("Pairs per kind: "
               + ", ".join(f"{blocks.KIND_SHORT[k]} {n_pairs[k]}" for k in KINDS))
    explain(task_explanation(task))
    blocks.verdict_block(disc)
    report = dict(loaded=after, page="Aspect heads", url_path="aspects",
                  data=f"{dsource.lower()} ({min(max_sent, len(ds))} sentences)",
                  settings={"task": TASK_NAMES[task], "pair order": order})
    add_button("Aspect heads: the reading", state.ADD_READING, reading=blocks.verdict_lines(disc),
               numbers={f"{blocks.KIND_SHORT[k]} pairs": str(n_pairs[k]) for k in KINDS}, **report)
    for tab, kind in zip(st.tabs([blocks.KIND_SHORT[k] for k in KINDS], key=state.TAB, bind=Q),
                         KINDS):
        with tab:
            if n_pairs[kind]:
                blocks.kind_tab(disc, kind, model_state.folder, report=report)
            else:
                st.subheader(blocks.KIND_TITLES[kind])
                st.info("The gold data has no pairs of this kind (e.g. no opinion words: upload "
                        "ASTE triplets).", icon=":material/info:")

    # ---------------------------------------------------------------------------------------------
    st.header("3. Examples")
    explain("One review and its auxiliary sentence, word by word: the orange shading is how much "
            "attention the chosen head sends from the underlined aspect word to each word; the "
            "words the annotators marked (the gold words) have a green outline. Below, the same in "
            "the head view, where lines join the words a head connects.")
    kinds_with = [k for k in KINDS if n_pairs[k]]
    c1, c2, c3 = st.columns(3)
    ekind = c1.selectbox("Kind", kinds_with, format_func=lambda k: blocks.KIND_SHORT[k],
                         key=state.EXAMPLE_KIND,
                         bind=Q)
    # the link keeps the head as "layer-head" and the pair by its index in the data, not their
    # labels (a score, a text): it reopens the same head and pair wherever the numbers differ
    top = {f"{r['layer'] + 1}-{r['head'] + 1}": r for r in d_after.ranked[ekind][:5]}
    pick = url_selectbox(c2, "Head (top 5 of this kind)", list(top), key=state.EXAMPLE_HEAD,
                         format_func=lambda lh: f"{lh} (score {top[lh]['score']:.3f})")
    pairs = d_after.hs.pairs
    choice = url_selectbox(c3, "Pair", [int(i) for i in d_after.hs.pair_index[ekind]],
                           key=state.EXAMPLE_PAIR,
                           format_func=lambda i: f"{pairs[i].category}: {pairs[i].text_a[:50]}")
    shown = {blocks.MODELS[1]: after, **({blocks.MODELS[0]: before} if before is not None else {})}
    blocks.example(disc, ekind, choice, top[pick], shown, model_state.folder)

    # ---------------------------------------------------------------------------------------------
    st.header("4. Causal check")
    explain("Does the model need these heads? We switch off the top heads of a kind and measure "
            "the task again, next to switching off as many heads picked at random. A bigger drop "
            "for the top heads than for random ones means they matter, when its 95% interval "
            "stays clear of zero and of the random heads' range (else: within noise).")
    eval_ex, eval_on = blocks.causal_pairs(model_state, card, task, order)
    st.caption("Mask the top-k heads of a kind (their output is set to zero) and "
               f"re-evaluate the task on {eval_on}, next to masking k random heads "
               "(mean of 3 draws). Metrics in percent; the top heads' change has a paired "
               "bootstrap 95% interval (sentences resampled) and is within noise when that "
               "interval covers 0 or overlaps the range of the random draws' changes.")
    c1, c2 = st.columns(2)
    ckind = c1.selectbox("Kind", kinds_with, format_func=lambda k: blocks.KIND_SHORT[k],
                         key=state.CAUSAL_KIND,
                         bind=Q)
    k = int(c2.number_input("k", min_value=1, max_value=after.n_layers * after.n_heads, value=3,
                            key=state.CAUSAL_K, bind=Q))
    if eval_ex and st.button("Run causal check", key=state.CAUSAL_RUN, icon=":material/science:"):
        blocks.run_causal(model_state, eval_ex, task, d_after.ranked[ckind], k, ckind)
    blocks.causal_table(model_state.causal, report=report)
