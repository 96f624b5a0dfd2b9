"""The Predictions page's charts and tables, each built once per result
(``ui.common.chart_cache.owned_chart``): the metrics by slice with their intervals, the
confusion matrix (its cells filter the table), the changes against a second model, the
counterfactuals' flip rates, and an edit's two inputs coloured by their attribution with the
changed words marked. Text from the data reaches the page as table cells, chart data or
escaped HTML only."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from analysis.predictions.metrics import METRIC_NAMES, metric_names
from analysis.predictions.slices import ALL
from ui.common.charts import fit_width
from ui.common.html import esc

SLICE_ROW_PX = 22  # px per slice in the slice charts
CELL_PX = 44  # px per cell of the confusion matrix
LABELS_PX, AXIS_PX = 130, 90  # px of the confusion matrix's labels and titles: left, below


def _num(x) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def slice_frame(metrics: dict, absa: bool) -> pd.DataFrame:
    """One row per slice: its name, rows, and every metric with its 95% interval."""
    rows = []
    for key, v in metrics.items():
        row = {"slice": v["name"], "key": key, "examples": v["accuracy"]["n"]}
        for m in metric_names(absa):
            row[METRIC_NAMES[m]] = _num(v[m]["value"])
            row[f"{METRIC_NAMES[m]} low"] = _num(v[m]["low"])
            row[f"{METRIC_NAMES[m]} high"] = _num(v[m]["high"])
        rows.append(row)
    return pd.DataFrame(rows)


def interval_chart(df: pd.DataFrame, value: str, low: str, high: str, whole: float | None,
                   title: str, label: str = "slice"):
    """A dot per row of ``df`` at ``value`` with its interval as a bar; a dashed line at
    ``whole`` (the whole set's value); as wide as its column."""
    df = df.rename(columns={value: "value", low: "low", high: "high", label: "label"})
    df = df[["label", "value", "low", "high"]].copy()
    y = alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=160))
    bars = alt.Chart(df).mark_rule(strokeWidth=3, opacity=0.45).encode(
        y=y, x=alt.X("low:Q", title=title), x2="high:Q")
    dots = alt.Chart(df).mark_circle(size=60).encode(
        y=y, x="value:Q", tooltip=[alt.Tooltip("label:N", title=label),
                                   alt.Tooltip("value:Q", format=".2f"),
                                   alt.Tooltip("low:Q", format=".2f", title="95% low"),
                                   alt.Tooltip("high:Q", format=".2f", title="95% high")])
    layers = [bars, dots]
    if whole is not None:
        layers.append(alt.Chart(pd.DataFrame({"whole": [whole]})).mark_rule(
            strokeDash=[4, 3], color="#888").encode(x="whole:Q"))
    chart = alt.layer(*layers).properties(height=max(60, SLICE_ROW_PX * len(df)))
    return fit_width(chart)


def slice_chart(result, metric: str):
    """(chart, frame): every slice's ``metric`` with its interval, the whole set dashed."""
    df = slice_frame(result.metrics, result.absa)
    name = METRIC_NAMES[metric]
    whole = _num(result.metrics[ALL][metric]["value"])
    return interval_chart(df, name, f"{name} low", f"{name} high", whole,
                          f"{name} (95% interval)"), df


def confusion_frame(result) -> pd.DataFrame:
    conf = np.asarray(result.confusion)
    classes = list(result.classes)
    return pd.DataFrame([{"gold": classes[g], "prediction": classes[p],
                          "count": int(conf[g, p]), "right": g == p}
                         for g in range(len(classes)) for p in range(len(classes))])


def confusion_chart(result):
    """(chart, frame): gold labels down, predictions across, the count in each cell; a click
    on a cell selects its gold label and prediction (the page filters the table)."""
    df = confusion_frame(result)
    classes = list(result.classes)
    pick = alt.selection_point(fields=["gold", "prediction"], name="cell")
    base = alt.Chart(df).encode(
        x=alt.X("prediction:N", sort=classes, title="predicted",
                axis=alt.Axis(labelAngle=-40, labelLimit=90)),
        y=alt.Y("gold:N", sort=classes, title="gold", axis=alt.Axis(labelLimit=90)))
    cells = base.mark_rect(stroke="#fff").encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues"), legend=None),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.5)),
        tooltip=["gold:N", "prediction:N", "count:Q"]).add_params(pick)
    text = base.mark_text(fontSize=12).encode(
        text="count:Q",
        color=alt.condition(alt.datum.count > max(1, int(df["count"].max())) / 2,
                            alt.value("white"), alt.value("#222")))
    size = CELL_PX * max(1, len(classes))
    # width and height are the whole chart's (Streamlit fits labels, titles and cells into
    # them, and into a narrower column), as ui.common.heads.heads_heatmap does
    return alt.layer(cells, text).properties(width=size + LABELS_PX, height=size + AXIS_PX,
                                             title="Gold against predicted"), df


