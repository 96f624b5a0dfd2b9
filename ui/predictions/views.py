"""The Predictions page's tabs: the table (filters in the URL, the confusion matrix's cells
filter it, a selected row opens into the other studies), the metrics by slice, two models side
by side, edit and compare, and robustness over the set. Nothing here answers the data again:
the table and a visitor's own slice are pandas over the result (``analysis.predictions.
table``), measured from its per-row counts."""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from analysis.attribution import NAMES
from analysis.predictions.edit import DEFAULT_METHOD
from analysis.predictions.metrics import (METRIC_NAMES, Resamples, metric_names, slice_changes,
                                          slice_metrics)
from analysis.predictions.robustness import KIND_NAMES, row_suggestions
from analysis.predictions.table import OUTCOMES, mask, view
from ui.common.chart_cache import draw, owned, owned_chart
from ui.common.errors import plain, show_error
from ui.common.exports.export import chart_downloads, csv_download, json_download
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain
from ui.common.frame.url_select import url_choice
from ui.predictions import blocks as B
from ui.predictions import compute as C
from ui.predictions import state as S
from ui.predictions.links import patching_link, pinnable, study_links

Q = "query-params"
EDIT_KINDS = ("opinion", "aspect", "swap")  # the suggestions' order in Edit and compare


def any_of(value: str) -> str:
    return "(any)" if value == S.ANY else value


def _picked(shown_rows) -> None:
    """The table's row selection -> the selected row (its index in the data)."""
    sel = st.session_state[S.TABLE].selection.rows
    if sel:
        S.set_row(int(shown_rows[sel[0]]))


def _cell(classes) -> None:
    """A confusion matrix cell clicked -> the table filtered to its gold label and answer."""
    picked = st.session_state[S.CONFUSION].selection.get("cell") or []
    if picked:
        S.set_filter(label=str(picked[0]["gold"]), prediction=str(picked[0]["prediction"]),
                     outcome="all")


def _filters(result, df):
    with st.expander("Filter and order the table", icon=":material/filter_list:",
                     expanded=S.current_filter().active):
        return _filter_widgets(result, df)


def _filter_widgets(result, df):
    f1, f2, f3, f4 = st.columns(4)
    classes = [S.ANY, *result.classes]
    f1.selectbox("Gold label", classes, format_func=any_of, key=S.FILTER["label"], bind=Q)
    f2.selectbox("Prediction", classes, format_func=any_of, key=S.FILTER["prediction"],
                 bind=Q)
    outcomes = [o for o in OUTCOMES if result.compare is not None or o in ("all", "wrong",
                                                                           "right")]
    f3.selectbox("Right or wrong", outcomes, format_func=S.OUTCOME_NAMES.get,
                 key=S.FILTER["outcome"], bind=Q)
    f4.text_input("Contains the word", key=S.FILTER["contains"], bind=Q, max_chars=100)
    g1, g2, g3, g4 = st.columns(4)
    top = int(df["tokens"].max()) if len(df) else 1
    g1.number_input("Tokens at least", 0, top, key=S.FILTER["min_tokens"], bind=Q)
    g2.number_input("Tokens at most (0: any)", 0, top, key=S.FILTER["max_tokens"], bind=Q)
    if result.absa:
        g3.selectbox("Aspect asked", [S.ANY, *dict.fromkeys(result.categories)],
                     format_func=any_of, key=S.FILTER["aspect"], bind=Q)
    if result.compare is not None:
        g4.selectbox("Second model's answer", classes, format_func=any_of,
                     key=S.FILTER["prediction_b"], bind=Q)
    o1, o2 = st.columns([2, 1])
    orders = [o for o in S.ORDER_NAMES if o != "disagreements" or result.compare is not None]
    default = "disagreements" if result.compare is not None else "errors"
    by = url_choice(o1, "Order", orders, key=S.ORDER, format_func=S.ORDER_NAMES.get,
                    default=default)
    desc = o2.toggle("Largest first", value=True, key=S.DESCENDING, bind=Q,
                     disabled=by in ("errors", "disagreements"))
    return S.current_filter(), by, desc


