"""The Head atlas page (docs/METHODS.md section 18), the page a first visitor sees: what each
attention head does and whether the model uses it, from every study, in one grid. Opens on
the example checkpoint's precomputed atlas at once; the live atlas comes from the studies kept
on this server, the missing ones computed through the queue one at a time. Every control is in
the URL."""

from __future__ import annotations

from dataclasses import astuple, fields

import streamlit as st

from analysis.atlas import facts as F
from analysis.atlas.reading import FAMILY_WORDS
from analysis.core.errors import DataError, InputError
from analysis.core.example import example_ready
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError
from ui.atlas import blocks as B
from ui.atlas import compute as C
from ui.atlas import state as S
from ui.attention import state as attention_state
from ui.drift import state as drift_state
from ui.importance import state as importance_state
from ui.patching import state as patching_state
from ui.syntax import state as syntax_state
from ui.common.chart_cache import cached_chart, draw
from ui.common.errors import plain, show_error
from ui.common.exports.export import chart_downloads, json_download
from ui.common.exports.findings import add_button
from ui.common.frame.corpus import fit_narrow_screens
from ui.common.frame.explain import explain
from ui.common.frame.links import copy_link
from ui.common.frame.sidebar import context
from ui.common.frame.url_select import url_choice
from ui.server.settings import settings

Q = "query-params"
RULE_WORDS = {
    "positional": ("Positional", "share of a head's attention on the previous (or next) "
                   "token above which it is positional (Clark et al.: over half)"),
    "broad": ("Broad", "entropy, as a share of what perfectly even attention would give, "
              "from which a head is broad"),
    "noop": ("No-op", "share of attention on [SEP], [CLS] or . and , above which a head "
             "rests there"),
    "syntax": ("Syntactic", "how much more often than the best fixed offset a head must "
               "find a relation's head word"),
    "changed": ("Changed", "before/after cosine below which fine-tuning changed a head"),
    "carry": ("Carries", "patching share a head must carry, its 95% interval above 0, to "
              "count as used"),
}
RULES_TEXT = (
    "**The rules** (the numbers are the thresholds above). A head's "
    "**role** comes from where it looks, each study measured on its own bundled data: "
    "*positional* when over the threshold of its attention goes to the previous or next "
    "token; *broad* when its attention is nearly as spread out as even attention; *no-op* "
    "when it rests on [SEP], [CLS] or punctuation (a pattern, not a function: Clark et al. "
    "read it as doing nothing); *syntactic (relation)* when it finds a dependency relation's "
    "head word more often than the best fixed offset by the threshold, on a relation with at "
    f"least {F.DEFAULT.syntax_min} cases; *aspect* when, from the aspect word of the question, "
    "its attention on the aspect's words beats every baseline (its 95% interval above them); "
    "*opinion* when that holds only with the opinion words counted. *Mixed* where two rules "
    "hold, *none* where none does. **Used** means switching the head off (attention spread "
    "evenly, or output zeroed) moves the task's score beyond its 95% interval, or activation "
    "patching shows it carries more than the threshold of a decision's change; *not measured* "
    "for a model with "
    "no task. Pitfalls: a role is read from one corpus; with many heads and rules some pass "
    "by chance (no correction for testing every head); a head can look right and not be used, "
    "or be used without any rule holding.")


def links(example: bool) -> dict:
    """The study pages' own URL parameters of a pinned head (1-indexed), named in their state
    modules, and their choice of the example checkpoint: the evidence card's links open each
    page on the head."""
    return {"pins": {"drift": (drift_state.LAYER, drift_state.HEAD),
                     "syntax": (syntax_state.LAYER, syntax_state.HEAD),
                     "importance": (importance_state.LAYER, importance_state.HEAD),
                     "patching": (patching_state.LAYER, patching_state.HEAD),
                     "attention": (attention_state.LAYER, attention_state.HEAD)},
            "model": {"importance": {importance_state.MODEL: importance_state.EXAMPLE},
                      "patching": {patching_state.MODEL: patching_state.EXAMPLE}}
            if example else {}}


