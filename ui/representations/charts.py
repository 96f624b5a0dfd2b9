"""The Representations page's charts (Altair). Every layer is sent at once and a layer slider
bound to a Vega parameter filters the points in the browser (no rerun). Token text, its
sentence and every label are data fields shown in tooltips, never part of an expression."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from analysis.representations.corpus import PROBE_NAMES
from analysis.representations.projection import METHOD_NAMES
from ui.common.chart_cache import cached_chart
from ui.common.charts import fit_width
from analysis.representations.labelled import NONE, OTHER

LAYER_PARAM = "layer"
PANEL_W, PANEL_H = 330, 300
ROLE_ORDER = ["aspect", "opinion", "other aspect", "other"]
# Label colours: Tableau 10 in a fixed order, grey for the "other labels" bucket; a label's
# colour is its place in the corpus's legend (most sentences first), so it stays put
PALETTE = ["#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2",
           "#ff9da6", "#9d755d", "#2f4b7c"]
ROLE_COLOURS = {"aspect": "#e45756", "opinion": "#54a24b", "other aspect": "#f58518",
                "other": "#4c78a8", "asked category": "#b279a2", "special token": "#bab0ac"}
INPUT_COLOURS = {"segment": "segment", "special": "token", "role": "role", "upos": "UPOS"}
OTHER_COLOUR, NONE_COLOUR = "#bab0ac", "#e0e0e0"


def role_scale() -> alt.Scale:
    """The roles' fixed colours (aspect red, opinion green, other aspect orange, other blue)."""
    return alt.Scale(domain=list(ROLE_COLOURS), range=list(ROLE_COLOURS.values()))


def label_scale(legend: list[str]) -> alt.Scale:
    """The colour scale of a labelled corpus: ``legend``'s labels in order, a fixed colour
    each (the label text is a domain value, never an expression)."""
    colours = [OTHER_COLOUR if v == OTHER else NONE_COLOUR if v == NONE
               else PALETTE[k % len(PALETTE)] for k, v in enumerate(legend)]
    return alt.Scale(domain=list(legend), range=colours)


def _frame(points: dict[str, list[np.ndarray]]) -> pd.DataFrame:
    """Long table of positions: one row per (model, layer, item) with x and y."""
    parts = []
    for model, layers in points.items():
        for layer, pts in enumerate(layers):
            parts.append(pd.DataFrame({"model": model, "layer": layer,
                                       "item": np.arange(len(pts)),
                                       "x": pts[:, 0].astype(float),
                                       "y": pts[:, 1].astype(float)}))
    return pd.concat(parts, ignore_index=True)


