"""The Features page's blocks: the quality metrics, the feature table, a feature's dashboard
(top contexts as escaped HTML coloured by activation, the activation histogram, the
alignment table, the class effects with intervals), the per-sentence view and the crosscoder's
charts (docs/METHODS.md section 19). Keys come from ``ui.features.state``."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from analysis.features.corpus import LABEL_NAMES
from analysis.features.crosscoder import CLASSES
from analysis.features.effects import unavailable
from analysis.features.study import dashboard
from analysis.features.study import effect as measure_effect
from ui.common.charts import fit_width
from ui.common.errors import plain
from ui.common.exports.export import chart_downloads
from ui.common.exports.findings import add_button
from ui.common.html import esc
from ui.features import state as S

CSS = ("<style>.fx-list{margin:0;padding:0;list-style:none}"
       ".fx-item{padding:4px 0;border-bottom:1px solid rgba(49,51,63,.1);line-height:1.9;"
       "overflow-wrap:anywhere}.fx-tok{padding:1px 2px;border-radius:3px}"
       ".fx-peak{font-weight:700;outline:1px solid #c45a00}"
       ".fx-sp{opacity:.6;font-size:.85em}.fx-meta{font-size:.8rem;opacity:.75}"
       ".fx-cut{opacity:.5}</style>")
CLASS_COLOURS = ["#4c78a8", "#9ecae9", "#bab0ac", "#ffbf79", "#f58518"]


def _shade(a: float, top: float) -> str:
    alpha = 0.0 if top <= 0 else min(1.0, max(0.0, a / top))
    return f"background:rgba(245,133,24,{0.85 * alpha:.2f})"


def tokens_html(tokens, acts, special=None, peak: int | None = None, top: float | None = None,
                titles=None) -> str:
    """Tokens as escaped spans coloured by ``acts`` (their share of ``top``, default the max);
    [CLS]/[SEP] dimmed, the peak outlined, each token's value in its tooltip."""
    top = max(acts) if top is None and len(acts) else (top or 0.0)
    out = []
    for i, (t, a) in enumerate(zip(tokens, acts)):
        cls = "fx-tok" + (" fx-sp" if special is not None and special[i] else "") + (
            " fx-peak" if peak == i else "")
        title = titles[i] if titles is not None else f"{float(a):.3f}"
        out.append(f"<span class='{cls}' style='{_shade(float(a), top)}' "
                   f"title='{esc(title)}'>{esc(t)}</span>")
    return " ".join(out)


def contexts_html(contexts: list[dict]) -> str:
    if not contexts:
        return "<p>This feature fires on no token of the corpus.</p>"
    top = max(c["activation"] for c in contexts)
    items = []
    for c in contexts:
        body = tokens_html(c["tokens"], c["acts"], c["special"], c["peak"], top)
        left = "<span class='fx-cut'>… </span>" if c.get("cut_left") else ""
        right = "<span class='fx-cut'> …</span>" if c.get("cut_right") else ""
        items.append(f"<li class='fx-item'><span class='fx-meta'>input {c['example']} · "
                     f"token {c['position']} · activation {c['activation']:.3f}</span><br>"
                     f"{left}{body}{right}</li>")
    return CSS + "<ol class='fx-list'>" + "".join(items) + "</ol>"


def histogram_chart(hist: dict, feature: int) -> alt.Chart:
    edges, counts = hist.get("edges") or [], hist.get("counts") or []
    df = pd.DataFrame({"from": edges[:-1], "to": edges[1:], "tokens": counts})
    return fit_width(alt.Chart(df, title=f"Feature #{feature}: activations where it fires")
                     .mark_bar(color="#f58518").encode(
        x=alt.X("from:Q", bin="binned", title="activation"), x2="to:Q",
        y=alt.Y("tokens:Q", title="tokens"),
        tooltip=[alt.Tooltip("from:Q", format=".3f"), alt.Tooltip("to:Q", format=".3f"),
                 "tokens:Q"]).properties(height=180))


def alignment_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"annotation": LABEL_NAMES.get(r["name"], r["name"]),
                          "label": r["label"], "precision": round(r["precision"], 3),
                          "recall": round(r["recall"], 3), "F1": round(r["f1"], 3),
                          "tokens with the label": r["support"]} for r in rows])


def effect_frame(effect: dict, class_names: list) -> pd.DataFrame:
    rows = []
    for c, name in enumerate(class_names):
        mean = effect["mean"][c]
        lo = effect["low"][c] if effect.get("low") else mean
        hi = effect["high"][c] if effect.get("high") else mean
        rows.append({"class": name, "change (points)": 100 * mean, "low": 100 * lo,
                     "high": 100 * hi})
    return pd.DataFrame(rows)