def _columns(result) -> list[str]:
    first = ["row", "review", "aspect"] if result.absa else ["row", "text"] + (
        ["pair"] if any(p is not None for p in result.pairs) else [])
    cols = first + ["gold", "prediction", "confidence", "loss", "tokens"]
    if result.compare is not None:
        cols += ["prediction_b", "confidence_b", "agree"]
    return cols


def _slice_line(result, keep) -> str:
    """The visitor's slice in words: its metrics with intervals (the result's resamples, as
    the study's own slices), and the second model's change of accuracy."""
    counts = owned(result, "counts", result.counts)
    # the study's resamples (the same seed, the same numbers), drawn once per result
    boot = owned(result, "resamples", lambda: Resamples(result.units))
    c = len(result.classes)
    got = slice_metrics(counts, boot, {"own": keep}, c, result.absa)["own"]
    parts = [f"{METRIC_NAMES[m]} {v['value']:.3g} ({v['low']:.3g} to {v['high']:.3g})"
             for m, v in got.items() if np.isfinite(v["value"]) and np.isfinite(v["low"])]
    line = f"This slice: {int(keep.sum())} of {result.n} examples; " + "; ".join(parts)
    if result.compare is not None:
        ch = slice_changes(counts, owned(result, "counts_b", lambda: result.counts(True)),
                           boot, {"own": keep}, c, result.absa)["own"]["accuracy"]
        line += (f". {result.compare} changes its accuracy by {ch['change']:+.1f} points "
                 f"({ch['low']:+.1f} to {ch['high']:+.1f})")
    return line + "."


def _own_slice(result, df, f) -> None:
    """The visitor's slice (the filter), measured once per filter from the result's rows."""
    keep = mask(df, f)
    if not keep.any():
        st.caption(f"This slice: none of the {result.n} examples matches the filter.")
        return
    st.caption(plain(owned(result, f"slice-{f}", lambda: _slice_line(result, keep))))


def table_tab(result, spec: str, data_choice: str, loaded, source) -> int:
    """The table; returns the selected row."""
    explain("Every example with its gold label and the model's answer; the wrong answers "
            "come first (the surest wrong answers, with the highest loss, at the top). Filter "
            "by label, answer, a word or length; click a cell of the confusion matrix to see "
            "its examples; click a row to open it in the other studies or to edit it.")
    df = C.table(result, id(result))
    f, by, desc = _filters(result, df)
    shown = view(df, f, by, desc)
    if f.active:
        _own_slice(result, df, f)
    clip = shown.head(S.TABLE_ROWS)
    cols = _columns(result)
    st.dataframe(clip[cols], hide_index=True, key=S.TABLE,
                 on_select=functools.partial(_picked, clip["row"].to_numpy()),
                 selection_mode="single-row",
                 column_config={"confidence": st.column_config.NumberColumn(format="%.3f"),
                                "loss": st.column_config.NumberColumn(format="%.3f"),
                                "confidence_b": st.column_config.NumberColumn(format="%.3f")})
    if len(shown) > len(clip):
        st.caption(f"The first {len(clip):,} of {len(shown):,} rows; filter to see others.")
    csv_download(lambda: shown, "predictions.csv", S.download_key("table"),
                 label="CSV of these rows")
    json_download(result.to_json, "predictions.json", S.download_key("json"),
                  "the whole result")
    add_button("Predictions: the table", f"{S.REPORT}-table", df=lambda: shown[cols].head(200),
               **source)
    built = owned_chart(result, "confusion", lambda: B.confusion_chart(result))
    draw(built, key=S.CONFUSION, on_select=lambda: _cell(result.classes),
         selection_mode="cell")
    chart_downloads(built.chart, "predictions-confusion", key=S.download_key("confusion"),
                    df=built.df)
    st.subheader("Open an example in a study")
    S.keep_row(int(shown["row"].iloc[0]) if len(shown) else 0, result.n)
    row = int(st.number_input("Example (its row number; click a row of the table)", 0,
                              result.n - 1, key=S.ROW, bind=Q))
    text = result.reviews[row] if result.absa else result.texts[row]
    asked = f" | asked about {result.categories[row]}" if result.absa else (
        f" | {result.pairs[row]}" if result.pairs[row] else "")
    st.markdown(plain(f"{text}{asked}: gold {result.classes[int(result.gold[row])]}, answer "
                      f"{result.classes[int(result.predictions[row])]}"))
    layers = loaded.n_layers if loaded is not None else 6
    links = study_links(spec, result, row, data_choice, layers)
    cols_ = st.columns(len(links))
    for col, link in zip(cols_, links):
        if link.url:
            col.link_button(f"Open in {link.page}", link.url, icon=":material/open_in_new:")
        if link.why:
            col.caption(plain(link.why))
    return row


