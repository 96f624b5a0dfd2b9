"""The Attribution page's pictures: the input coloured by each method (escaped tokens, the
number on hover), the methods' agreement matrix, the faithfulness table and curves. Token text
is escaped HTML here and a data field in the charts (never part of an expression)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from analysis.attribution.reading import points
from analysis.attribution.run import NAMES
from ui.common.html import esc

POSITIVE = (37, 99, 235)  # blue: a token that supports the prediction (or mixes in)
NEGATIVE = (220, 38, 38)  # red: a token that speaks against it (integrated gradients only)
CSS = ("<style>.attr-rows{display:grid;grid-template-columns:minmax(7rem,11rem) 1fr;"
       "gap:6px 10px;align-items:baseline;max-width:100%}"
       ".attr-name{font-size:.8rem;opacity:.8;overflow-wrap:anywhere}"
       ".attr-text{line-height:1.9;overflow-wrap:anywhere;min-width:0}"
       ".attr-tok{display:inline-block;padding:0 3px;margin:1px 1px;border-radius:3px;"
       "font-family:ui-monospace,monospace;font-size:.85rem;white-space:pre-wrap;"
       "word-break:break-all;max-width:100%}"
       ".attr-tok.sp{opacity:.55}"
       "@media (max-width:560px){.attr-rows{grid-template-columns:1fr}}</style>")


def _colour(value: float, scale: float) -> str:
    rgb = POSITIVE if value >= 0 else NEGATIVE
    alpha = 0.0 if scale <= 0 else min(1.0, abs(value) / scale)
    return f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{0.85 * alpha:.3f})"


def coloured_rows(tokens, special, methods: dict, names: dict | None = None) -> str:
    """HTML: one row per method, every token a chip whose background darkens with the
    method's score (scaled to the row's largest |score| over the non-special tokens; red for
    negative scores), the number in its ``title`` (hover). Specials are shown faded and left
    out of the scale. Token and method text are escaped."""
    names = names or NAMES
    special = np.asarray(special, dtype=bool)
    rows = []
    for name, scores in methods.items():
        s = np.asarray(scores, dtype=np.float64)
        scale = float(np.abs(s[~special]).max()) if (~special).any() else 0.0
        chips = []
        for tok, v, sp in zip(tokens, s, special):
            bg = "transparent" if sp else _colour(v, scale)
            chips.append(f"<span class='attr-tok{' sp' if sp else ''}' style='background:{bg}'"
                         f" title='{esc(tok)}: {v:.4f}'>{esc(tok)}</span>")
        rows.append(f"<div class='attr-name'>{esc(names.get(name, name))}</div>"
                    f"<div class='attr-text' data-method='{esc(name)}'>{''.join(chips)}</div>")
    return CSS + "<div class='attr-rows'>" + "".join(rows) + "</div>"


def agreement_frame(names, rho) -> pd.DataFrame:
    rows = []
    for a, na in enumerate(names):
        for b, nb in enumerate(names):
            rows.append({"row": NAMES.get(na, na), "column": NAMES.get(nb, nb),
                         "spearman": None if not np.isfinite(rho[a, b]) else float(rho[a, b])})
    return pd.DataFrame(rows)


AGREE_CELL, AGREE_LABELS = 56, 190  # px: a cell at full size; the room of the method names
PHONE_CELL, PHONE_LABELS = 34, 95   # the same on a 390 px screen


def agreement_chart(names, rho, phone: bool = False) -> alt.Chart:
    """The methods' Spearman agreement on this input, a diverging heatmap with the numbers.
    Its width is the whole chart's (Streamlit fits title, names and cells into it, and into a
    narrower column): the names' room plus a cell per method; the legend below. ``phone``: the
    version for a 390 px screen (names cut at 95 px, in full in the tooltip; smaller cells)."""
    df = agreement_frame(names, rho)
    order = [NAMES.get(n, n) for n in names]
    n = max(len(order), 1)
    room, cell = (PHONE_LABELS, PHONE_CELL) if phone else (AGREE_LABELS, AGREE_CELL)
    base = alt.Chart(df).encode(
        x=alt.X("column:N", sort=order, title=None,
                axis=alt.Axis(labelAngle=-40, labelLimit=room, labelOverlap=False)),
        y=alt.Y("row:N", sort=order, title=None,
                axis=alt.Axis(labelLimit=room, labelOverlap=False)))
    cells = base.mark_rect().encode(
        color=alt.Color("spearman:Q", scale=alt.Scale(scheme="redblue", domain=[-1, 1]),
                        title="Spearman", legend=alt.Legend(orient="bottom",
                                                            direction="horizontal")),
        tooltip=["row:N", "column:N", alt.Tooltip("spearman:Q", format=".2f")])
    text = base.mark_text(fontSize=9 if phone else 10).encode(
        text=alt.Text("spearman:Q", format=".2f"))
    title = ["Agreement between methods", "(rank correlation)"] if phone \
        else "Agreement between methods (rank correlation)"
    # the height is the cells' own (fit-x): fitted with its title, names and legend into a
    # fixed height, a phone drew 7 rows in 70 px, a strip of unreadable numbers (issue 49)
    return (cells + text).properties(title=title, width=room + cell * n, height=cell * n,
                                     autosize=alt.AutoSizeParams(type="fit-x",
                                                                 contains="padding"))


# the table's columns: the falls in points (as the reading says them), the leave-one-out
# agreement as the rank correlation it is
FALLS = {"comprehensiveness": "comprehensiveness (points)", "sufficiency": "sufficiency (points)"}
LOO = "leave-one-out (rank correlation)"


def faithfulness_frame(f) -> pd.DataFrame:
    """One row per method and the random baseline: the three measures with their intervals,
    comprehensiveness and sufficiency in points (100 x the fall in the predicted class's
    probability, as the reading writes them)."""
    rows = []
    for name, v in list(f.methods.items()) + [("random", f.random)]:
        row = {"method": "Random ranking" if name == "random" else NAMES.get(name, name)}
        for key, label in FALLS.items():
            s = v[key]
            row[label] = points(s["mean"])
            row[f"{key} 95% interval (points)"] = \
                f"{points(s['low']):.1f} to {points(s['high']):.1f}"
        s = v["loo_spearman"]
        row[LOO] = s["mean"]
        row["leave-one-out 95% interval"] = f"{s['low']:.2f} to {s['high']:.2f}"
        rows.append(row)
    return pd.DataFrame(rows)


def curves_frame(f) -> pd.DataFrame:
    """The AOPC curves, in points as the table."""
    rows = []
    for name, v in list(f.methods.items()) + [("random", f.random)]:
        label = "Random ranking" if name == "random" else NAMES.get(name, name)
        for measure in ("comprehensiveness", "sufficiency"):
            for k, value in zip(f.ks, v[measure]["curve"]):
                rows.append({"method": label, "measure": measure, "k": int(k),
                             "value": points(float(value))})
    return pd.DataFrame(rows)


def curves_chart(f) -> alt.Chart:
    """Comprehensiveness and sufficiency at each k (the AOPC curves)."""
    df = curves_frame(f)
    return alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("k:Q", title="Share of words removed or kept (%)"),
        y=alt.Y("value:Q", title="Fall in the predicted class's probability (points)"),
        color=alt.Color("method:N", title="Method"),
        strokeDash=alt.condition(alt.datum.method == "Random ranking", alt.value([4, 3]),
                                 alt.value([1, 0])),
        tooltip=["method:N", "measure:N", "k:Q", alt.Tooltip("value:Q", format=".1f")],
    ).properties(width=260, height=220).facet(
        column=alt.Column("measure:N", title=None))
