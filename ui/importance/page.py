"""Head importance: switch each head and each layer of a fine-tuned classifier off and see
what it loses (Kovaleva et al. 2019; Michel et al. 2019). Opens on the example checkpoint and
its held-out sentences; every control is in the URL (the upload excepted)."""

from __future__ import annotations

import streamlit as st

from analysis.core.cards import trained_of
from analysis.core.errors import DataError, InputError
from analysis.importance import ImportanceResult
from analysis.importance.scoring import LOSS
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError
from ui.server.settings import settings
from ui.common.frame.corpus import cap_widget
from ui.common.errors import plain, show_error
from ui.common.example import precomputed_note, precomputed_result, wait_for_example
from ui.common.frame.explain import explain
from ui.common.frame.links import CANNOT_CARRY, copy_link
from ui.common.frame.sidebar import context
from ui.importance import compute as C
from ui.importance import one as O
from ui.importance import results as R
from ui.importance import state as S


def render() -> None:
    """The page, top to bottom (pages/importance.py calls it on every run)."""
    Q = "query-params"
    st.title("Head importance")
    st.caption("Switch each attention head, and each whole layer, of a fine-tuned classifier off "
               "and measure what it loses on held-out labelled data (Kovaleva et al. 2019; Michel "
               "et al. 2019): most heads can go at no cost, a few matter.")
    ctx = context()

    scope = st.radio("Measure on", S.SCOPES, key=S.SCOPE, horizontal=True, bind=Q,
                     help="The held-out data set (the study), or one example: a text and its "
                          "gold label (a Predictions row opens here).")
    c1, c2 = st.columns(2)
    model_choice = c1.radio("Classifier", S.MODELS, key=S.MODEL, horizontal=True, bind=Q)
    if scope == S.ONE:
        O.render(ctx, model_choice, c2.radio("Disable a head by", list(S.METHODS),
                                             format_func=S.METHODS.get, key=S.METHOD,
                                             bind=Q))
        return
    data_choice = c2.radio("Data", S.DATAS, key=S.DATA, horizontal=True, bind=Q)
    if data_choice == S.UPLOADED:
        st.file_uploader("ABSA data (SemEval XML, ASTE, this project's JSON) or a labelled .csv / "
                         ".jsonl (columns text, optional text_pair, label)",
                         type=["xml", "json", "txt", "csv", "jsonl"], key=S.UPLOAD,
                         max_upload_size=settings().upload_mb)
    c3, c4, c5 = st.columns(3)
    method = c3.radio("Disable a head by", list(S.METHODS), format_func=S.METHODS.get,
                      key=S.METHOD, bind=Q)
    max_examples = cap_widget(c5, S.MAX, "Examples at most (ABSA: sentences)", S.DEFAULT_MAX,
                              C.max_examples_cap(), 1, bind=True)
    copy_link(S.COPY, note=CANNOT_CARRY.format(what="the uploaded file")
              if data_choice == S.UPLOADED else None)

    explain("Each head (a small unit of a layer that decides where to look) is switched off in "
            "turn and the model answers the held-out examples again. Two ways to switch it off: "
            "its attention spread evenly over the words (Kovaleva et al.), or its output set to "
            "zero (Michel et al.). The change of the score against the intact model, with a 95% "
            "bootstrap interval over the examples, says how much the model needs that head. The "
            "score is the task's own (aspect F1 and 4-way accuracy for reviews, else accuracy) "
            "or the mean loss. "
            "Gradient importance is a cheap estimate of the same from one backward pass; the "
            "pruning curve removes more and more heads at once. **Heads free to go one at a time** "
            "counts the heads whose removal alone costs nothing beyond that interval; "
            "**Removable together** is how many can go at once, least harmful first, before the "
            "score falls by more than 1 point (the loss: 0.05): losses too small to see one at a "
            "time add up, so it is usually far fewer.")

    spec = EXAMPLE_SPEC if model_choice == S.EXAMPLE else ctx.spec
    if spec == EXAMPLE_SPEC and not wait_for_example(
            "This page opens on the example checkpoint (the embedded model fine-tuned on the "
            "bundled restaurant reviews): once it is built, it shows which of its 72 heads and 6 "
            "layers the model needs to find the aspects of its held-out sentences and their "
            "sentiment: a map of every head, the layers, the heads that matter beyond doubt, "
            "and how many heads can be pruned."):
        # meanwhile the example's own result, precomputed with its recipe (issue 49), for the
        # view a first visit opens
        first = S.View(model_choice, data_choice, method,
                       st.session_state.get(S.METRIC) or S.FIRST_METRIC, max_examples)
        shown = precomputed_result(S.PREFIX, ImportanceResult, method=method,
                                   description=S.EXAMPLE_DATA) \
            if S.is_first_visit(first, S.FIRST_METRIC) else None
        if shown is not None:
            record, result = shown
            S.keep_metric_in([result.metric])
            c4.selectbox("Score", [result.metric], format_func=S.METRIC_NAMES.get,
                         key=S.METRIC, bind=Q, disabled=True,
                         help="The other scores are measured once the example is built.")
            precomputed_note(record)
            R.show(result, C.Marks([], []), result.metric,
                   (S.PREFIX, "precomputed", record.get("made"), method), None, None)
        st.stop()
    try:
        loaded, card = C.classifier(spec)
        view = S.View(model_choice, data_choice, method, st.session_state.get(S.METRIC),
                      max_examples)
        ev = C.eval_set(view, spec, loaded, card)
        if ev is None:
            st.info("Upload a file to measure the heads on it.", icon=":material/upload:")
            st.stop()
        names = list(ev.scorer.metrics) + [LOSS]
        S.keep_metric_in(names)
        metric = c4.selectbox("Score", names, format_func=S.METRIC_NAMES.get, key=S.METRIC,
                              bind=Q)
        view = S.View(model_choice, data_choice, method, metric, max_examples)
        if S.is_first_visit(view, names[0]):
            done, job = C.first_visit_study(view, spec, loaded, ev)
            if done is None:
                st.info("Switching off each of the example's heads and layers in turn on its "
                        "held-out sentences, once for every visitor; the page fills in by itself. "
                        + C.expected(ev), icon=":material/hourglass_top:")
                C.watch(job)
                shown = precomputed_result(S.PREFIX, ImportanceResult, method=method,
                                           description=ev.description)
                if shown is not None:  # the same view, precomputed, until this one is done
                    precomputed_note(shown[0])
                    R.show(shown[1], C.Marks([], []), metric,
                           (S.PREFIX, "precomputed", shown[0].get("made"), method), None, None)
                st.stop()
            result, marks = done
        else:
            result, marks = C.study(view, spec, loaded, ev)
    except (ModelLoadError, InputError, DataError) as exc:
        show_error(exc)
        st.stop()

    for note in result.notes:
        st.caption(plain(note))
    text, pair = ev.texts[0]
    source = dict(loaded=loaded, data=result.description, page="Head importance",
                  url_path="importance",
                  settings={"method": method, "score": S.METRIC_NAMES[metric]})
    C.remember(view, spec, result)
    live = R.Live(spec, loaded, text, pair, other=C.other_method(view, spec),
                  trained=trained_of(loaded, card))  # what its fine-tune trained (its card)
    R.show(result, marks, metric, C.result_key(view, spec), source, live)
