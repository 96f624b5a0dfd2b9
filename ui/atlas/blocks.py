"""The Head atlas page's blocks (docs/METHODS.md section 18): the layers x heads grid (colour =
role, size = measured use, outline = changed by fine-tuning), the table of every head, the
evidence card of one head with a link to each study's page on that head. Layers and heads are
1-indexed, as everywhere in the UI."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from analysis.atlas import facts as F
from ui.atlas import state as S
from ui.common.frame.links import page_link, spec_params

# one colour per role family (colour-blind safe where it matters: the five roles that name a
# function are distinct hues; no-op grey-blue, mixed dark, none a pale grey)
COLOURS = {"positional": "#e69f00", "broad": "#56b4e9", "no-op": "#8c9db5",
           "syntactic": "#009e73", "aspect": "#d55e00", "opinion": "#cc79a7",
           "mixed": "#3b3b6d", "none": "#e3e3e3"}
FAMILY_LABELS = {"positional": "positional", "broad": "broad", "no-op": "no-op ([SEP], [CLS], "
                 ". and ,)", "syntactic": "syntactic", "aspect": "aspect", "opinion": "opinion",
                 "mixed": "mixed", "none": "none"}
CELL = 20  # px per head: BERT-large's 16 heads fit a phone's 358 px column with the axis
NOT_MEASURED_SIZE = 90
AXIS_PX = 44  # the layer axis: its title and labels
MIN_PX = 330  # the legends' room (two columns of roles below, the sizes above)


def shown(h: dict, families, use: str) -> bool:
    """Whether a head passes the filters (its role family among ``families``, its use)."""
    if families and h["family"] not in families:
        return False
    if use == S.USED:
        return h["used"] == F.YES
    if use == S.UNUSED:
        return h["used"] == F.NO
    if use == S.DISAGREE:
        return h["disagreement"] is not None
    return True


def grid_frame(heads: list[dict], families=(), use: str = S.ALL) -> pd.DataFrame:
    """One row per head: where it is, its role and family, use, change, and the numbers the
    tooltip shows."""
    rows = []
    for h in heads:
        rows.append({"layer": h["layer"] + 1, "head": h["head"] + 1, "name": h["name"],
                     "role": h["role"], "roles": ", ".join(h["roles"]) or "none",
                     "family": h["family"], "used": h["used"],
                     "use": h["size"], "changed": bool(h["changed"]),
                     "cosine": h["cosine"], "sep": h["sep"], "importance": h["importance"],
                     "patching": h["patching"], "shown": shown(h, families, use),
                     "disagreement": h["disagreement"] or ""})
    return pd.DataFrame(rows)


def grid_chart(df: pd.DataFrame, L: int, H: int, title: str, use_label: str | None,
               select: bool = True):
    """The grid: one square per head, its colour the role family, its size the largest loss of
    the task with it switched off (a middle size where the task is not measured), a black
    outline where fine-tuning changed it; heads the filters hide are faded."""
    top = float(df["use"].max()) if df["use"].notna().any() else 0.0
    top = top if top > 0 else 1.0
    base = alt.Chart(df).encode(
        x=alt.X("head:O", title="head", axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("layer:O", title="layer"))
    size = (alt.condition("datum.use == null", alt.value(NOT_MEASURED_SIZE),
                          alt.Size("use:Q", scale=alt.Scale(domain=[0, top], range=[30, 330]),
                                   legend=alt.Legend(title=f"size: {use_label} lost",
                                                     orient="top", direction="horizontal",
                                                     symbolFillColor="#999", format=".0f",
                                                     tickCount=3)))
            if use_label else alt.value(NOT_MEASURED_SIZE))
    tips = [alt.Tooltip("name:N", title="head (layer-head)"), alt.Tooltip("roles:N",
                                                                          title="role"),
            alt.Tooltip("used:N", title="used by the task"),
            alt.Tooltip("use:Q", title="largest loss switched off", format=".2f"),
            alt.Tooltip("cosine:Q", title="before/after cosine", format=".3f"),
            alt.Tooltip("sep:Q", title="attention to [SEP]", format=".1%")]
    chart = base.mark_square(filled=True).encode(
        color=alt.Color("family:N", title="role",
                        scale=alt.Scale(domain=list(COLOURS), range=list(COLOURS.values())),
                        legend=alt.Legend(orient="bottom", columns=2)),
        size=size,
        stroke=alt.condition("datum.changed", alt.value("black"), alt.value("transparent")),
        strokeWidth=alt.value(2),
        opacity=alt.condition("datum.shown", alt.value(1.0), alt.value(0.15)),
        tooltip=tips)
    if select:
        chart = chart.add_params(alt.selection_point(name="pick", fields=["layer", "head"]))
    # the width is the whole chart's (fit-x: the squares share what the layer axis leaves),
    # the height the squares' own: on a column narrower than the chart the squares shrink in
    # width only a little (BERT-large's 16 heads on a phone: ~18 px each) and nothing scrolls
    return chart.properties(
        width=max(CELL * H + AXIS_PX, MIN_PX), height=CELL * L,
        title=alt.Title(title, anchor="start"),
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding")).configure_legend(
        labelLimit=130, titleLimit=300)


def grid(heads: list[dict], result, title: str, use_label: str | None, families=(),
         use: str = S.ALL, select: bool = True):
    """(the grid chart, its table) of ``heads`` of ``result`` (for ``cached_chart``)."""
    df = grid_frame(heads, families, use)
    return grid_chart(df, result.n_layers, result.n_heads, title, use_label, select), df


def table(heads: list[dict]) -> pd.DataFrame:
    """Every head in a table (1-indexed), the numbers the CLI writes."""
    return pd.DataFrame([{
        "layer": h["layer"] + 1, "head": h["head"] + 1, "role": h["role"],
        "roles": ", ".join(h["roles"]), "used": h["used"], "changed": h["changed"],
        "[SEP]": h["sep"], "[CLS]": h["cls"], "previous": h["prev"], "next": h["next"],
        "entropy": h["entropy"], "importance (spread evenly)": h["importance"],
        "importance (zeroed)": h["importance_mask"], "patching share": h["patching"],
        "cosine": h["cosine"], "disagreement": h["disagreement"] or ""} for h in heads])


def _link(page: str, layer: int, head: int, spec: str, links: dict) -> str:
    """The study page ``page`` with the head pinned where it has a head picker (``links``:
    :func:`ui.atlas.page.links`' pins and model choice)."""
    params = dict(spec_params(spec)) if page in ("attention", "syntax", "drift") else {}
    params.update(links["model"].get(page, {}))
    if page in links["pins"]:
        lk, hk = links["pins"][page]
        params.update({lk: layer + 1, hk: head + 1})
    return page_link(page, params)


def _ci(ci, pct: bool = False, places: int = 2) -> str:
    if not ci or any(x is None for x in ci):
        return ""
    return (f"{100 * ci[0]:.1f}% to {100 * ci[1]:.1f}%" if pct
            else f"{ci[0]:+.{places}f} to {ci[1]:+.{places}f}")


def evidence_rows(h: dict, spec: str, links: dict) -> pd.DataFrame:
    """The evidence card: every study's number for head ``h`` with its interval and baseline,
    and a link to the study's page with the head pinned where the page has a head picker."""
    f, layer, head = h["facts"], h["layer"], h["head"]
    rows = []

    def row(study, measure, value, interval="", baseline="", page=""):
        rows.append({"study": study, "measure": measure, "value": value,
                     "95% interval": interval, "baseline": baseline,
                     "open": _link(page, layer, head, spec, links) if page else None})

    noop = f.get("noop") or {}
    for key, words in (("sep", "attention to [SEP]"), ("cls", "attention to [CLS]"),
                       ("punct", "attention to . and ,"), ("self", "attention to itself"),
                       ("prev", "attention to the previous token"),
                       ("next", "attention to the next token")):
        if key in noop:
            row("No-op statistics", words, f"{100 * noop[key]:.1f}%", page="noop")
    if "entropy" in noop:
        row("No-op statistics", "entropy (how spread out, nats)", f"{noop['entropy']:.2f}",
            baseline=f"{noop.get('uniform_entropy', float('nan')):.2f} for even attention",
            page="attention")
    syn = f.get("syntax")
    if syn:
        row("Syntax", f"best relation: {syn['relation']} ({syn['direction'].replace('_', ' ')})",
            f"{100 * syn['accuracy']:.1f}% of {syn['n']} dependents",
            baseline=f"{100 * syn['baseline']:.1f}% for the best fixed offset", page="syntax")
    for kind, a in (f.get("aspects") or {}).items():
        row("Aspect heads", f"attention to {F.ASPECT_WORDS.get(kind, kind)} (rank {a['rank']})",
            f"{a['score']:.3f}", f"{a['ci'][0]:.3f} to {a['ci'][1]:.3f}",
            "" if a["baseline_score"] is None else
            f"{a['baseline_score']:.3f} ({'beaten' if a['beats'] else 'not beaten'})",
            page="aspects")
    for method, imp in (f.get("importance") or {}).items():
        unit = "" if imp["metric"] == "loss" else " points"
        row("Head importance", f"{imp['label']} change, {F.METHOD_WORDS[method]}",
            f"{imp['change']:+.2f}{unit}", _ci(imp["ci"]), "0: no change", page="importance")
        if imp.get("loss"):
            row("Head importance", f"mean loss change, {F.METHOD_WORDS[method]}",
                f"{imp['loss']['change']:+.3f}", _ci(imp["loss"]["ci"], places=3),
                "0: no change", page="importance")
    pat = f.get("patching")
    if pat:
        row("Causal patching", f"share of the change to {F.CONTRAST_WORDS.get(pat['contrast'])}",
            f"{100 * pat['share']:.1f}%", _ci(pat["ci"], pct=True),
            f"{100 * F.DEFAULT.carry:.0f}% to carry it", page="patching")
    d = f.get("drift")
    if d:
        row("Fine-tuning drift", "cosine of its maps before vs after", f"{d['cosine']:.3f}",
            baseline="1: unchanged", page="drift")
    return pd.DataFrame(rows)


def card(h: dict, spec: str, links: dict) -> None:
    """The evidence card of one head: its role and use in words, then every number."""
    st.markdown(f"**Head {h['name']}**: role **{h['role']}**"
                + (f" ({', '.join(h['roles'])})" if len(h["roles"]) > 1 else "")
                + f"; used by the task: **{h['used']}**"
                + ("" if h["changed"] is None else
                   f"; {'changed' if h['changed'] else 'not changed'} by fine-tuning") + ".")
    if h["disagreement"]:
        st.warning(h["disagreement"], icon=":material/compare_arrows:")
    df = evidence_rows(h, spec, links)
    st.dataframe(df, hide_index=True, key=S.CARD, column_config={
        "open": st.column_config.LinkColumn("page", display_text="open")})