def effect_chart(df: pd.DataFrame, title: str) -> alt.Chart:
    """Each class's probability change (points) with its 95% interval, classes down the side
    (fits a phone)."""
    base = alt.Chart(df, title=title)
    bars = base.mark_bar(color="#4c78a8").encode(
        y=alt.Y("class:N", sort=None, title=None), x=alt.X("change (points):Q"),
        tooltip=["class:N", alt.Tooltip("change (points):Q", format="+.2f"),
                 alt.Tooltip("low:Q", format="+.2f"), alt.Tooltip("high:Q", format="+.2f")])
    rules = base.mark_rule(color="black").encode(y="class:N", x="low:Q", x2="high:Q")
    return fit_width((bars + rules).properties(height=max(100, 28 * len(df))))


def features_frame(result, sort: str) -> pd.DataFrame:
    f = result.features
    rows = []
    for i in range(len(f["freq"])):
        e = result.effects.get(i)
        biggest = max((abs(v) for v in (e or {}).get("mean") or []), default=None)
        a = f["align"][i] or {}
        rows.append({"feature": i, "fires on (%)": round(100 * f["freq"][i], 3),
                     "mean activation": round(f["mean"][i], 3), "label": f["label"][i],
                     "best annotation": f"{a.get('name', '')}={a.get('label', '')}" if a
                     else "", "F1": round(a.get("f1", 0.0), 3) if a else None,
                     "largest class effect (points)": None if biggest is None
                     else round(100 * biggest, 2)})
    df = pd.DataFrame(rows)
    column = "largest class effect (points)" if sort == "effect" else "fires on (%)"
    return df.sort_values(column, ascending=False, na_position="last", kind="stable")


def per_sentence_frame(view: dict, labels: list, k: int = 5) -> pd.DataFrame:
    rows = []
    for t, (tok, feats) in enumerate(zip(view["tokens"], view["features"])):
        rows.append({"position": t, "token": tok, "features (strongest first)": "; ".join(
            f"#{x['feature']} {x['activation']:.2f} ({labels[x['feature']]})"
            for x in feats[:k])})
    return pd.DataFrame(rows)


def share_chart(cc: dict) -> alt.Chart:
    """The latents' norm shares (0 = base-only, 1 = fine-tuned-only) as a histogram."""
    h = cc["share_histogram"]
    df = pd.DataFrame({"from": h["edges"][:-1], "to": h["edges"][1:], "latents": h["counts"]})
    df["side"] = [CLASSES[0] if a < 0.1 else CLASSES[4] if b > 0.9 else
                  CLASSES[2] if 0.4 <= a and b <= 0.6 else "between" for a, b in
                  zip(df["from"], df["to"])]
    return fit_width(alt.Chart(df, title="Where each latent lives: its decoder's share in the "
                                         "fine-tuned model").mark_bar().encode(
        x=alt.X("from:Q", bin="binned", title="0 = base model only · 1 = fine-tuned only",
                scale=alt.Scale(domain=[0, 1])), x2="to:Q",
        y=alt.Y("latents:Q", title="latents"),
        color=alt.Color("side:N", scale=alt.Scale(
            domain=[CLASSES[0], "between", CLASSES[2], CLASSES[4]],
            range=["#4c78a8", "#bab0ac", "#54a24b", "#f58518"]),
            legend=alt.Legend(orient="bottom", title=None)),
        tooltip=["from:Q", "to:Q", "latents:Q"]).properties(height=200))


def latents_frame(cc: dict) -> pd.DataFrame:
    rows = []
    for x in cc["latents"]:
        e = x.get("effect") or {}
        rows.append({"latent": x["latent"], "side": x.get("side", ""), "class": x["class"],
                     "share": round(x["share"], 3), "fires on (%)": round(100 * x["freq"], 3),
                     "label": x["label"],
                     "nu_eps": None if x["nu_eps"] is None else round(x["nu_eps"], 3),
                     "nu_r": None if x["nu_r"] is None else round(x["nu_r"], 3),
                     "check": x["spurious"] or "genuine",
                     "inputs for the effect": e.get("n")})
    return pd.DataFrame(rows)