def _thresholds() -> F.Thresholds:
    values = {}
    with st.expander("The rules and their thresholds", icon=":material/tune:"):
        cols = st.columns(3)
        for i, (name, (label, help_)) in enumerate(RULE_WORDS.items()):
            values[name] = float(cols[i % 3].slider(
                label, 0.0, 1.0, float(getattr(F.DEFAULT, name)), 0.05, key=S.rule_key(name),
                bind=Q, help=help_))
        st.markdown(RULES_TEXT)
    return F.Thresholds(**values, syntax_min=F.DEFAULT.syntax_min)


def _source(spec: str, inp):
    """(result, label, key) of the live atlas, else the example's precomputed one (``key``:
    what the charts drawn from it are cached on); and what is missing."""
    result, missing, key = C.live(inp, C.data())
    if result is not None:
        return result, "Computed on this server.", key, missing
    pre = C.example_precomputed() if spec == EXAMPLE_SPEC else None
    if pre is not None:
        res, head = pre
        return (res.with_thresholds(inp.thresholds), head["label"],
                ("precomputed", head["made"], head["version"]), missing)
    return None, "", None, missing


def _pick(heads, L: int, H: int):
    """The pinned head: a click on the grid, else the URL's, else the most used head."""
    event = (st.session_state.get(S.GRID) or {}).get("selection", {}).get("pick") or []
    if event and event[0] != st.session_state.get(S.PICKED):
        st.session_state[S.PICKED] = event[0]
        st.session_state[S.LAYER], st.session_state[S.HEAD] = (int(event[0]["layer"]),
                                                              int(event[0]["head"]))
    best = max(heads, key=lambda h: (h["size"] or 0, h["disagreement"] is not None,
                                     h["family"] != "none"))
    c1, c2 = st.columns(2)
    layer = int(url_choice(c1, "Layer", list(range(1, L + 1)), key=S.LAYER,
                           default=best["layer"] + 1))
    head = int(url_choice(c2, "Head", list(range(1, H + 1)), key=S.HEAD,
                          default=best["head"] + 1))
    return heads[(layer - 1) * H + head - 1]


def render() -> None:
    st.title("Head atlas")
    fit_narrow_screens()
    st.caption("What does each attention head do, and does the model use it? One verdict per "
               "head from every study (No-op statistics, Syntax, Aspect heads, Fine-tuning "
               "drift, Head importance, Causal patching), in one grid; click a head for its "
               "evidence (Clark et al. 2019; Kovaleva et al. 2019).")
    ctx = context()
    choice = st.radio("Model", S.MODELS, key=S.MODEL, horizontal=True, bind=Q,
                      help="The example checkpoint: the embedded model fine-tuned on the "
                           "bundled restaurant reviews, compared with the embedded model "
                           "before fine-tuning.")
    spec = EXAMPLE_SPEC if choice == S.EXAMPLE else ctx.spec
    before = C.before_for(spec)
    t = _thresholds()
    inp = C.inputs(spec, before, t)
    try:
        result, label, key, missing = _source(spec, inp)
    except (DataError, InputError, ModelLoadError) as exc:
        show_error(exc)
        st.stop()
    copy_link(S.COPY)
    offer = lambda: _offer_compute(inp, spec, missing)  # noqa: E731
    if result is None:
        offer()
        st.stop()
    _show(result, label, spec, (*key, *astuple(result.thresholds)), offer)


