"""Shared charts: token text travels only as data (never inside a Vega expression), axes follow
the token order, repeated tokens keep their own rows, long inputs thin their labels."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd

from ui.common.charts import attention_heatmap, map_frame, position_labels, vector_heatmap

# every reserved word of JavaScript and of the Vega expression language, quotes, backslashes,
# braces, a template literal and HTML
HOSTILE = ["if", "datum", "event", "signal", "this", "NaN", "undefined", "true", "null",
           "function", "return", "var", "new", "delete", "typeof", "window", "item", "parent",
           "'", '"', "\\", "{", "}", "${x}", "<img src=x onerror=alert(1)>", "if", "]", "[0]"]
EXPR_KEYS = ("expr", "labelExpr", "calculate", "filter", "test", "signal", "update")


def _expressions(node) -> list[str]:
    """Every string that Vega would parse as an expression somewhere in a spec."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k in EXPR_KEYS and isinstance(v, str):
                out.append(v)
            out += _expressions(v)
    elif isinstance(node, list):
        for v in node:
            out += _expressions(v)
    return out


def test_position_labels_are_unique_and_1_based():
    assert position_labels(["the", "cat", "the"]) == ["1: the", "2: cat", "3: the"]


def test_map_frame_cells_and_label_fields():
    m = np.array([[0.25, 0.75], [1.0, 0.0]])
    df = map_frame(["if", "if"], m)
    assert df[["from_pos", "to_pos"]].values.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert df["weight"].tolist() == [0.25, 0.75, 1.0, 0.0]
    assert df["from_label"].tolist() == ["1: if", "1: if", "2: if", "2: if"]
    assert df["to"].tolist() == ["if"] * 4
    assert len(map_frame(["a", "b"], m, min_weight=0.5)) == 2


def test_heatmap_keeps_token_text_out_of_every_expression():
    n = len(HOSTILE)
    m = np.full((n, n), 1.0 / n)
    spec = attention_heatmap(map_frame(HOSTILE, m), HOSTILE, "t").to_dict()
    exprs = _expressions(spec)
    for tok in set(HOSTILE) - {"if", "datum", "signal", "item", "parent", "event", "this"}:
        assert not any(tok in e for e in exprs), (tok, exprs)
    assert "labelExpr" not in json.dumps(spec)
    # the axes run over the unique label field, in position order
    assert spec["encoding"]["x"]["field"] == "to_label"
    assert spec["encoding"]["y"]["scale"]["domain"] == position_labels(HOSTILE)


def test_vector_heatmap_rows_follow_labels_and_legend_is_readable():
    rows = vector_heatmap(np.arange(6.0).reshape(2, 3) - 2, ["a", "a"], "v")
    spec = rows.to_dict()
    assert spec["encoding"]["y"]["scale"]["domain"] == ["1: a", "2: a"]  # repeated -> unique
    assert "labelExpr" not in json.dumps(spec)
    one = vector_heatmap(np.ones((1, 32)), ["2: the"], "query").to_dict()
    legend = one["encoding"]["color"]["legend"]
    assert legend["gradientLength"] >= 120 and legend["orient"] == "bottom"
    assert one["encoding"]["color"]["scale"]["domain"] == [-1.0, 1.0]


def test_long_inputs_thin_their_labels():
    labels = [f"t{i}" for i in range(300)]
    spec = attention_heatmap(pd.DataFrame(map_frame(labels[:3], np.eye(3))), labels, "t").to_dict()
    assert spec["encoding"]["x"]["axis"]["labelOverlap"] is True
    small = attention_heatmap(map_frame(labels[:3], np.eye(3)), labels[:3], "t").to_dict()
    assert small["encoding"]["x"]["axis"]["labelOverlap"] is False


# -- issue 35: charts that fit a phone -----------------------------------------------------------


def test_a_comparison_stacks_for_a_phone():
    """The phone's version of a side-by-side chart: a facet's columns become rows, a wrapped
    facet one panel per row, every panel at most PHONE_PANEL_PX wide; legends below."""
    from ui.common.charts import PHONE_PANEL_PX, has_panels, stacked_spec
    from ui.common.heads import heads_frame, heads_heatmap

    df = heads_frame({"before": np.ones((6, 12)), "after": np.zeros((6, 12))}, column="model")
    wrapped = heads_heatmap(df, facet="model", columns=2, cell=(26, 24)).to_dict()
    assert has_panels(wrapped) and wrapped["columns"] == 2
    phone = stacked_spec(wrapped)
    assert phone["columns"] == 1 and phone["spec"]["width"] == PHONE_PANEL_PX
    assert phone["spec"]["height"] < wrapped["spec"]["height"]  # scaled alike
    assert phone["config"]["legend"]["orient"] == "bottom"
    assert wrapped["columns"] == 2  # the wide one is left as it is
    cols = alt.Chart(df).mark_point().encode(x="head:O").properties(width=330).facet(
        column="model:N").to_dict()
    rows = stacked_spec(cols)
    assert "column" not in rows["facet"] and rows["facet"]["row"]["field"] == "model"
    pair = alt.hconcat(alt.Chart(df).mark_rect().properties(width=400),
                       alt.Chart(df).mark_rect().properties(width=400)).to_dict()
    stacked = stacked_spec(pair)
    assert "hconcat" not in stacked and [v["width"] for v in stacked["vconcat"]] == [250, 250]


def test_a_single_chart_asks_for_its_own_width_at_most():
    """Streamlit draws a pixel width as min(width, column): the 610 px layers x heads map fits a
    358 px phone column instead of being cut; a facet or a chart sizing itself is left alone."""
    from ui.common.chart_cache import pixel_width
    from ui.common.heads import heads_frame, heads_heatmap

    single = heads_heatmap(heads_frame(np.ones((6, 12)))).to_dict()
    assert pixel_width(single) == 40 * 12 + 130
    assert pixel_width({"facet": {}, "spec": {}, "width": 300}, "content") == "content"
    assert pixel_width({"width": 300, "autosize": {"type": "pad"}}) is None
    assert pixel_width({"width": 300, "autosize": {"type": "fit-x"}}) == 300  # fit_width's
    assert pixel_width({"width": "container"}) is None


def test_the_agreement_chart_names_every_method_with_room_for_its_cells():
    """Issue 35: Attribution's "Agreement between methods" drawn as Streamlit draws it (the
    whole chart fitted into its width; its height the cells' own, issue 49) has cells of
    readable size and all seven names."""
    import re

    import vl_convert as vlc

    from analysis.attribution import NAMES
    from ui.attribution.views import agreement_chart

    names = list(NAMES)
    rho = np.eye(len(names)) * 0.5 + 0.5
    for phone, least in ((False, 300), (True, 200)):
        chart = agreement_chart(names, rho, phone=phone)
        spec = chart.to_dict()
        assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}
        width = spec["width"] if not phone else min(spec["width"], 358)
        spec["width"] = width
        svg = vlc.vegalite_to_svg(json.dumps(spec))
        cells = [float(w) for w in re.findall(r'aria-roledescription="rect mark" '
                                              r'd="M[-\d.]+,[-\d.]+h([\d.]+)', svg)]
        assert len(cells) == len(names) ** 2
        assert len(names) * min(cells) >= least, (phone, min(cells))
        texts = re.findall(r">([^<>]+)</text>", svg)
        for n in NAMES.values():  # on both axes: whole on a desktop, cut with "…" on a phone
            shown = [t for t in texts if t == n or (phone and t.endswith("…")
                                                    and n.startswith(t[:-1]))]
            assert len(shown) == 2, (phone, n, shown)