def metrics(q: dict, m: int, k: int) -> None:
    cols = st.columns(3)
    cols[0].metric("Variance explained (held-out)", f"{100 * (q.get('fve') or 0):.1f}%",
                   help="How much of the layer's held-out vectors the dictionary rebuilds.")
    cols[1].metric("Features per token (L0)", f"{q.get('l0') or 0:.1f}",
                   help=f"k = {k} of {m} features at most.")
    cols[2].metric("Dead features", f"{100 * (q.get('dead') or 0):.1f}%",
                   help="Features that fire on no token of the corpus.")
    cols = st.columns(3)
    agr = q.get("agreement")
    if q.get("agreement_kind") == "classifier":
        cols[0].metric("Classifier agreement", f"{100 * (agr or 0):.1f}%",
                       help="Held-out inputs whose answer stays the same with the layer "
                            "replaced by its reconstruction.")
    else:
        cols[0].metric("Last-layer cosine", f"{agr or 0:.3f}",
                       help="The model has no task head: the mean cosine of its last "
                            "hidden states with the layer replaced, against the intact run.")
    cols[1].metric("Loss recovered", f"{100 * (q.get('loss_recovered') or 0):.1f}%",
                   help="Of the loss that zeroing the layer causes, the share the "
                        "reconstruction gets back.")
    cols[2].metric("Normalised MSE", f"{q.get('nmse') or 0:.3f}",
                   help="Squared error over that of predicting the mean vector (Gao et al.).")


def corpus_line(result) -> None:
    """What the dictionary was trained on: the corpus by name, its inputs and tokens, and the
    annotations the browser reads (none for a plain text corpus)."""
    c = result.corpus
    st.caption(plain(f"Trained on {c['name']}: {c['inputs']:,} inputs ({c['tokens']:,} "
                     f"tokens), {c['heldout_inputs']:,} held out for the quality numbers."))


def alignment_note(result, rows: list) -> str:
    """The caption of a feature's alignment table: what it reads, or why it is empty."""
    own = result.corpus.get("labels")
    read = result.corpus.get("annotations")
    if read is not None and not read:
        return ("No annotations: this corpus is plain text (no part of speech, dependency "
                "relation, aspect role or label column), so no feature can be lined up with "
                "one; each feature's label is its top tokens.")
    if not rows:
        return ("No annotation lines up with this feature (a value needs at least 5 tokens, "
                "and the feature must fire on some of them).")
    where = ""
    if own is not None and not own:
        where = (" This corpus has no annotations of its own: the ones below are read on the "
                 "bundled treebank sample with the same dictionary.")
    return ("Annotations it lines up with: precision = of the tokens it fires on, the share "
            "with the label; recall = of the tokens with the label, the share it fires on."
            + where)


def show_dashboard(result, feature: int, source: dict) -> None:
    live = result.live
    d = result.dashboards.get(feature)
    if d is None and live is not None:
        d = dashboard(live, feature)
    if d is None:
        st.info("This feature's dashboard is not in the precomputed result: press "
                "'Compute live' above to open every feature.")
        return
    st.markdown(f"**Feature #{feature}**: " + plain(
        f"{result.features['label'][feature]} · fires on "
        f"{100 * result.features['freq'][feature]:.2f}% of tokens"))
    st.html(contexts_html(d["contexts"]))
    if d["histogram"]["counts"]:
        chart = histogram_chart(d["histogram"], feature)
        st.altair_chart(chart, width="stretch", key=S.CHART.format(f"hist-{feature}"))
        chart_downloads(chart, f"feature_{feature}_histogram", key=S.DL.format("hist"))
    df = alignment_frame(d["alignment"])
    st.caption(plain(alignment_note(result, d["alignment"])))
    if len(df):
        st.dataframe(df, hide_index=True, width="stretch")
    effect = result.effects.get(feature)
    if effect and effect.get("mean") is not None:
        edf = effect_frame(effect, result.class_names)
        chart = effect_chart(edf, f"Switching #{feature} off: change of each class's "
                                    f"probability ({effect['n']} held-out inputs)")
        st.altair_chart(chart, width="stretch", key=S.CHART.format(f"effect-{feature}"))
        chart_downloads(chart, f"feature_{feature}_effects", key=S.DL.format("effect"), df=edf)
        add_button(f"Features: #{feature}'s class effects", S.ADD.format("effect"), chart=chart,
                   **source)
    elif result.live is not None and result.live.loaded is not None and \
            unavailable(result.live.loaded, result.live.sae) is None:
        if st.button(f"Measure #{feature}'s class effect", key=S.EFFECT,
                     icon=":material/science:"):
            measure_effect(result, feature)
            st.rerun()
    elif result.class_names:
        st.caption("Class effects are measured for the most frequent features; compute live "
                   "to measure this one.")
