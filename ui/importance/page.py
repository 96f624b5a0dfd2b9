"""Head importance: switch each head and each layer of a fine-tuned classifier off and see
what it loses (Kovaleva et al. 2019; Michel et al. 2019). Opens on the example checkpoint and
its held-out sentences; every control is in the URL (the upload excepted)."""

from __future__ import annotations

import streamlit as st

from analysis.core.cards import trained_of
from analysis.core.errors import DataError, InputError
from analysis.importance.reading import free_heads, name, reading, removable_together
from analysis.importance.scoring import LOSS
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError
from ui.server.settings import settings
from ui.common.frame.corpus import cap_widget
from ui.common.errors import plain, show_error
from ui.common.example import wait_for_example
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain
from ui.common.frame.links import CANNOT_CARRY, attention_link, copy_link
from ui.common.frame.sidebar import context
from ui.common.frame.url_select import url_choice
from ui.importance import blocks as B
from ui.importance import compute as C
from ui.importance import state as S


def render() -> None:
    """The page, top to bottom (pages/importance.py calls it on every run)."""
    Q = "query-params"
    st.title("Head importance")
    st.caption("Switch each attention head, and each whole layer, of a fine-tuned classifier off "
               "and measure what it loses on held-out labelled data (Kovaleva et al. 2019; Michel "
               "et al. 2019): most heads can go at no cost, a few matter.")
    ctx = context()

    c1, c2 = st.columns(2)
    model_choice = c1.radio("Classifier", S.MODELS, key=S.MODEL, horizontal=True, bind=Q)
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
                st.stop()
            result, marks = done
        else:
            result, marks = C.study(view, spec, loaded, ev)
    except (ModelLoadError, InputError, DataError) as exc:
        show_error(exc)
        st.stop()

    key = C.result_key(view, spec)  # the charts are built once per result
    L, H = result.shape
    m = metric
    text, pair = ev.texts[0]
    source = dict(loaded=loaded, data=result.description, page="Head importance",
                  url_path="importance", settings={"method": method, "score": S.METRIC_NAMES[m]})
    for note in result.notes:
        st.caption(plain(note))

    drops = result.drops(m)
    together = removable_together(result)
    tol = "1 point" if m != LOSS else f"{result.pruning['tolerance']:g} in loss"
    worst = divmod(int(drops.argmax()), H)
    unit = "" if m == LOSS else " points"
    numbers = {"Intact " + S.METRIC_NAMES[m]: f"{result.intact[m]:.3f}" if m == LOSS
               else f"{result.intact[m]:.1f}",
               "Heads free to go one at a time": f"{free_heads(result, m)} of {L * H}",
               "Costliest head": f"{name(*worst)} ({result.heads[m][worst]:+.2f}{unit})",
               f"Removable together within {tol}": f"{together[0]:.0%} ({together[1]} heads)",
               "Spearman (gradient)": "n/a" if result.spearman[m] != result.spearman[m]
               else f"{result.spearman[m]:.2f}"}
    # a metric's value is one short line (five share the page's width): the costliest head's
    # change goes under it, in full in its help
    change = f"{result.heads[m][worst]:+.2f}{unit}"
    short = {"Costliest head": dict(value=name(*worst), delta=change, delta_color="off",
                                    delta_arrow="off",
                                    help=f"Disabling head {name(*worst)} changes the "
                                         f"{S.METRIC_NAMES[m]} by {change}, more than any other "
                                         "head.")}
    for col, (label, value) in zip(st.columns(len(numbers)), numbers.items()):
        col.metric(label, **short.get(label, dict(value=value)))

    st.subheader("Reading")
    C.remember(view, spec, result)
    other = C.other_method(view, spec)  # the other way of switching heads off, when at hand
    trained = trained_of(loaded, card)  # what its fine-tune trained (its card), for the reading
    lines = reading(result, marks.aspect, marks.sep, other=other, trained=trained)
    st.markdown("\n".join(f"- {plain(line)}" for line in lines))
    add_button("Head importance: the reading", f"{S.REPORT}-reading", reading=lines,
               numbers=numbers, **source)

    tabs = st.tabs(S.TABS, key=S.TAB, bind=Q)
    with tabs[0]:
        explain("Each square is one head (rows: layers, columns: heads, counted from 1). Its "
                "colour "
                "is the change of the score when that head alone is switched off: red, the model "
                "gets worse without it; blue, it gets better; white, no change. A black border "
                "marks the Aspect heads page's top heads, a purple one the heads that put over "
                "half their attention on [SEP] (No-op statistics).")
        built = B.show(key, "map", lambda: B.map_chart(result, m, marks), "importance-map",
                       stretch=False)
        add_button("Change per head with the head disabled", f"{S.REPORT}-map", chart=built.chart,
                   numbers=numbers, **source)
        p1, p2, p3 = st.columns([1, 1, 2], vertical_alignment="bottom")
        # the most needed head by default: bound by url_choice (a link to layer or head 1 keeps it)
        layer = int(url_choice(p1, "Layer", list(range(1, L + 1)), key=S.LAYER,
                               default=worst[0] + 1))
        head = int(url_choice(p2, "Head", list(range(1, H + 1)), key=S.HEAD, default=worst[1] + 1))
        lo, hi = result.heads_ci[m][layer - 1, head - 1]
        p3.markdown(plain(f"Head {layer}-{head}: {result.heads[m][layer - 1, head - 1]:+.3f} "
                          f"(95% {lo:+.3f} to {hi:+.3f}), gradient importance "
                          f"{result.gradient[layer - 1, head - 1]:.3f}" + (
                              f"; with {S.METHODS[other.method]}: "
                              f"{other.heads[m][layer - 1, head - 1]:+.3f}"
                              if other is not None and m in other.heads else "")))
        st.link_button(f"Open head {layer}-{head} in the Attention page",
                       attention_link(spec, text, pair, layer, head), icon=":material/visibility:")
    with tabs[1]:
        explain("Each bar is a whole layer switched off (all its heads at once), with its 95% "
                "bootstrap interval.")
        built = B.show(key, "layers", lambda: B.layer_chart(result, m), "importance-layers")
        add_button("Change with a whole layer disabled", f"{S.REPORT}-layers", chart=built.chart,
                   **source)
    with tabs[2]:
        explain("The heads whose removal changes the score beyond its 95% bootstrap interval: "
                "the model needs them (hurts) or does better without them (helps).")
        df = B.beyond_table(result, m, spec, text, pair)
        B.show_table(df, S.TABLE)
        add_button("Heads beyond the interval", f"{S.REPORT}-table", df=df.drop(columns="open"),
                   **source)
    with tabs[3]:
        explain("Heads removed together, 0% to 90% of all of them, in three orders: the least "
                "harmful first by the measured change, by gradient importance, and at random (5 "
                "orders: the line is their mean, the band their range). The dashed line is the "
                "intact model.")
        built = B.show(key, "pruning", lambda: B.pruning_chart(result), "importance-pruning")
        add_button("Pruning curve", f"{S.REPORT}-pruning", chart=built.chart, **source)
    with tabs[4]:
        explain("Gradient importance (Michel et al.): how much the loss would move if a head's "
                "output were turned down a little, averaged over the examples and scaled per "
                "layer. If it ranks the heads as the measured drops do (Spearman correlation near "
                "1), it is a cheap stand-in for switching every head off.")
        built = B.show(key, "gradient", lambda: B.gradient_chart(result), "importance-gradient")
        add_button("Gradient importance against measured drops", f"{S.REPORT}-gradient",
                   chart=built.chart, **source)