def slices_tab(result, source) -> None:
    explain("Each row is a slice of the data (a gold label, an aspect asked about, a third of "
            "the inputs by length); the dot is its score, the bar its 95% bootstrap interval "
            "(resampling whole reviews), the dashed line the whole set's score. A bar wholly "
            "left of the line is a slice where the model is worse beyond chance.")
    names = list(metric_names(result.absa))
    metric = url_choice(st, "Score", names, key=S.SLICE_METRIC, format_func=METRIC_NAMES.get)
    built = owned_chart(result, f"slices-{metric}", lambda: B.slice_chart(result, metric))
    draw(built, stretch=True)
    chart_downloads(built.chart, "predictions-slices", key=S.download_key("slices"),
                    df=built.df)
    add_button("Predictions: metrics by slice", f"{S.REPORT}-slices", chart=built.chart,
               df=built.df.drop(columns="key"), **source)
    st.dataframe(built.df.drop(columns="key"), hide_index=True)
    csv_download(lambda: built.df, "predictions-metrics.csv", S.download_key("metrics"),
                 label="CSV of the metrics")


def compare_tab(result, compare: str, source) -> None:
    if result.compare is None:
        if compare not in (S.BEFORE, S.NO_COMPARE):
            st.info("Pick or upload the second model above.", icon=":material/info:")
        elif compare == S.NO_COMPARE:
            st.caption("Choose a second fine-tuned checkpoint under Second model to see both "
                       "models' answers side by side.")
        return
    explain("Both models answer the same examples. The change of each score is the second "
            "model's minus the first's, with a paired 95% bootstrap interval (the same "
            "resampled reviews for both): an interval that excludes 0 is a change beyond "
            "chance. The table's order 'disagreements first' lists the examples the two "
            "answer differently.")
    st.dataframe(B.change_frame(result), hide_index=True)
    names = list(metric_names(result.absa))
    metric = url_choice(st, "Change of", names, key=S.CHANGE_METRIC,
                        format_func=METRIC_NAMES.get)
    built = owned_chart(result, f"change-{metric}", lambda: B.change_chart(result, metric))
    draw(built, stretch=True)
    chart_downloads(built.chart, "predictions-change", key=S.download_key("change"),
                    df=built.df)
    add_button("Predictions: two models", f"{S.REPORT}-change", chart=built.chart,
               df=B.change_frame(result), **source)
    flips = result.flips or []
    st.caption(plain(f"{len(flips)} examples answered differently: "
                     f"{sum(f['change'] == 'fixed' for f in flips)} fixed, "
                     f"{sum(f['change'] == 'broken' for f in flips)} broken by "
                     f"{result.compare}."))