def input_frames(result, colour: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(positions of every layer for both models "A: name" / "B: name", one row per token
    with its text, its sentence and its colour group)."""
    points = {f"A: {result.model}": result.points}
    if result.compare_points is not None:
        points[f"B: {result.compare_model}"] = result.compare_points
    n = len(result.tokens)
    if colour in result.colourings:  # an input from labelled data: role or UPOS per token
        group = list(result.colourings[colour])
    elif colour == "special":
        group = ["special token" if s else "word piece" for s in result.special]
    else:
        group = ["special token" if s else f"segment {'AB'[g]}"
                 for g, s in zip(result.segments, result.special)]
    items = pd.DataFrame({"item": np.arange(n), "token": result.tokens,
                          "context": result.contexts, "group": group})
    return _frame(points), items


def corpus_frames(result) -> tuple[pd.DataFrame, pd.DataFrame]:
    sc = result.scatter
    points = {f"A: {result.model.name}": sc.points}
    if sc.compare_points is not None and result.compare is not None:
        points[f"B: {result.compare.name}"] = sc.compare_points
    items = pd.DataFrame({"item": np.arange(len(sc.forms)), "token": sc.forms,
                          "context": sc.contexts, "group": sc.colours})
    return _frame(points), items


def table(df: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """The CSV export: every position with its item's fields."""
    return df.merge(items, on="item").sort_values(["model", "layer", "item"])


def layer_param(n_layers: int, value: int | None = None):
    return alt.param(name=LAYER_PARAM, value=n_layers - 1 if value is None else value,
                     bind=alt.binding_range(min=0, max=n_layers - 1, step=1,
                                            name="Layer (0 = embeddings) "))


def scatter(df: pd.DataFrame, items: pd.DataFrame, n_layers: int, title: str,
            group_title: str, path_item: int | None = None, group_sort=None,
            layer: int | None = None, scale: alt.Scale | None = None) -> alt.FacetChart:
    """Every layer's points (a slider picks the layer in the browser), one panel per model,
    the same axes for both; with ``path_item`` that item's path across layers as a line.
    Each row carries its item's text, sentence window and group (a Vega lookup by item would
    send them once, but Streamlit's frontend then drew an empty chart)."""
    param = layer_param(n_layers, layer)
    at_layer = alt.datum.layer == param
    x = alt.X("x:Q", title="component 1", axis=alt.Axis(labels=False, ticks=False))
    y = alt.Y("y:Q", title="component 2", axis=alt.Axis(labels=False, ticks=False))
    tip = [alt.Tooltip("token:N", title="token"), alt.Tooltip("context:N", title="in"),
           alt.Tooltip("group:N", title=group_title), alt.Tooltip("layer:Q", title="layer")]
    base = alt.Chart()
    points = base.mark_circle(size=60, opacity=0.8).encode(
        x=x, y=y, color=alt.Color("group:N", title=group_title, sort=group_sort,
                                  scale=scale if scale is not None else alt.Undefined),
        tooltip=tip).transform_filter(at_layer)
    layers = [points]
    if path_item is not None:
        mine = base.transform_filter(alt.datum.item == int(path_item))
        layers.insert(0, mine.mark_line(color="#555", strokeWidth=1.5, opacity=0.7).encode(
            x=x, y=y, order="layer:Q", tooltip=tip))
        layers.insert(1, mine.mark_text(dx=7, dy=-7, fontSize=10, color="#555").encode(
            x=x, y=y, text="layer:Q"))
        layers.append(mine.transform_filter(at_layer).mark_point(
            size=220, shape="diamond", color="black", filled=False, strokeWidth=2).encode(
            x=x, y=y, tooltip=tip))
    layered = alt.layer(*layers).properties(width=PANEL_W, height=PANEL_H)
    return alt.layer(layered, data=df.merge(items, on="item")).facet(
        column=alt.Column("model:N", title=None, header=alt.Header(labelLimit=300)),
    ).add_params(param).properties(title=title)


def one_layer(df: pd.DataFrame, items: pd.DataFrame, n_layers: int, title: str,
              group_title: str, group_sort=None, scale=None) -> alt.FacetChart:
    """The top layer's points only (a report's picture: small enough to embed)."""
    top = n_layers - 1
    return scatter(df[df["layer"] == top], items, n_layers, f"{title} (layer {top})",
                   group_title, group_sort=group_sort, layer=top, scale=scale)


def input_chart(result, colour: str, token: int, key: tuple | None = None):
    """(the chart, its report picture builder, the CSV table builder). With ``key`` (what the
    result is cached on: ``blocks.input_key``) the chart is a ``BuiltChart`` made once per key,
    colour and token (``ui.common.chart_cache``; Altair's layered facet took 0.1-0.3 s to build
    at a few hundred tokens, on every rerun of the page) and the builders read the result's
    frames only when called."""
    if key is None:
        chart, report, rows = _input_builders(result, colour)
        return chart(token), report, rows
    built = cached_chart(("representations input", key, colour, int(token)),
                         lambda: (_input_builders(result, colour)[0](token), None))
    return (built, lambda: _input_builders(result, colour)[1](),
            lambda: _input_builders(result, colour)[2]())


def _input_builders(result, colour: str):
    """(the chart of a token's path, the report picture builder, the CSV table builder)."""
    df, items = input_frames(result, colour)
    title = (f"{METHOD_NAMES[result.method]} of every token, layer by layer "
             "(line: token {token}'s path)")
    name = INPUT_COLOURS.get(colour, "colour")
    sort = list(ROLE_COLOURS) if colour == "role" else None
    scale = role_scale() if colour == "role" else None
    chart = lambda token: scatter(df, items, result.n_layers,  # noqa: E731
                                  title.format(token=token + 1), name, path_item=token,
                                  group_sort=sort, scale=scale)
    report = lambda: one_layer(df, items, result.n_layers,  # noqa: E731
                               f"{METHOD_NAMES[result.method]} of every token", name, sort,
                               scale)
    return chart, report, lambda: table(df, items)


def corpus_scatter(result, key: tuple | None = None):
    """(the chart, its report picture builder, the CSV table builder); with ``key`` (what the
    result is cached on: ``blocks.corpus_key``) as :func:`input_chart`'s."""
    if key is None:
        return _corpus_builders(result)
    built = cached_chart(("representations corpus", key),
                         lambda: (_corpus_builders(result)[0], None))
    return (built, lambda: _corpus_builders(result)[1](),
            lambda: _corpus_builders(result)[2]())


def _corpus_builders(result):
    df, items = corpus_frames(result)
    sc = result.scatter
    name = {"upos": "UPOS", "role": "role", "label": "label"}[sc.colour_by]
    sort = ROLE_ORDER if sc.colour_by == "role" else None
    scale = label_scale(sc.legend) if sc.legend else role_scale() if sc.colour_by == "role" \
        else None
    title = f"{METHOD_NAMES[sc.method]} of {len(sc.forms)} words"
    chart = scatter(df, items, result.n_layers, title + ", layer by layer", name,
                    group_sort=sort, scale=scale)
    report = lambda: one_layer(df, items, result.n_layers, title, name, sort,  # noqa: E731
                               scale)
    return chart, report, lambda: table(df, items)


def _sides(result) -> list[tuple[str, object]]:
    """The corpus result's models, named as the charts show them: "A: name" (and "B: name")."""
    sides = [("A: " + result.model.name, result.model)]
    if result.compare is not None:
        sides.append(("B: " + result.compare.name, result.compare))
    return sides


def probe_frame(result) -> pd.DataFrame:
    """Every probe's accuracy per layer and model in percent (as the reading writes them),
    with its bootstrap 95% interval when the curve has per-sentence counts."""
    rows = []
    for model, side in _sides(result):
        for name, curve in side.probes.items():
            ci = getattr(curve, "ci", lambda layer: None)
            for layer, acc in enumerate(curve.layers):
                low, high = ci(layer) or (None, None)
                rows.append({"probe": PROBE_NAMES.get(name, name), "model": model,
                             "layer": layer, "accuracy": 100 * acc,
                             "low": None if low is None else 100 * low,
                             "high": None if high is None else 100 * high,
                             "majority": 100 * curve.majority})
    return pd.DataFrame(rows)


def _interval(curve, layer: int) -> str:
    ci = curve.ci(layer)
    return f"{100 * ci[0]:.1f} to {100 * ci[1]:.1f}" if ci is not None else ""


def probe_table(result) -> pd.DataFrame:
    """One row per model and probe, the numbers the reading names (percent, as there): its
    best layer with the accuracy and 95% interval, the top layer's, the majority baseline's."""
    rows = []
    for model, side in _sides(result):
        for name, curve in side.probes.items():
            best, top = curve.best_layer(), len(curve.layers) - 1
            rows.append({"model": model, "probe": PROBE_NAMES.get(name, name),
                         "best layer": best, "best layer accuracy (%)": 100 * curve.layers[best],
                         "best layer 95% interval (%)": _interval(curve, best),
                         "top layer accuracy (%)": 100 * curve.layers[top],
                         "top layer 95% interval (%)": _interval(curve, top),
                         "majority baseline (%)": 100 * curve.majority})
    return pd.DataFrame(rows)


def probe_chart(result) -> tuple[alt.Chart, pd.DataFrame]:
    """Probe accuracy per layer for both models (percent) with its 95% interval as a band, the
    majority baseline dashed."""
    df = probe_frame(result)
    colour = alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom",
                                                                   labelLimit=320))
    base = alt.Chart(df)
    band = base.mark_area(opacity=0.18).encode(
        x=alt.X("layer:O"), y=alt.Y("low:Q"), y2="high:Q", color=colour)
    lines = base.mark_line(point=True, strokeWidth=2.5).encode(
        x=alt.X("layer:O", title="layer (0 = embeddings)"),
        y=alt.Y("accuracy:Q", title="cross-validated accuracy (%)", scale=alt.Scale(zero=False)),
        color=colour, tooltip=["model", "probe", "layer", alt.Tooltip("accuracy:Q",
                                                                      format=".1f")])
    rule = base.mark_rule(strokeDash=[6, 4], color="#888").encode(
        y="mean(majority):Q", tooltip=[alt.Tooltip("mean(majority):Q", title="majority",
                                                   format=".1f")])
    chart = alt.layer(band, lines, rule).properties(width=PANEL_W, height=260).facet(
        column=alt.Column("probe:N", title=None)).properties(
        title="Linear probes per layer (band: 95% interval; dashed: always the most frequent "
              "class)")
    return chart, df


