"""The Head importance page's per-example view (docs/METHODS.md section 12, "One example"): one
input with its gold label (for an ABSA checkpoint of QA-M / NLI-M, the example's: a review and
the aspect category asked), every head and layer switched off on it through the job queue, its
map, its top heads, the flips, a plain reading and the exports. Every input is in the URL
(:mod:`ui.importance.state`: text, pair, label, aspect), so the Predictions page opens a row
here."""

from __future__ import annotations

import streamlit as st

from analysis.absa.tasks import ASPECT_WORDS, LABELS, is_binary
from analysis.core.errors import DataError, InputError
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError, checkpoint_stamp
from analysis.importance.one import class_names, one_reading
from analysis.importance.reading import name
from analysis.importance.study import ONE, OneInputs
from ui.common.errors import plain, show_error
from ui.common.example import wait_for_example
from ui.common.exports.export import csv_download, json_download
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.common.frame.links import copy_link
from ui.common.frame.resources import token_capped
from ui.common.frame.sidebar import MAX_TEXT_CHARS
from ui.common.frame.url_select import url_selectbox
from ui.common.heads import decimals
from ui.common.jobs import SHORT, run_job
from ui.importance import blocks as B
from ui.importance import compute as C
from ui.importance import state as S
from ui.server.settings import settings

Q = "query-params"
DEFAULT_ASPECT = "food"


def text_cap() -> int:
    """The most characters of a text this server reads (demo mode: ``max_line_chars``)."""
    return int(settings().cap("max_line_chars", MAX_TEXT_CHARS))


def _checked(text: str, what: str) -> str:
    cap = text_cap()
    if text is not None and len(text) > cap:
        raise InputError(f"{what} has {len(text)} characters; this server reads at most {cap}.")
    return text


def _label(container, classes, loaded):
    """The gold label's box; a link's label that is not one of ``classes`` is refused (one
    line), a label in another case is taken as the classifier's."""
    raw = st.query_params.get(S.LABEL)
    if raw is not None and raw not in classes:
        match = [c for c in classes if c.lower() == raw.strip().lower()]
        if not match:
            raise DataError(f"The label {raw[:40]!r} is not one of {loaded.name}'s labels "
                            f"({', '.join(classes)}).")
        st.query_params[S.LABEL] = match[0]
    return url_selectbox(container, "Gold label", list(classes), key=S.LABEL,
                         help="The example's correct answer: the loss and the gold label's "
                              "probability are measured against it.")


def inputs(ctx, loaded, card) -> tuple[str, str | None, str, str | None]:
    """(text, pair, label, aspect) from the boxes (bound to the URL; the sidebar's input by
    default); an ABSA checkpoint of QA-M or NLI-M reads a review and an aspect category."""
    asks = card is not None and not is_binary(card["task"])
    c1, c2 = st.columns([3, 2])
    text = c1.text_area("Review" if asks else "Text", key=S.TEXT, bind=Q, height=90,
                        **({} if S.given(S.TEXT) else {"value": ctx.text}))
    pair = aspect = None
    if asks:
        aspect = url_selectbox(c2, "Aspect asked", list(ASPECT_WORDS), key=S.ASPECT,
                               default=DEFAULT_ASPECT,
                               help="The checkpoint reads the review with this aspect as its "
                                    "second text, as it was trained (and as a Predictions row).")
        classes = LABELS
    else:
        pair = c2.text_input("Second text (optional)", key=S.PAIR, bind=Q,
                             **({} if S.given(S.PAIR) else {"value": ctx.pair or ""}))
        classes = class_names(loaded)
    label = _label(c2, classes, loaded)
    return _checked(text, "The text"), _checked(pair or None, "The second text"), label, aspect


@st.cache_data(max_entries=16, show_spinner=False)
def _result(key: tuple, _loaded, _card, text: str, pair, label: str, aspect, method: str):
    plan = ONE.plan(OneInputs(_loaded.spec, text, pair, label, aspect, method), (_loaded, _card))
    return run_job(S.ONE_KIND, plan, key=S.job_key(key, S.ONE_JOB), lane=SHORT,
                   kind=S.ONE_KIND, size=1, unit="examples")


def result_of(spec: str, loaded, card, text, pair, label, aspect, method: str):
    """The one-example result through the queue (its short lane), cached on the model, the
    server's token cap and the inputs; bad input is refused before any work."""
    capped = token_capped(loaded)
    key = (S.PREFIX, "one", spec, checkpoint_stamp(spec), capped.max_length, text, pair, label,
           aspect, method)
    return key, _result(key, capped, card, text, pair, label, aspect, method)