def edit_tab(result, row: int, spec: str, loaded, data, source, shown: bool = True) -> None:
    """Edit and compare; ``shown``: whether its tab is the open one. Its widgets are drawn
    either way (a typed edit stays), the edit is answered and attributed only while the tab is
    open: a click on a row of the table answered and attributed the row's first suggestion in
    the hidden tab, most of a select's time (bench/server/predictions_table.py, bench/README.md)."""
    explain("Change a few words of the selected example (or pick a suggested change) and "
            "compare the two answers and what the model used for each: the words are shaded "
            "by one attribution method of the Attribution page (blue: speaks for the answer, "
            "red: against it); the changed words are outlined.")
    if loaded is None or data is None:
        st.info("Editing opens once the classifier has answered the data here: it is on its "
                "way.", icon=":material/info:")
        return
    if data.per_row != 1:
        st.info("The QA-B and NLI-B tasks answer from five inputs per aspect: edit a row of a "
                "QA-M or NLI-M checkpoint.", icon=":material/info:")
        return
    text, pair = result.texts[row], result.pairs[row]
    found = row_suggestions(loaded, data, row)
    options = [("", text, pair)] + [(f"{KIND_NAMES[k]}: {s.note}", s.text, s.pair)
                                    for k in EDIT_KINDS for s in found.get(k, [])]
    pick = st.selectbox("Suggested change", list(range(len(options))),
                        index=1 if len(options) > 1 else 0,  # the first suggestion
                        format_func=lambda k: options[k][0] or "(type your own)",
                        key=S.suggestion_key(row))
    key_t, key_p = S.edit_keys(row, pick)  # a new suggestion: fresh boxes holding it
    e1, e2 = st.columns([3, 2])
    new_text = e1.text_input("Text (edit freely)", value=options[pick][1], key=key_t,
                             max_chars=2000)
    new_pair = e2.text_input("Second text", value=options[pick][2] or "", key=key_p,
                             max_chars=2000) or None
    method = url_choice(st, "Attribution method", list(NAMES), key=S.METHOD,
                        default=DEFAULT_METHOD, format_func=NAMES.get)
    if (new_text, new_pair) == (text, pair):
        st.info("Change a word, or pick a suggested change, to see both answers and what the "
                "model used for each.", icon=":material/edit:")
        return
    if not shown:  # answered when the tab opens (the tab switch reruns the page)
        return
    try:
        ed = C.edit(spec, loaded, data, text, pair, new_text, new_pair, method)
    except C.ERRORS as exc:
        show_error(exc)
        return
    for col, side, name in zip(st.columns(2), (ed.before, ed.after), ("Example", "Edited")):
        p = side.prediction
        col.metric(name, plain(ed.classes[p]), f"{100 * side.probabilities[p]:.1f}% sure",
                   delta_color="off", delta_arrow="off")
        col.html(B.edit_chips(side, ed.method))
    st.caption(plain("The answer flips." if ed.flipped else "The answer stays the same."))
    add_button("Predictions: an edit", f"{S.REPORT}-edit", numbers={
        "example": f"{text} | {pair}", "edited": f"{new_text} | {new_pair}",
        "answers": f"{ed.classes[ed.before.prediction]} -> {ed.classes[ed.after.prediction]}"},
        **source)


def robustness_tab(result, spec: str, data_choice: str, source) -> None:
    if not result.robustness:
        st.info("No counterfactual kind fits this data (the QA-B and NLI-B tasks answer from "
                "five inputs per aspect).", icon=":material/info:")
        return
    explain("For every example the page makes one small change of each kind and asks the "
            "model again. The flip rate is the share of answers that change, per slice, with "
            "its 95% interval. Asking about another aspect or turning the opinion word into "
            "its opposite should often change the answer; a model that never flips may not be "
            "reading those words. Each flip opens in Causal patching, which finds the heads "
            "that carry the change.")
    kinds = list(result.robustness)
    kind = url_choice(st, "Change", kinds, key=S.KIND, format_func=KIND_NAMES.get,
                      widget="radio", horizontal=True)
    built = owned_chart(result, f"flips-{kind}", lambda: B.flip_chart(result, kind))
    draw(built, stretch=True)
    chart_downloads(built.chart, "predictions-flips", key=S.download_key("flips"),
                    df=built.df)
    add_button("Predictions: flip rates", f"{S.REPORT}-flips", chart=built.chart,
               df=B.flip_frame(result), **source)
    pin = pinnable(result, data_choice) and kind in ("aspect", "opinion")
    df = B.flips_list(result, kind, lambda k: patching_link(
        spec, int(result.sentence[k]), result.categories[k], kind) if pin else None)
    if not len(df):
        st.caption("No answer flips.")
        return
    if not pin:
        df = df.drop(columns="open")
        st.caption("Causal patching pins the held-out reviews of the bundled sample with its "
                   "own suggestions (another aspect, the opposite opinion word); these flips "
                   "are not among them.")
    if not result.absa:
        df = df.drop(columns="aspect")
    st.dataframe(df, hide_index=True, column_config={"open": st.column_config.LinkColumn(
        "Causal patching", display_text="open")})