def change_frame(result, key: str = ALL) -> pd.DataFrame:
    rows = []
    for m, v in (result.changes or {}).get(key, {}).items():
        rows.append({"metric": METRIC_NAMES[m], result.model: _num(v["a"]),
                     result.compare: _num(v["b"]), "change": _num(v["change"]),
                     "95% low": _num(v["low"]), "95% high": _num(v["high"])})
    return pd.DataFrame(rows)


def change_chart(result, metric: str):
    """(chart, frame): the change of ``metric`` (second minus first) in every slice with its
    paired interval; the dashed line is no change."""
    rows = []
    for key, v in (result.changes or {}).items():
        c = v[metric]
        rows.append({"slice": result.metrics[key]["name"], "change": _num(c["change"]),
                     "low": _num(c["low"]), "high": _num(c["high"])})
    df = pd.DataFrame(rows)
    title = f"{METRIC_NAMES[metric]}: {result.compare} minus {result.model}"
    return interval_chart(df, "change", "low", "high", 0.0, title[:90]), df


def flip_frame(result) -> pd.DataFrame:
    """One row per counterfactual kind and slice: the flip rate and its interval."""
    rows = []
    for kind, v in (result.robustness or {}).items():
        for key, r in v["rates"].items():
            if r["n"]:
                rows.append({"kind": v["name"], "slice": result.metrics[key]["name"],
                             "answers": r["n"], "flip rate": _num(r["value"]),
                             "95% low": _num(r["low"]), "95% high": _num(r["high"])})
    return pd.DataFrame(rows)


def flip_chart(result, kind: str):
    """(chart, frame): the flip rate of ``kind`` in every slice with its interval."""
    df = flip_frame(result)
    name = result.robustness[kind]["name"]
    part = df[df["kind"] == name]
    whole = _num(result.robustness[kind]["rates"][ALL]["value"])
    return interval_chart(part, "flip rate", "95% low", "95% high", whole,
                          f"Flip rate, % ({name})"), part


def flips_list(result, kind: str, link) -> pd.DataFrame:
    """The flipped rows of ``kind``: the input, the counterfactual's change, both answers and
    ``link(row)`` (a Causal patching link, or None)."""
    v = result.robustness[kind]
    pred = result.predictions
    rows = []
    for j, k in enumerate(v["rows"]):
        if not v["flipped"][j]:
            continue
        text, pair, note = v["counterfactuals"][j]
        rows.append({"row": int(k), "open": link(int(k)),
                     "input": result.reviews[k] if result.absa else result.texts[k],
                     "aspect": result.categories[k] if result.absa else "", "change": note,
                     "answer": result.classes[int(pred[k])],
                     "counterfactual's answer": result.classes[int(v["predictions"][j])]})
    return pd.DataFrame(rows)


POSITIVE, NEGATIVE = (37, 99, 235), (220, 38, 38)
CHIPS_CSS = ("<style>.pred-edit{line-height:2;overflow-wrap:anywhere;max-width:100%}"
             ".pred-w{display:inline-block;padding:0 3px;margin:1px;border-radius:3px;"
             "font-family:ui-monospace,monospace;font-size:.85rem;white-space:pre-wrap;"
             "word-break:break-all;max-width:100%}.pred-w.sp{opacity:.5}"
             ".pred-w.changed{outline:2px solid #f59e0b;font-weight:600}</style>")


def word_scores(attr, method: str) -> np.ndarray:
    """Each word's score: the sum of its tokens' input scores (``method``)."""
    scores = np.asarray(attr.methods[method].input, dtype=np.float64)
    out = np.zeros(len(attr.words))
    np.add.at(out, np.asarray(attr.word_ids), scores)
    return out


def edit_chips(side, method: str) -> str:
    """HTML: the input's words, each shaded by its attribution (blue for, red against), the
    changed ones outlined; escaped text, the score on hover."""
    attr = side.attribution
    scores = word_scores(attr, method)
    special = {int(attr.word_ids[t]) for t in range(len(attr.tokens)) if attr.special[t]}
    real = [abs(s) for k, s in enumerate(scores) if k not in special]
    scale = max(real) if real and max(real) > 0 else 1.0
    chips = []
    for k, (word, s) in enumerate(zip(attr.words, scores)):
        sp = k in special
        rgb = POSITIVE if s >= 0 else NEGATIVE
        alpha = 0.0 if sp else min(1.0, abs(s) / scale) * 0.85
        cls = "pred-w" + (" sp" if sp else "") + (" changed" if side.changed[k] else "")
        chips.append(f"<span class='{cls}' style='background:rgba({rgb[0]},{rgb[1]},{rgb[2]},"
                     f"{alpha:.3f})' title='{esc(word)}: {s:.4f}'>{esc(word)}</span>")
    return CHIPS_CSS + "<div class='pred-edit'>" + "".join(chips) + "</div>"