def _offer_compute(inp, spec: str, missing) -> None:
    """What is not computed on this server yet, how long it takes, and the button that computes
    it through the queue: under the verdict, since the page shows the precomputed atlas first."""
    if not missing:
        return
    ready = spec != EXAMPLE_SPEC or example_ready()
    allowed = spec == EXAMPLE_SPEC or not settings().demo  # a demo computes its example
    text, button = st.columns([4, 1], vertical_alignment="center")
    text.caption(plain(f"Not computed on this server yet, {len(missing)} of the atlas's "
                       f"studies: {', '.join(s.title for s in missing)}. They take "
                       f"{C.estimate(missing, spec)}")
                 + ("" if ready else " The example checkpoint is still being built.")
                 + ("" if allowed else " This server computes the example's atlas only."))
    if ready and allowed and button.button("Compute them", key=S.COMPUTE,
                                           icon=":material/play_arrow:"):
        try:
            C.compute_missing(inp, missing)
        except (DataError, InputError, ModelLoadError) as exc:
            show_error(exc)
            st.stop()
        st.rerun()


def _show(result, label: str, spec: str, key: tuple, offer) -> None:
    st.caption(plain(f"{result.model_name}: {result.n_layers} layers x {result.n_heads} heads, "
                     f"numbered from 1. {label}"))
    for note in result.notes:
        st.caption(plain(note))
    out = result.to_json()
    st.subheader("The model")
    st.markdown("\n".join(f"- {plain(line)}" for line in out["reading"]))
    task = result.model_facts.get("task")
    source = dict(loaded=None, data=label, page="Head atlas", url_path="atlas",
                  settings={k.name: getattr(result.thresholds, k.name)
                            for k in fields(result.thresholds)})
    add_button("Head atlas: the model verdict", f"{S.REPORT}-reading", reading=out["reading"],
               **source)
    offer()
    f1, f2 = st.columns([2, 1])
    fams = f1.multiselect("Roles shown (none chosen: all)", list(B.COLOURS), key=S.FAMILIES,
                          bind=Q, format_func=lambda f: B.FAMILY_LABELS[f])
    use = f2.selectbox("Heads shown", S.USES, key=S.USE, bind=Q)
    explain("Each square is one head: rows are layers, columns heads. Its **colour** is its "
            "head role (" + "; ".join(f"*{f}*: {w}" for f, w in FAMILY_WORDS.items()) + "). Its "
            "**size** is how much the task loses when the head alone is switched off (the "
            "larger of the two ways); a middle size where that is not measured. A **black "
            "outline** marks a head fine-tuning changed. Heads the filters leave out are "
            "faded. Click a head for its evidence below.")
    heads = result.heads()
    use_label = task["label"] if task else None
    shown = (tuple(fams), use)
    two = result.facts_before is not None
    # built once per result, thresholds and filters (ui.common.chart_cache): a rerun only draws
    built = cached_chart(("atlas grid", *key, *shown), lambda: B.grid(
        heads, result, "After fine-tuning" if two else result.model_name, use_label, *shown))
    cols = st.columns(2) if two else [st.container()]
    with cols[0]:
        draw(built, key=S.GRID, on_select="rerun", selection_mode="pick")
    if two:
        with cols[1]:
            draw(cached_chart(("atlas grid before", *key, *shown), lambda: B.grid(
                result.heads(before=True), result, f"Before: {result.before_name}", None,
                *shown, select=False)), key=S.GRID_BEFORE)
    chart_downloads(built.chart, "head-atlas", key=S.DOWNLOADS, df=lambda: B.table(heads))
    add_button("Head atlas: the grid", f"{S.REPORT}-grid", chart=built.chart,
               reading=out["reading"], **source)

    st.subheader("One head's evidence")
    h = _pick(heads, result.n_layers, result.n_heads)
    B.card(h, spec, links(spec == EXAMPLE_SPEC))
    if out["disagreements"]:
        st.subheader("Role and use disagree")
        st.markdown("\n".join(f"- {plain(line)}" for line in out["disagreements"]))
    with st.expander("Every head in a table"):
        st.dataframe(B.table(heads), hide_index=True, key=S.TABLE)
    json_download(out, "head_atlas.json", S.JSON, "the atlas")
