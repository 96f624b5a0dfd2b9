"""The Causal patching page's charts (altair), each fitting the page's width from a phone
(390 px) to a wide screen: the layers x heads map, the layers x positions maps, the corpus map
with its marked heads, and the corpus map against Head importance's drops. Layers and heads
are 1-indexed, as everywhere in the UI."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ui.common.heads import head_marks, heads_frame, heads_heatmap
from ui.patching.state import SITE_NAMES

FIT = alt.AutoSizeParams(type="fit-x", contains="padding")


def _scale(values) -> alt.Scale:
    m = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0
    return alt.Scale(scheme="redblue", reverse=True, domain=[-(m or 1.0), m or 1.0],
                     domainMid=0)


def _legend(scale_name: str) -> str:
    return "share of the change" if scale_name == "share" else "change of P(input's answer)"


def heads_values(r, scale_name: str) -> np.ndarray:
    return r.heads if scale_name == "share" else r.heads_prob


def heads_chart(r, scale_name: str):
    """The layers x heads map of one pair."""
    values = heads_values(r, scale_name)
    df = heads_frame(values, value="effect")
    heat = heads_heatmap(df, "effect", scale=_scale(values), legend=_legend(scale_name),
                         cell=(30, 28), fmt=".3f",
                         title=alt.Title("Each head patched alone",
                                         subtitle=[_legend(scale_name), r.direction]))
    L = values.shape[0]
    chart = heat.properties(height=28 * L, autosize=FIT).configure_legend(
        orient="bottom", gradientLength=180).configure_axisX(labelAngle=0)
    return chart, df


def positions_frame(r, site: str, scale_name: str) -> pd.DataFrame:
    m = r.positions[site] if scale_name == "share" else r.positions_prob[site]
    L, T = m.shape
    labels = [f"{i} {t}" for i, t in enumerate(r.tokens)]
    return pd.DataFrame({"layer": np.repeat(np.arange(1, L + 1), T),
                         "position": np.tile(np.arange(T), L),
                         "token": labels * L, "effect": m.ravel(),
                         "changed": np.tile(np.isin(np.arange(T), r.differs), L)})


def positions_chart(r, site: str, scale_name: str):
    """A layers x tokens map of one site (Meng et al.'s causal tracing picture); the positions
    where the two inputs differ are outlined."""
    df = positions_frame(r, site, scale_name)
    order = list(dict.fromkeys(df["token"]))
    rect = alt.Chart(df).mark_rect().encode(
        # every token labelled, upright, small: vega would otherwise drop overlapping labels
        # on a phone (the changed token's among them)
        x=alt.X("token:N", sort=order, title=None, axis=alt.Axis(
            labelAngle=-90, labelLimit=90, labelFontSize=9, labelOverlap=False)),
        y=alt.Y("layer:O", title="layer"),
        color=alt.Color("effect:Q", scale=_scale(df["effect"].to_numpy()),
                        title=_legend(scale_name)),
        stroke=alt.condition("datum.changed", alt.value("black"), alt.value("transparent")),
        strokeWidth=alt.condition("datum.changed", alt.value(2), alt.value(0)),
        tooltip=["layer:O", "token:N", alt.Tooltip("effect:Q", format=".3f"),
                 alt.Tooltip("changed:N", title="differs from the counterfactual")])
    L = int(df["layer"].max())
    chart = rect.properties(height=26 * L, autosize=FIT, title=alt.Title(
        SITE_NAMES[site], subtitle="patched at one position (outlined: the changed tokens)"))
    return chart.configure_legend(orient="bottom", gradientLength=180), df


def corpus_frame(cr) -> pd.DataFrame:
    df = heads_frame(cr.mean, value="mean")
    ci = cr.ci.reshape(-1, 2)
    df["low"], df["high"] = ci[:, 0], ci[:, 1]
    df["mark"] = head_marks(df, cr.aspect_heads, cr.sep_heads)
    if cr.importance is not None:
        df["importance drop"] = cr.importance.reshape(-1)
    return df


def corpus_chart(cr):
    """The mean map over the pairs, the aspect heads (A, black) and [SEP] heads (S, purple)
    outlined."""
    df = corpus_frame(cr)
    heat = heads_heatmap(df, "mean", scale=_scale(df["mean"].to_numpy()),
                         legend="mean share of the change", cell=(30, 28),
                         title=alt.Title(f"Mean over {cr.n_pairs} pairs",
                                         subtitle=["each head patched alone", cr.direction]))
    heat = heat.encode(
        tooltip=["layer:O", "head:O", alt.Tooltip("mean:Q", format=".3f"),
                 alt.Tooltip("low:Q", format=".3f", title="95% low"),
                 alt.Tooltip("high:Q", format=".3f", title="95% high"),
                 alt.Tooltip("mark:N", title="A: aspect head, S: [SEP] head")],
        stroke=alt.Stroke("mark:N", legend=alt.Legend(
            title="border", orient="bottom", values=["A", "S", "AS"],
            labelExpr="datum.label == 'A' ? 'aspect head' : datum.label == 'S' ? "
                      "'[SEP] head' : 'both'"),
            scale=alt.Scale(domain=["", "A", "S", "AS"],
                            range=["transparent", "black", "#7b2cbf", "black"])),
        strokeWidth=alt.condition("datum.mark != ''", alt.value(3), alt.value(0)))
    L = cr.mean.shape[0]
    chart = heat.properties(height=28 * L, autosize=FIT).configure_legend(
        orient="bottom", gradientLength=180).configure_axisX(labelAngle=0)
    return chart, df


def against_importance_chart(cr):
    """One dot per head: the size of its mean patching effect against Head importance's
    drop."""
    df = corpus_frame(cr)
    df["size of the mean effect"] = df["mean"].abs()
    chart = alt.Chart(df).mark_circle(size=60, opacity=0.7).encode(
        x=alt.X("size of the mean effect:Q"),
        y=alt.Y("importance drop:Q", title=f"drop when switched off ({cr.importance_metric})"),
        color=alt.Color("layer:O"),
        tooltip=["layer:O", "head:O", alt.Tooltip("mean:Q", format=".3f"),
                 alt.Tooltip("importance drop:Q", format=".3f"), "mark:N"],
    ).properties(width="container", height=280, autosize=FIT,
                 title=alt.Title("Patching against Head importance",
                                 subtitle=f"Spearman {cr.spearman:.2f}"
                                 if cr.spearman is not None and np.isfinite(cr.spearman)
                                 else "Spearman: not defined"))
    return chart, df
