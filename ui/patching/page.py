"""Causal patching: which heads, and which layers at which positions, carry a classifier's
decision from an input to a minimally changed counterfactual (Vig et al. 2020; Meng et al.
2022). Opens on the example checkpoint, a held-out review and a suggested counterfactual; the
corpus view (every held-out pair) goes through the queue on request."""

from __future__ import annotations

import streamlit as st

from analysis.core.errors import DataError, InputError
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError
from analysis.patching.reading import corpus_reading, name, pair_reading, top_heads
from analysis.patching.run import pair_max_length
from ui.common.chart_cache import cached_chart, draw
from ui.common.errors import plain, show_error
from ui.common.example import wait_for_example
from ui.common.exports.export import chart_downloads
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.common.frame.links import CANNOT_CARRY, attention_link, copy_link
from ui.common.frame.sidebar import context
from ui.common.frame.url_select import url_choice
from ui.patching import blocks as B
from ui.patching import compute as C
from ui.patching import precomputed
from ui.patching import state as S
from analysis.absa.data import CATEGORIES


def render() -> None:
    """The page, top to bottom (pages/patching.py calls it on every run)."""
    Q = "query-params"
    st.title("Causal patching")
    st.caption("Run a classifier on an input and on a counterfactual that differs in one "
               "controlled way, then rerun the input with one part of the model taken from the "
               "counterfactual (Vig et al. 2020; Meng et al. 2022): how much of the change in the "
               "answer does that part carry?")
    ctx = context()

    c1, c2, c3 = st.columns(3)
    model_choice = c1.radio("Classifier", S.MODELS, key=S.MODEL, horizontal=True, bind=Q)
    direction = c2.radio("Direction", list(S.DIRECTIONS), format_func=S.DIRECTIONS.get,
                         key=S.DIRECTION, bind=Q)
    scale = c3.radio("Numbers", list(S.SCALES), format_func=S.SCALES.get, key=S.SCALE, bind=Q)

    explain("A classifier gives an answer for the input (here: the sentiment a review expresses "
            "about an aspect). The counterfactual changes one thing, such as the aspect asked "
            "about or an opinion word, and the answer changes. **Patching** reruns the input with "
            "the output of one part of the model (one head, or one layer at one word) copied from "
            "the counterfactual's run. If the answer moves all the way to the counterfactual's, "
            "that part carries the whole change (100%); if nothing moves, none of it (0%). The "
            "change is measured on the gap between the two answers' scores (logits), as "
            "Zhang & Nanda (2024) advise; the probability view shows how the input's answer's "
            "probability moves instead. **Noising** copies from the counterfactual into the "
            "input's run (does the model need this part to keep its answer?); **denoising** "
            "copies from the input into the counterfactual's run (is this part enough to bring "
            "the answer back?). Both inputs must have the same number of tokens, because parts "
            "are copied position by position.")

    spec = EXAMPLE_SPEC if model_choice == S.EXAMPLE else ctx.spec
    if spec == EXAMPLE_SPEC and not wait_for_example(
            "This page opens on the example checkpoint (the embedded model fine-tuned on the "
            "bundled restaurant reviews): once it is built, it shows for a held-out review and "
            "its counterfactual which of its 72 heads, and which of its 6 layers at which words, "
            "carry the change of its answer. The embedded model alone has no classifier, so "
            "there is no answer to patch before then."):
        precomputed.show(direction, scale)  # the example's own, meanwhile (issue 49)
        st.stop()
    try:
        loaded, card = C.classifier(spec)
        ev = C.heldout(spec, loaded, card)
    except (ModelLoadError, InputError, DataError) as exc:
        show_error(exc)
        st.stop()

    max_length = pair_max_length(loaded, card)
    edited_note = None
    if ev is not None:
        n = len(ev.sentences)
        # the page's own pair, not the first options: bound by url_choice (a link to review 0 or
        # the first aspect keeps it; the review's number, not its text, goes in the URL)
        i0, cat0 = C.default_pair(spec, loaded, ev, max_length)
        r1, r2 = st.columns([3, 1])
        i = url_choice(r1, "Held-out review", list(range(n)), key=S.REVIEW, default=i0,
                       format_func=lambda k: plain(ev.sentences[k]["text"][:90]))
        category = url_choice(r2, "Aspect asked about", list(CATEGORIES), key=S.ASPECT,
                              default=cat0)
        found, (text, pair) = C.suggestions(spec, C.checkpoint_stamp(spec), i, category, loaded,
                                            ev, max_length)
        kinds = [k for k in S.KINDS if k == "typed" or found.get(k)]
        k1, k2 = st.columns([1, 2])
        kind = url_choice(k1, "Counterfactual", kinds, format_func=S.KINDS.get, key=S.KIND,
                          default="opinion" if "opinion" in kinds else kinds[0], widget="radio")
        if kind != "typed":
            options = found[kind]
            pick = url_choice(k2, "Suggestion", list(range(len(options))), key=S.SUGGESTION,
                              format_func=lambda k: plain(options[k][0]))
            _, sug_text, sug_pair = options[pick]
        else:
            sug_text, sug_pair = text, pair
        suffix = f"{i}-{category}-{kind}-{st.session_state.get(S.SUGGESTION)}"
        e1, e2 = st.columns([3, 1])
        e1.markdown(f"**Input:** {plain(text)} | {plain(pair)}")
        ctext = e1.text_input("Counterfactual text A (edit freely)", value=sug_text,
                              key=S.counter_key(S.CTEXT, suffix))
        cpair = e2.text_input("Counterfactual text B", value=sug_pair,
                              key=S.counter_key(S.CPAIR, suffix))
        if (ctext, cpair) != (sug_text, sug_pair):
            edited_note = CANNOT_CARRY.format(what="the edited counterfactual")
    else:
        st.caption("This classifier has no ABSA card: type an input and its counterfactual (the "
                   "same number of tokens).")
        t1, t2 = st.columns([3, 1])
        text = t1.text_input("Input text A", value=ctx.text or "The food was great.", key=S.TEXT)
        pair = t2.text_input("Input text B (optional)", value=ctx.pair or "", key=S.PAIR) or None
        u1, u2 = st.columns([3, 1])
        ctext = u1.text_input("Counterfactual text A", value=text, key=S.CTEXT)
        cpair = u2.text_input("Counterfactual text B", value=pair or "", key=S.CPAIR) or None
        edited_note = CANNOT_CARRY.format(what="typed text")
    copy_link(S.COPY, note=edited_note)
    if (ctext.strip(), (cpair or "").strip()) == (text.strip(), (pair or "").strip()):
        st.info("The counterfactual is the input itself: change a word (keeping the number of "
                "tokens) to see which parts of the model carry the change of the answer.",
                icon=":material/edit:")
        st.stop()

    try:
        r = C.pair_result(spec, loaded, card, text, pair, ctext, cpair, direction)
    except (ModelLoadError, InputError, DataError) as exc:
        show_error(exc)
        st.stop()

    for note in r.notes:
        st.caption(plain(note))
    a, b = r.classes
    preds = r.predictions
    L, H = r.heads.shape
    # the head carrying most: the largest share; in probability, the largest move of P(answer)
    # towards the other run's (down when noising, up when denoising)
    sign = -1.0 if scale == "probability" and direction == "noising" else 1.0
    best = top_heads(sign * B.heads_values(r, scale))[0]
    best = (best[0], best[1], float(B.heads_values(r, scale)[best[0], best[1]]))
    numbers = {"Input's answer": preds[0], "Counterfactual's answer": preds[1],
               f"Gap {a} - {b}": f"{r.contrast.clean:+.2f} to {r.contrast.counter:+.2f}",
               "Head carrying most": (f"{name(best[0], best[1])} ({best[2]:+.0%})"
                                      if scale == "share"
                                      else f"{name(best[0], best[1])} ({best[2]:+.3f})")}
    for col, (label, value) in zip(st.columns(len(numbers)), numbers.items()):
        col.metric(label, plain(value))

    source = dict(loaded=loaded, data=f"{text} | {pair}  vs  {ctext} | {cpair}",
                  page="Causal patching", url_path="patching",
                  settings={"direction": direction, "numbers": S.SCALES[scale]})
    st.subheader("Reading")
    lines = pair_reading(r)
    st.markdown(glossed("\n".join(f"- {plain(line)}" for line in lines)))
    add_button("Causal patching: the reading", f"{S.REPORT}-reading", reading=lines,
               numbers=numbers, **source)

    key = (S.PREFIX, spec, C.checkpoint_stamp(spec), text, pair, ctext, cpair, direction, scale)
    tabs = st.tabs(S.TABS, key=S.TAB, bind=Q)
    with tabs[0]:
        explain("Each square is one head (rows: layers, columns: heads, counted from 1): its "
                "output copied alone from the other run. Red: it carries part of the change "
                "(100% = all of it); blue: it pushes the other way; white: nothing.")
        built = cached_chart(("heads", *key), lambda: B.heads_chart(r, scale))
        draw(built, stretch=True)
        chart_downloads(built.chart, "patching-heads", key=S.download_key("heads"), df=built.df)
        add_button("Each head patched alone", f"{S.REPORT}-heads", chart=built.chart,
                   numbers=numbers, **source)
        p1, p2, p3 = st.columns([1, 1, 2], vertical_alignment="bottom")
        # the strongest head by default: bound by url_choice (a link to layer or head 1 keeps it)
        # ... and back on the best head when a rerun (an edited counterfactual) has another
        layer = int(url_choice(p1, "Layer", list(range(1, L + 1)), key=S.LAYER,
                               default=best[0] + 1, follows=key))
        head = int(url_choice(p2, "Head", list(range(1, H + 1)), key=S.HEAD, default=best[1] + 1,
                              follows=key))
        p3.markdown(plain(f"Head {layer}-{head}: {r.heads[layer - 1, head - 1]:+.1%} of the change;"
                          f" P({a}) {r.heads_prob[layer - 1, head - 1]:+.3f}"))
        st.link_button(f"Open head {layer}-{head} in the Attention page",
                       attention_link(spec, text, pair, layer, head), icon=":material/visibility:")
    with tabs[1]:
        explain("Causal tracing (Meng et al. 2022): each square copies one layer's output at one "
                "word (rows: layers from 1, columns: the input's tokens) from the other run. The "
                "outlined columns are the tokens where the two inputs differ: early layers carry "
                "the change there; later ones at the token the classifier reads ([CLS]). The "
                "attention and MLP maps copy only that part of the layer.")
        for site in ("residual", "attention", "mlp"):
            built = cached_chart((site, *key), lambda site=site: B.positions_chart(r, site, scale))
            draw(built, stretch=True)
            chart_downloads(built.chart, f"patching-{site}", key=S.download_key(site),
                            df=built.df)
            add_button(f"Causal tracing: {S.SITE_NAMES[site]}", f"{S.REPORT}-{site}",
                       chart=built.chart, **source)
    with tabs[2]:
        if ev is None:
            st.info("The corpus view averages over held-out ABSA pairs: open it with the example "
                    "checkpoint or an ABSA checkpoint of this dashboard.", icon=":material/info:")
        else:
            explain("The per-head map of every held-out pair (each review asked about each "
                    "aspect) against its suggested counterfactual, averaged, with 95% bootstrap "
                    "intervals over the reviews. Pairs whose counterfactual barely moves the "
                    "answer are left out. Compared with Head importance (which heads the task "
                    "needs on average) by Spearman's rank correlation; the Aspect heads page's "
                    "top heads are outlined black, the heads that look mostly at [SEP] purple.")
            contrast = st.radio("Counterfactual of every pair", ["aspect", "opinion"],
                                format_func=S.KINDS.get, key=S.CONTRAST, horizontal=True, bind=Q)
            # a callback: the request is kept even when the page reruns right after the click
            st.button("Compute the corpus view", key=S.CORPUS, icon=":material/play_arrow:",
                      on_click=st.session_state.__setitem__,
                      args=(S.CORPUS_ON, (contrast, direction)))
            if st.session_state.get(S.CORPUS_ON) == (contrast, direction):
                try:
                    cr = C.corpus_result(spec, loaded, card, ev, contrast, direction)
                except (InputError, DataError) as exc:
                    show_error(exc)
                    st.stop()
                clines = corpus_reading(cr)
                st.markdown("\n".join(f"- {plain(line)}" for line in clines))
                ckey = (S.PREFIX, "corpus", spec, C.checkpoint_stamp(spec), contrast, direction)
                built = cached_chart(("corpus", *ckey), lambda: B.corpus_chart(cr))
                draw(built, stretch=True)
                chart_downloads(built.chart, "patching-corpus", key=S.download_key("corpus"),
                                df=built.df)
                add_button("Causal patching over the held-out pairs", f"{S.REPORT}-corpus",
                           chart=built.chart, reading=clines, **source)
                if cr.importance is not None:
                    built = cached_chart(("against", *ckey), lambda: B.against_importance_chart(cr))
                    draw(built, stretch=True)
            else:
                st.caption("Every held-out pair is patched head by head, then Head importance "
                           "runs on the same pairs: minutes on a small server; it waits its "
                           "turn in the queue.")
