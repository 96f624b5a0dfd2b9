"""The Head importance page's charts and tables (docs/METHODS.md section 12), each built once
per result and metric (``ui.common.chart_cache``). Layers and heads are 1-indexed, as
everywhere in the UI; the map's colours diverge around zero (red: the model loses without the
head, blue: it gains)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis.importance.one import top_heads
from analysis.importance.reading import beyond_interval
from analysis.importance.scoring import LOSS, higher_is_better
from ui.common.chart_cache import cached_chart, draw
from ui.common.exports.export import chart_downloads
from ui.common.heads import decimals, head_marks, heads_frame, heads_heatmap
from ui.common.frame.links import attention_link
from ui.importance.state import METHODS, METRIC_NAMES, download_key

RED_BLUE = "redblue"
BORDERS = ("Borders: black, a top head of the Aspect heads page (A in the tooltip); purple, a "
           "head that puts over half its attention on [SEP] (S); black and marked AS, both.")


def _unit(metric: str) -> str:
    return "change in mean loss" if metric == LOSS else f"change in {METRIC_NAMES[metric]} (points)"


def _scheme(metric: str) -> str:
    # red = worse: a lower metric, or a higher loss
    return RED_BLUE if higher_is_better(metric) else "blueorange"


def map_frame(result, metric: str, marks) -> pd.DataFrame:
    df = heads_frame(result.heads[metric], value="change")
    ci = result.heads_ci[metric].reshape(-1, 2)
    df["low"], df["high"] = ci[:, 0], ci[:, 1]
    df["mark"] = head_marks(df, marks.aspect, marks.sep)
    df["gradient"] = result.gradient.reshape(-1)
    return df


def map_chart(result, metric: str, marks):
    """The layers x heads map (``ui.common.heads.heads_heatmap``) of the change, colours
    diverging around zero, the marked heads lettered (A: aspect, S: [SEP])."""
    df = map_frame(result, metric, marks)
    m = float(np.nanmax(np.abs(df["change"]))) or 1.0
    scale = alt.Scale(scheme=_scheme(metric), domain=[-m, m], domainMid=0)
    # short title lines and the legend below: vega fits the whole chart, title included, to
    # the page's width, so a long line would squeeze the squares on a phone
    heat = heads_heatmap(df, "change", scale=scale, legend=_unit(metric), cell=(30, 28),
                         title=alt.Title("Head disabled: the change",
                                         subtitle=[_unit(metric), METHODS[result.method]]))
    heat = heat.encode(tooltip=[
        "layer:O", "head:O", alt.Tooltip("change:Q", format=".3f"),
        alt.Tooltip("low:Q", format=".3f", title="95% low"),
        alt.Tooltip("high:Q", format=".3f", title="95% high"),
        alt.Tooltip("mark:N", title="A: aspect head, S: [SEP] head")])
    # the marked heads get a black (aspect) or purple ([SEP]) border: one chart, no layers
    heat = heat.encode(
        # no legend: beside the colour bar it ran past the map's own width and was cut at
        # 1400 px ("b..." for "both", issue 49); the page says it under the map (BORDERS)
        stroke=alt.Stroke("mark:N", legend=None,
                          scale=alt.Scale(domain=["", "A", "S", "AS"],
                                          range=["transparent", "black", "#7b2cbf", "black"])),
        strokeWidth=alt.condition("datum.mark != ''", alt.value(3), alt.value(0)))
    return fitted(heat, result.shape[0]), df


def fitted(heat, n_layers: int):
    """A layers x heads map fitted to the page: width the page's, the height the squares' own
    (fit-x: title, axes and legend come on top of it, so a phone's narrow page never squeezes
    the rows), the legend below (from 390 px to 1400 px)."""
    return heat.properties(height=28 * n_layers, autosize=alt.AutoSizeParams(
        type="fit-x", contains="padding")).configure_legend(
        orient="bottom", gradientLength=180).configure_axisX(labelAngle=0)


ONE_MEASURES = {"gold_probability": "the gold label's probability",
                "predicted_probability": "the answer's probability", "loss": "the loss"}
ONE_SCALE = {"gold_probability": 100.0, "predicted_probability": 100.0, "loss": 1.0}


def one_unit(measure: str) -> str:
    return f"change in {ONE_MEASURES[measure]}" + (" (points)" if measure != "loss" else "")


def one_frame(result, measure: str) -> pd.DataFrame:
    """Every head of a one-example result: its change of ``measure`` (probabilities in points,
    the loss in nats), whether the answer flips and to what, its gate gradient."""
    df = heads_frame(result.heads[measure] * ONE_SCALE[measure], value="change")
    flips = result.heads["flips"].reshape(-1)
    df["flips"] = flips
    df["answer"] = [result.classes[int(i)] for i in result.heads["answer"].reshape(-1)]
    df["mark"] = np.where(flips, "F", "")
    df["gradient"] = result.gradient_raw.reshape(-1)
    return df


def one_map_chart(result, measure: str):
    """The whole-set map's chart for one example: the change of ``measure`` per head disabled,
    red where the example fares worse; a black border on a head whose removal flips the
    answer."""
    df = one_frame(result, measure)
    m = float(np.nanmax(np.abs(df["change"]))) or 1.0
    scheme = "blueorange" if measure == "loss" else RED_BLUE
    heat = heads_heatmap(df, "change", scale=alt.Scale(scheme=scheme, domain=[-m, m],
                                                       domainMid=0),
                         legend=one_unit(measure), cell=(30, 28),
                         title=alt.Title("One example: a head disabled",
                                         subtitle=[one_unit(measure), METHODS[result.method]]))
    heat = heat.encode(
        tooltip=["layer:O", "head:O", alt.Tooltip("change:Q", format=".3f"),
                 alt.Tooltip("answer:N", title="answer then"),
                 alt.Tooltip("mark:N", title="F: the answer flips"),
                 alt.Tooltip("gradient:Q", format=".4f", title="|dL/dxi|")],
        stroke=alt.Stroke("mark:N", legend=None, scale=alt.Scale(
            domain=["", "F"], range=["transparent", "black"])),
        strokeWidth=alt.condition("datum.mark != ''", alt.value(3), alt.value(0)))
    return fitted(heat, result.shape[0]), df


def one_table(result, measure: str, most: int, spec: str | None, text: str | None,
              pair: str | None) -> pd.DataFrame:
    """The ``most`` heads that move ``measure`` against the example most (and every head that
    flips it), each with its link to the Attention page on the example."""
    rows = {(l, h) for l, h, _ in top_heads(result, measure, most)}
    rows |= {(l, h) for l, h, _ in result.flipped()}
    harm = result.heads[measure] * (1 if measure == "loss" else -1)
    out = [{"layer": l + 1, "head": h + 1,
            **{one_unit(k): float(result.heads[k][l, h] * ONE_SCALE[k]) for k in ONE_MEASURES},
            "flips": bool(result.heads["flips"][l, h]),
            "answer then": result.classes[int(result.heads["answer"][l, h])],
            "|dL/dxi|": float(result.gradient_raw[l, h]),
            **({"open": attention_link(spec, text, pair, l + 1, h + 1)} if spec else {})}
           for l, h in sorted(rows, key=lambda x: (-harm[x], x))]
    return pd.DataFrame(out, columns=["layer", "head", *(one_unit(k) for k in ONE_MEASURES),
                                      "flips", "answer then", "|dL/dxi|"]
                        + (["open"] if spec else []))


def layer_chart(result, metric: str):
    ci = result.layers_ci[metric]
    df = pd.DataFrame({"layer": np.arange(1, len(ci) + 1), "change": result.layers[metric],
                       "low": ci[:, 0], "high": ci[:, 1]})
    base = alt.Chart(df).encode(x=alt.X("layer:O", title="layer disabled"))
    bars = base.mark_bar().encode(
        y=alt.Y("change:Q", title=_unit(metric)),
        color=alt.condition(alt.datum.change < 0 if higher_is_better(metric)
                            else alt.datum.change > 0, alt.value("#c0392b"),
                            alt.value("#2e6fbf")),
        tooltip=["layer:O", alt.Tooltip("change:Q", format=".3f"),
                 alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f")])
    rules = base.mark_rule().encode(y="low:Q", y2="high:Q")
    title = "A whole layer disabled" + (" (95% intervals)" if np.isfinite(ci).all() else "")
    return (bars + rules).properties(width="container", height=260, title=title), df


def beyond_table(result, metric: str, spec: str | None, text: str | None,
                 pair: str | None) -> pd.DataFrame:
    """The heads beyond their interval; each with its link to the Attention page (``spec``
    None: a precomputed result, whose model is not loaded: no links)."""
    hurt, helped = beyond_interval(result, metric)
    rows = [{"effect": effect, "layer": l + 1, "head": h + 1, "change": c, "95% low": lo,
             "95% high": hi, "gradient importance": float(result.gradient[l, h]),
             **({"open": attention_link(spec, text, pair, l + 1, h + 1)} if spec else {})}
            for effect, group in (("hurts", hurt), ("helps", helped))
            for l, h, c, lo, hi in group]
    return pd.DataFrame(rows, columns=["effect", "layer", "head", "change", "95% low",
                                       "95% high", "gradient importance"]
                        + (["open"] if spec else []))


def show_table(df: pd.DataFrame, key: str) -> None:
    if df.empty:
        st.info("No head's removal changes the metric beyond its 95% interval.",
                icon=":material/info:")
        return
    links = {"open": st.column_config.LinkColumn("Attention page", display_text="open head")}
    st.dataframe(df, hide_index=True, key=key, column_config={
        **decimals(df), **(links if "open" in df else {})})


def pruning_chart(result):
    pr = result.pruning
    f = np.asarray(pr["fractions"]) * 100
    lines = pd.concat([
        pd.DataFrame({"removed": f, "metric": pr["by_importance"], "order": "measured drop"}),
        pd.DataFrame({"removed": f, "metric": pr["by_gradient"], "order": "gradient importance"}),
        pd.DataFrame({"removed": f, "metric": pr["random_mean"], "order": "random (mean of 5)"}),
    ], ignore_index=True)
    band = pd.DataFrame({"removed": f, "low": pr["random_low"], "high": pr["random_high"]})
    label = METRIC_NAMES[result.metric]
    x = alt.X("removed:Q", title="heads removed (%)", scale=alt.Scale(domain=[0, 90]))
    area = alt.Chart(band).mark_area(opacity=0.2, color="gray").encode(
        x=x, y=alt.Y("low:Q", title=label), y2="high:Q")
    line = alt.Chart(lines).mark_line(point=True).encode(
        x=x, y=alt.Y("metric:Q", title=label), color=alt.Color("order:N", title="order"),
        tooltip=["order:N", "removed:Q", alt.Tooltip("metric:Q", format=".2f")])
    intact = alt.Chart(pd.DataFrame({"y": [result.intact[result.metric]]})).mark_rule(
        strokeDash=[4, 4], color="black").encode(y="y:Q")
    chart = (area + line + intact).properties(
        width="container", height=300, title=f"Pruning: {label} as heads are removed "
                                             "(band: the 5 random orders' range)")
    return chart, lines


def gradient_chart(result):
    df = heads_frame(result.gradient, value="gradient importance")
    df["measured drop"] = result.drops().reshape(-1)
    chart = alt.Chart(df).mark_circle(size=60, opacity=0.7).encode(
        x=alt.X("gradient importance:Q", title="gradient importance (per layer, normalised)"),
        y=alt.Y("measured drop:Q", title=f"measured drop ({METRIC_NAMES[result.metric]})"),
        color=alt.Color("layer:O"),
        tooltip=["layer:O", "head:O", alt.Tooltip("gradient importance:Q", format=".3f"),
                 alt.Tooltip("measured drop:Q", format=".3f")],
    ).properties(width="container", height=300,
                 title="Gradient importance against the measured drop, one dot per head")
    return chart, df


def show(key: tuple, name: str, build, basename: str, stretch: bool = True):
    """Draw the chart ``build()`` makes (built once per ``key``) with its downloads; returns
    the built chart."""
    built = cached_chart((name, *key), build)
    draw(built, stretch=stretch)
    chart_downloads(built.chart, basename, key=download_key(name), df=built.df)
    return built


def one_layers(result) -> pd.DataFrame:
    """Each whole layer disabled on the one example: the three changes, the flip, the answer."""
    L = len(result.layers["loss"])
    return pd.DataFrame({"layer disabled": range(1, L + 1),
                         **{one_unit(k): result.layers[k] * ONE_SCALE[k] for k in ONE_MEASURES},
                         "flips": result.layers["flips"].astype(bool),
                         "answer then": [result.classes[int(i)]
                                         for i in result.layers["answer"]]})