def render(ctx, model_choice: str, method: str) -> None:
    """The per-example view below the page's model and method choices."""
    explain("One example instead of a data set: each head, then each whole layer, is switched "
            "off in turn while the model reads this one input, and the page shows how much the "
            "gold label's probability, the answer's probability and the loss change, and "
            "whether the answer flips. The gate gradient (Michel et al.) is how much the loss "
            "would move if the head's output were turned down a little, for this example. One "
            "example has no interval: its changes are its own, not the model's on a population "
            "of inputs; the whole held-out set is the other view.")
    spec = EXAMPLE_SPEC if model_choice == S.EXAMPLE else ctx.spec
    if spec == EXAMPLE_SPEC and not wait_for_example(
            "This view reads one review with the example checkpoint (the embedded model "
            "fine-tuned on the bundled restaurant reviews) once it is built."):
        st.stop()
    try:
        loaded, card = C.classifier(spec)
        text, pair, label, aspect = inputs(ctx, loaded, card)
        copy_link(S.COPY)
        key, result = result_of(spec, loaded, card, text, pair, label, aspect, method)
    except (ModelLoadError, InputError, DataError) as exc:
        show_error(exc)
        st.stop()
    show(result, key, spec, loaded, method)


def tiles(result) -> None:
    p, k, g = result.probabilities, result.predicted, result.gold
    flips = result.flipped()
    cols = st.columns(4)
    cols[0].metric("Answer", plain(result.classes[k]), f"{100 * p[k]:.1f}% sure",
                   delta_color="off", delta_arrow="off")
    cols[1].metric("Gold label", plain(result.label), f"{100 * p[g]:.1f}%", delta_color="off",
                   delta_arrow="off")
    cols[2].metric("Loss", f"{result.loss:.3f}")
    cols[3].metric("Heads that flip it", f"{len(flips)} of {result.gradient_raw.size}")


def show(result, key: tuple, spec: str, loaded, method: str) -> None:
    """The example's numbers, reading, map, top heads, layers and exports."""
    for note in result.notes[:-1]:  # the last: no interval, said by the reading
        st.caption(plain(note))
    tiles(result)
    st.subheader("Reading")
    lines = one_reading(result, C.whole_at_hand(spec, method))
    st.markdown(glossed("\n".join(f"- {plain(line)}" for line in lines)))
    flips = result.flipped()
    st.caption(plain("Heads that flip the answer: " + ", ".join(
        f"{name(l, h)} (to {c})" for l, h, c in flips) if flips else
        "No single head flips the answer."))
    source = dict(loaded=loaded, data="one example", page="Head importance",
                  url_path="importance",
                  settings={"method": S.METHODS[method], "gold label": result.label,
                            **({"aspect": result.aspect} if result.aspect else {})})
    numbers = {"Answer": result.classes[result.predicted], "Gold label": result.label,
               "Loss": f"{result.loss:.3f}", "Heads that flip it": str(len(flips))}
    add_button("Head importance, one example: the reading", f"{S.REPORT}-one-reading",
               reading=lines, numbers=numbers, **source)
    measure = url_selectbox(st, "Change of", list(B.ONE_MEASURES), key=S.MEASURE,
                            format_func=B.ONE_MEASURES.get)
    explain("Each square is one head (rows: layers, columns: heads, counted from 1). Its colour "
            "is the change when that head alone is switched off for this example: red, the "
            "example fares worse without it (a lower probability, a higher loss); blue, better. "
            "A black border marks a head whose removal flips the answer.")
    built = B.show(key, f"one-map-{measure}", lambda: B.one_map_chart(result, measure),
                   "importance-one-map", stretch=False)
    add_button("One example: change per head disabled", f"{S.REPORT}-one-map",
               chart=built.chart, numbers=numbers, **source)
    st.subheader("The heads that matter most for this example")
    a, b = result.read_as or (result.text, result.pair)
    df = B.one_table(result, measure, S.ONE_TOP, spec, a, b)
    if df.empty:
        st.info("No head's removal moves this measure against the example.",
                icon=":material/info:")
    else:
        st.dataframe(df, hide_index=True, key=S.ONE_TABLE, column_config={
            **decimals(df), "open": st.column_config.LinkColumn("Attention page",
                                                                display_text="open head")})
    csv_download(lambda: df.drop(columns="open", errors="ignore"), "importance-one-heads.csv",
                 S.download_key("one-table"), label="Table (CSV)")
    add_button("One example: the heads that matter most", f"{S.REPORT}-one-table",
               df=df.drop(columns="open", errors="ignore"), **source)
    st.dataframe(B.one_layers(result), hide_index=True)
    json_download(result.to_json, "importance_one.json", S.download_key("one-json"),
                  "the result")
