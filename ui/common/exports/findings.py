"""The findings report in the session: an "Add to report" button for any chart, table or view
(:func:`add_button`) and the Report page's blocks (reorder, remove, the example finding).

A finding keeps what the page showed: the chart as SVG (vl-convert, server side, cleaned by
``analysis.report.clean_svg``), a table's rows, the key numbers, the plain reading, the link that
reopens the view and its provenance (model name and weights hash, data name and size, the
settings). Findings live in ``st.session_state`` only: nothing is written to disk."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
import vl_convert as vlc

from analysis.core.errors import DataError
from analysis.core.maps import attention_for
from analysis.report import MAX_FINDINGS, Finding, model_source
from ui.common.exports import state
from ui.common.exports.keep import keep_report
from ui.common.exports.state import report
from ui.common.errors import plain
from ui.common.frame.links import input_params, page_link, spec_params


def model_lines(loaded) -> dict:
    """Provenance lines of a loaded model (its weights hashed once per model object)."""
    with st.spinner("Hashing the model's weights..."):
        return model_source(loaded)


def _svg(chart) -> str:
    return vlc.vegalite_to_svg(chart.to_json(), allowed_base_urls=[])


def make_finding(title: str, *, page: str, url_path: str, chart=None, df=None,
                 numbers: dict | None = None, reading: list | None = None, caption: str = "",
                 loaded=None, data: str | None = None, settings: dict | None = None,
                 kind: str | None = None) -> Finding:
    """A finding of what the page shows now (see the module's text)."""
    source = {"page": page}
    if loaded is not None:
        source.update(model_lines(loaded))
    if data:
        source["data"] = data
    for k, v in (settings or {}).items():
        source[f"setting: {k}"] = v
    chart = chart() if callable(chart) else chart  # a callable: built only on a click
    df = df() if callable(df) else df
    kind = kind or ("chart" if chart is not None else "table" if df is not None else "view")
    kw = dict(kind=kind, page=page, caption=caption, numbers=numbers or {},
              reading=reading or [], link=page_link(url_path), source=source,
              svg=_svg(chart) if chart is not None else "")
    if df is not None:
        return Finding.from_frame(title, df, **kw)
    return Finding(title=title, **kw)


def add_button(title: str, key: str, **kw) -> None:
    """An "Add to report" button; a click pins the finding (``kw``: see :func:`make_finding`)
    and says so."""
    if not st.button("Add to report", key=state.REPORT_ADD.format(key),
                     icon=":material/playlist_add:",
                     help="Pin this result, its numbers, its link and its provenance to the "
                          "findings report (Report page)."):
        return
    rep = report()
    if len(rep.findings) >= MAX_FINDINGS:
        st.warning(f"The report holds at most {MAX_FINDINGS} findings; remove some on the "
                   "Report page first.", icon=":material/info:")
        return
    try:
        finding = make_finding(title, **kw)
    except DataError as exc:
        st.error(plain(str(exc)), icon=":material/error:")
        return
    rep.findings.append(finding)
    keep_report(state.KEEP_ADD)  # kept in the browser now: a reload straight away finds it
    st.toast(plain(f"Added to the report: {finding.title} ({len(rep.findings)} finding(s))."),
             icon=":material/playlist_add_check:")


# ---------------------------------------------------------------------------------------------
# The Report page's blocks


def move(k: int, step: int) -> None:
    """Move finding ``k`` up (-1) or down (+1)."""
    items = report().findings
    j = k + step
    if 0 <= k < len(items) and 0 <= j < len(items):
        items[k], items[j] = items[j], items[k]


def remove(k: int) -> None:
    items = report().findings
    if 0 <= k < len(items):
        del items[k]


def example_finding(ctx) -> Finding:
    """A first finding from the sidebar's model and text: per layer, the share of attention on
    [CLS], [SEP] and the token itself (mean over heads and tokens), with its reading."""
    res = attention_for(ctx.loaded, ctx.text, ctx.pair)
    att, sp = res.attentions, np.asarray(res.encoding.special, dtype=bool)
    n = att.shape[-1]
    cls = att[..., 0].mean((1, 2))
    sep = att[..., sp & (np.arange(n) > 0)].sum(-1).mean((1, 2))
    own = np.diagonal(att, axis1=2, axis2=3).mean((1, 2))
    df = pd.DataFrame([{"layer": l + 1, "to": name, "share": float(v[l])}
                       for name, v in (("[CLS]", cls), ("[SEP]", sep), ("itself", own))
                       for l in range(len(cls))])
    chart = alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("layer:O"), y=alt.Y("share:Q", title="share of attention",
                                   scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("to:N", title="attention to")).properties(
        width=420, height=260, title="Where attention goes, per layer (mean over heads)")
    top = int(np.argmax(sep))
    reading = [f"On this text ({n} tokens), attention to [SEP] peaks in layer {top + 1}: "
               f"{100 * sep[top]:.0f}% of all attention on average over its heads."]
    params = {**spec_params(ctx.spec), **input_params(ctx.text, ctx.pair), "view": "Model view"}
    source = {"page": "Attention", **model_lines(ctx.loaded),
              "data": f"the sidebar's text ({n} tokens)"}
    return Finding(title="Where attention goes, layer by layer", kind="chart", page="Attention",
                   caption="An example finding: edit this caption to say what you see.",
                   numbers={"Tokens": str(n), "Peak [SEP] layer": str(top + 1),
                            "Attention to [SEP] there": f"{sep[top]:.3f}"},
                   reading=reading, link=page_link("", params), source=source,
                   svg=_svg(chart))
