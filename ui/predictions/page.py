"""The Predictions page: a classifier's whole labelled data set at a glance, errors first (LIT's
data table, metrics by slice and counterfactuals, joined to the head-level studies). Opens on
the example checkpoint's held-out sentences, its shipped result shown at once; every control is
in the URL (an upload and typed edits excepted)."""

from __future__ import annotations

import streamlit as st

from analysis.core.example import example_ready
from analysis.core.models import EXAMPLE_SPEC
from analysis.predictions.metrics import METRIC_NAMES, metric_names
from analysis.predictions.reading import reading
from analysis.predictions.run import Models
from analysis.predictions.slices import ALL
from ui.common.errors import plain, show_error
from ui.common.example import wait_for_example
from ui.common.exports.findings import add_button
from ui.common.frame.corpus import cap_widget, fit_narrow_screens
from ui.common.frame.explain import explain
from ui.common.frame.links import CANNOT_CARRY, copy_link
from ui.common.frame.sidebar import context
from ui.predictions import compute as C
from ui.predictions import state as S
from ui.predictions import views as V
from ui.server.settings import settings

Q = "query-params"
EXPLAIN = (
    "A classifier (a model fine-tuned to pick one label for a text) answers every example of "
    "a labelled data set. The **table** lists each example with its correct (gold) label, "
    "the model's answer, how sure it was (confidence: the probability of its answer) and its "
    "loss (how far the answer was from the gold one; big for a sure, wrong answer); the "
    "wrong answers come first. **Metrics by slice** cut the data into groups (each gold "
    "label, each aspect asked about, short, medium and long inputs) and give each group's "
    "accuracy and macro F1 (the F1 score averaged over the labels, so rare labels count as "
    "much as common ones) with a 95% bootstrap interval: the range the number would likely "
    "take on another sample of such data. For reviews the paper's own scores come too: "
    "aspect F1 (does it find which aspects a review talks about?) and 4-way and 3-way "
    "sentiment accuracy. **Two models** answer the same examples side by side. **Edit and "
    "compare** changes a few words of one example and shows both answers with what the "
    "model used (an attribution). **Robustness** generates a small change for every example "
    "(another aspect asked, an opinion word turned into its opposite, a word swapped) and "
    "counts how often the answer flips.")
HINT = ("This page opens on the example checkpoint (the embedded model fine-tuned on the "
        "bundled restaurant reviews): once it is built, it lists its answers to each held-out "
        "review and aspect, its mistakes first, and where it fails.")
BEFORE_NOTE = ("The model before fine-tuning (the embedded model) has no classifier: it cannot "
               "answer these questions at all, so there is nothing to compare row by row. "
               "Choose a second fine-tuned checkpoint under Second model: the sidebar's model "
               "when it is one, or an uploaded checkpoint (.zip, as the Aspect heads page "
               "downloads it).")


def _data_inputs(data_choice: str):
    """The upload box or the Hugging Face dataset's fields; returns the dataset's (name,
    split, text, pair, label) or None."""
    conf = settings()
    if data_choice == S.UPLOADED:
        st.file_uploader("ABSA data (SemEval XML, ASTE, this project's JSON) or a labelled .csv "
                         "/ .jsonl (columns text, optional text_pair, label)",
                         type=["xml", "json", "txt", "csv", "jsonl"], key=S.UPLOAD,
                         max_upload_size=conf.upload_mb)
        return None
    if data_choice != S.HUB:
        return None
    h = st.columns(5)
    if conf.demo:
        names = list(conf.datasets)
        if not names:
            st.info("This server lists no Hugging Face dataset.", icon=":material/info:")
            return None
        pick = h[0].selectbox("Dataset", names, key=S.HF_NAME, bind=Q)
        ds = conf.datasets[pick]
        label = h[1].text_input("Label column", value="label", key=S.HF_LABEL, bind=Q,
                                max_chars=100)
        return ds.id, ds.split, ds.column, ds.pair or "", label.strip()
    name = h[0].text_input("Dataset id", key=S.HF_NAME, placeholder="imdb", bind=Q,
                           max_chars=300)
    split = h[1].text_input("Split", value="test", key=S.HF_SPLIT, bind=Q, max_chars=100)
    text = h[2].text_input("Text column", value="text", key=S.HF_TEXT, bind=Q, max_chars=100)
    pair = h[3].text_input("Pair column", key=S.HF_PAIR, bind=Q, max_chars=100)
    label = h[4].text_input("Label column", value="label", key=S.HF_LABEL, bind=Q,
                            max_chars=100)
    return name.strip(), split.strip() or "test", text.strip(), pair.strip(), label.strip()


def _second(choice: str, spec: str, ctx):
    if choice == S.OTHER_UPLOAD:
        st.file_uploader("The second checkpoint (.zip)", type=["zip"], key=S.COMPARE_UPLOAD,
                         max_upload_size=settings().upload_mb)
    try:
        return C.second_model(choice, spec, ctx.spec)
    except C.ERRORS as exc:
        show_error(exc, "Second model: ")
        return None


