"""The Head importance page's results, top to bottom: the numbers, the reading and the tabs of
charts, for a result computed on this server (``live``: with the head picker's link to the
Attention page and "Add to report") or read from the example's precomputed file while the
example is built (the same charts and reading; nothing that needs the model)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from analysis.importance.reading import free_heads, name, reading, removable_together
from analysis.importance.scoring import LOSS
from analysis.report.glossary import SHORT
from ui.common.errors import plain
from ui.common.exports.findings import add_button
from ui.common.frame.explain import explain, glossed
from ui.common.frame.links import attention_link
from ui.common.frame.url_select import url_choice
from ui.importance import blocks as B
from ui.importance import state as S


@dataclass
class Live:
    """What only a result computed here has: the model (the report's provenance), an input
    of its data (the Attention page's link), the other method's result and what the model's
    fine-tune trained (the reading)."""

    spec: str
    loaded: object
    text: str
    pair: str | None
    other: object = None
    trained: object = None


def numbers_of(result, m: str) -> tuple[dict, dict]:
    """The page's numbers (name -> value) and the tiles' short forms."""
    L, H = result.shape
    drops = result.drops(m)
    together = removable_together(result)
    tol = "1 point" if m != LOSS else f"{result.pruning['tolerance']:g} in loss"
    worst = divmod(int(drops.argmax()), H)
    unit = "" if m == LOSS else " points"
    numbers = {"Intact " + S.METRIC_NAMES[m]: f"{result.intact[m]:.3f}" if m == LOSS
               else f"{result.intact[m]:.1f}",
               "Heads free to go one at a time": f"{free_heads(result, m)} of {L * H}",
               "Costliest head": f"{name(*worst)} ({result.heads[m][worst]:+.2f}{unit})",
               f"Removable together within {tol}": f"{together[0]:.0%} ({together[1]} heads)"
               if together else "n/a",
               "Spearman (gradient)": "n/a" if result.spearman[m] != result.spearman[m]
               else f"{result.spearman[m]:.2f}"}
    # a metric's value is one short line: the costliest head's change goes under it, in full
    # in its help
    change = f"{result.heads[m][worst]:+.2f}{unit}"
    short = {"Costliest head": dict(value=name(*worst), delta=change, delta_color="off",
                                    delta_arrow="off",
                                    help=f"Disabling head {name(*worst)} changes the "
                                         f"{S.METRIC_NAMES[m]} by {change}, more than any other "
                                         "head."),
             # a jargon label gets its everyday words where it first shows (issue 49)
             "Spearman (gradient)": dict(value=numbers["Spearman (gradient)"],
                                         help=f"Spearman: {SHORT['Spearman']}. Does gradient "
                                              "importance rank the heads as the measured drops "
                                              "do?")}
    return numbers, short


def tiles(numbers: dict, short: dict) -> None:
    """The numbers as tiles, three to a row: five side by side cut their labels at 1400 px
    (issue 49)."""
    items = list(numbers.items())
    for row in (items[:3], items[3:]):
        for col, (label, value) in zip(st.columns(3), row):
            col.metric(label, **short.get(label, dict(value=value)))


def show(result, marks, m: str, key: tuple, source: dict | None, live: Live | None) -> None:
    """Everything below the controls for ``result`` (metric ``m``); ``key``: what its charts
    are cached on; ``source``: the report's provenance (None: no "Add to report")."""
    L, H = result.shape
    numbers, short = numbers_of(result, m)
    tiles(numbers, short)
    worst = divmod(int(result.drops(m).argmax()), H)

    st.subheader("Reading")
    lines = reading(result, marks.aspect, marks.sep, other=live.other if live else None,
                    trained=live.trained if live else None)
    st.markdown(glossed("\n".join(f"- {plain(line)}" for line in lines)))
    report = (lambda *a, **kw: add_button(*a, **kw, **source)) if source else \
        (lambda *a, **kw: None)
    report("Head importance: the reading", f"{S.REPORT}-reading", reading=lines,
           numbers=numbers)

    tabs = st.tabs(S.TABS, key=S.TAB, bind="query-params")
    with tabs[0]:
        explain("Each square is one head (rows: layers, columns: heads, counted from 1). Its "
                "colour "
                "is the change of the score when that head alone is switched off: red, the model "
                "gets worse without it; blue, it gets better; white, no change. A black border "
                "marks the Aspect heads page's top heads, a purple one the heads that put over "
                "half their attention on [SEP] (No-op statistics).")
        built = B.show(key, "map", lambda: B.map_chart(result, m, marks), "importance-map",
                       stretch=False)
        st.caption(B.BORDERS)
        report("Change per head with the head disabled", f"{S.REPORT}-map", chart=built.chart,
               numbers=numbers)
        p1, p2, p3 = st.columns([1, 1, 2], vertical_alignment="bottom")
        # the most needed head by default: bound by url_choice (a link to layer or head 1 keeps it)
        # ... and back on it for another result (issue 49)
        layer = int(url_choice(p1, "Layer", list(range(1, L + 1)), key=S.LAYER,
                               default=worst[0] + 1, follows=(key, m)))
        head = int(url_choice(p2, "Head", list(range(1, H + 1)), key=S.HEAD, default=worst[1] + 1,
                              follows=(key, m)))
        lo, hi = result.heads_ci[m][layer - 1, head - 1]
        other = live.other if live else None
        p3.markdown(plain(f"Head {layer}-{head}: {result.heads[m][layer - 1, head - 1]:+.3f} "
                          f"(95% {lo:+.3f} to {hi:+.3f}), gradient importance "
                          f"{result.gradient[layer - 1, head - 1]:.3f}" + (
                              f"; with {S.METHODS[other.method]}: "
                              f"{other.heads[m][layer - 1, head - 1]:+.3f}"
                              if other is not None and m in other.heads else "")))
        if live is not None:
            st.link_button(f"Open head {layer}-{head} in the Attention page",
                           attention_link(live.spec, live.text, live.pair, layer, head),
                           icon=":material/visibility:")
    with tabs[1]:
        explain("Each bar is a whole layer switched off (all its heads at once), with its 95% "
                "bootstrap interval.")
        built = B.show(key, "layers", lambda: B.layer_chart(result, m), "importance-layers")
        report("Change with a whole layer disabled", f"{S.REPORT}-layers", chart=built.chart)
    with tabs[2]:
        explain("The heads whose removal changes the score beyond its 95% bootstrap interval: "
                "the model needs them (hurts) or does better without them (helps).")
        df = B.beyond_table(result, m, live.spec if live else None,
                            live.text if live else None, live.pair if live else None)
        B.show_table(df, S.TABLE)
        report("Heads beyond the interval", f"{S.REPORT}-table", df=df.drop(columns="open",
                                                                            errors="ignore"))
    with tabs[3]:
        explain("Heads removed together, 0% to 90% of all of them, in three orders: the least "
                "harmful first by the measured change, by gradient importance, and at random (5 "
                "orders: the line is their mean, the band their range). The dashed line is the "
                "intact model.")
        if result.pruning is not None:
            built = B.show(key, "pruning", lambda: B.pruning_chart(result), "importance-pruning")
            report("Pruning curve", f"{S.REPORT}-pruning", chart=built.chart)
    with tabs[4]:
        explain("Gradient importance (Michel et al.): how much the loss would move if a head's "
                "output were turned down a little, averaged over the examples and scaled per "
                "layer. If it ranks the heads as the measured drops do (Spearman correlation near "
                "1), it is a cheap stand-in for switching every head off.")
        built = B.show(key, "gradient", lambda: B.gradient_chart(result), "importance-gradient")
        report("Gradient importance against measured drops", f"{S.REPORT}-gradient",
               chart=built.chart)