def geometry_frame(result) -> pd.DataFrame:
    rows = []
    for model, side in _sides(result):
        for measure, values in (("anisotropy", side.anisotropy),
                                ("self-similarity", side.self_similarity)):
            for layer, v in enumerate(values):
                if v is not None:
                    rows.append({"measure": measure, "model": model, "layer": layer,
                                 "value": float(v)})
    return pd.DataFrame(rows, columns=["measure", "model", "layer", "value"])


def geometry_chart(result) -> tuple[alt.Chart, pd.DataFrame]:
    df = geometry_frame(result)
    chart = alt.Chart(df).mark_line(point=True, strokeWidth=2.5).encode(
        x=alt.X("layer:O", title="layer (0 = embeddings)"),
        y=alt.Y("value:Q", title="mean cosine similarity"),
        color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom",
                                                                    labelLimit=320)),
        strokeDash=alt.StrokeDash("measure:N", title="measure",
                                  legend=alt.Legend(symbolType="stroke")),
        tooltip=["model", "measure", "layer", alt.Tooltip("value:Q", format=".3f")],
    ).properties(width=2 * PANEL_W, height=260,
                 title=["Anisotropy (random word pairs) and self-similarity",
                        "(one word across sentences)"])
    return fit_width(chart), df  # the column's width; the plot keeps its 260 px