def _result(view: S.View, spec: str, hf, ctx):
    """(result, loaded, card, data, label): the shipped example while nothing is loaded or
    its live run waits; ``label`` says which."""
    first = (spec == EXAMPLE_SPEC and view.data == S.SAMPLE and view.compare in
             (S.BEFORE, S.NO_COMPARE) and view.max_examples == S.DEFAULT_MAX)
    shipped, label = C.shipped() if first else None, ""
    if shipped is not None:
        shipped, label = shipped
    if spec == EXAMPLE_SPEC and not example_ready():
        if shipped is None:
            wait_for_example(HINT)
            st.stop()
        wait_for_example()
        return shipped, None, None, None, label + " Editing waits for the example checkpoint."
    loaded, card = C.classifier(spec)
    second = _second(view.compare, spec, ctx)
    data = C.rows(view, spec, loaded, card, hf)
    if data is None:
        st.info("Upload a labelled file, or name a Hugging Face dataset, to see its "
                "predictions.", icon=":material/upload:")
        st.stop()
    models = Models(loaded, card, *(second[:2] if second else (None, None)))
    key = (S.PREFIX, C.model_key(spec), second[2] if second else None, C.data_key(view, hf),
           view.max_examples)
    if first and second is None:
        live, job = C.first_view(key, models, data)
        if live is None:
            if shipped is None:
                st.info("Answering the example's held-out sentences, once for every visitor; "
                        "the page fills in by itself.", icon=":material/hourglass_top:")
                C.watch(job)
                st.stop()
            C.watch(job)  # the shipped rows may not be this data's: editing waits for the run
            return shipped, loaded, card, None, label
        return live, loaded, card, data, None
    return C.study(key, models, data), loaded, card, data, None


def _numbers(result) -> dict:
    m = result.metrics[ALL]
    return {METRIC_NAMES[k]: (f"{m[k]['value']:.3f}" if k == "loss" else
                              f"{m[k]['value']:.1f}%")
            for k in metric_names(result.absa)}


def render() -> None:
    ctx = context()
    st.title("Predictions")
    st.caption("A fine-tuned classifier on every example of a labelled data set: its mistakes "
               "first, where it fails, a second model side by side, edits and counterfactuals, "
               "and any example opened in the other studies (LIT's view, joined to the heads).")
    fit_narrow_screens()
    c1, c2, c3, c4 = st.columns([1.1, 1.4, 1.2, 0.9])
    model_choice = c1.radio("Classifier", S.MODELS, key=S.MODEL, bind=Q)
    data_choice = c2.radio("Data", S.DATAS, key=S.DATA, bind=Q)
    compare = c3.selectbox("Second model", S.COMPARES, key=S.COMPARE, bind=Q)
    max_examples = cap_widget(c4, S.MAX, "Examples at most (ABSA: sentences)", S.DEFAULT_MAX,
                              C.max_examples_cap(), 100, bind=True)
    hf = _data_inputs(data_choice)
    explain(EXPLAIN)
    spec = EXAMPLE_SPEC if model_choice == S.EXAMPLE else ctx.spec
    view = S.View(model_choice, data_choice, max_examples, compare)
    try:
        result, loaded, card, data, label = _result(view, spec, hf, ctx)
    except C.ERRORS as exc:
        show_error(exc)
        st.stop()
    carry = [w for w, on in (("the uploaded file", data_choice == S.UPLOADED),
                             ("the uploaded checkpoint", compare == S.OTHER_UPLOAD)) if on]
    copy_link(S.COPY, note=CANNOT_CARRY.format(what=" and ".join(carry)) if carry else None)
    if label:
        st.caption(plain(label))
    for note in result.notes:
        st.caption(plain(note))
    numbers = _numbers(result)
    for col, (name, value) in zip(st.columns(len(numbers)), numbers.items()):
        col.metric(name, value)
    source = dict(loaded=loaded, data=result.data, page="Predictions",
                  url_path="predictions", settings={"second model": compare})
    st.subheader("Reading")
    lines = reading(result)
    st.markdown("\n".join(f"- {plain(line)}" for line in lines))
    add_button("Predictions: the reading", f"{S.REPORT}-reading", reading=lines,
               numbers=numbers, **source)
    tabs = st.tabs(S.TABS, key=S.TAB, bind=Q)
    with tabs[0]:
        row = V.table_tab(result, spec, data_choice, loaded, source)
    with tabs[1]:
        V.slices_tab(result, source)
    with tabs[2]:
        if compare == S.BEFORE:
            st.info(BEFORE_NOTE, icon=":material/info:")
        V.compare_tab(result, compare, source)
    with tabs[3]:
        V.edit_tab(result, row, spec, loaded, data, source, shown=tabs[3].open is not False)
    with tabs[4]:
        V.robustness_tab(result, spec, data_choice, source)
