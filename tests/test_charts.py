"""Shared charts: token text travels only as data (never inside a Vega expression), axes follow
the token order, repeated tokens keep their own rows, long inputs thin their labels."""

from __future__ import annotations

import json

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
