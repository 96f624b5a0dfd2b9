"""No-op statistics page blocks: the cached computations (corpus statistics, the loss head,
gradient importance; the heavy ones through the server-wide queue ``ui.common.jobs.run_job``, tokens
per example capped in demo mode) and the charts and tables (docs/METHODS.md sections 3, 4
and 5)."""

from __future__ import annotations


import altair as alt
import pandas as pd
import streamlit as st

from analysis.core.models import ModelLoadError
from analysis.noop import LABELS, loss_head, noop_heads, positional_heads
from analysis.noop.study import GRADIENTS, STUDY, GradientInputs, Inputs
from ui.common.chart_cache import BuiltChart, cached_chart, draw
from ui.common.charts import has_panels, side_by_side
from ui.common.errors import plain, show_error
from ui.common.exports.export import chart_downloads
from ui.common.heads import heads_frame, heads_heatmap
from ui.common.jobs import run_job
from ui.common.frame.links import attention_link
from ui.common.exports.findings import add_button
from ui.server.settings import settings
from ui.noop import state as noop_state
from ui.noop.state import StatsKey
from analysis.noop.reading import layer_rows

PROPORTIONS = ["cls", "sep", "punct", "self", "prev", "next"]
CAT_LABEL = {"cls": "[CLS]", "sep": "[SEP]", "punct": ". and ,", "other": "other tokens"}
CAT_COLORS = alt.Scale(domain=["[CLS]", "[SEP]", ". and ,", "other tokens"],
                       range=["#d62728", "#1f77b4", "#2ca02c", "#7f7f7f"])
EXPLAIN = {
    "fig2": "Each dot is one attention head; the lines are the layer averages. The height is "
            "how much of the head's attention, on average over the corpus, lands on [CLS], on "
            "[SEP] or on the commas and full stops. Heads that pile their attention on [SEP] "
            "are often resting there: a no-op.",
    "maps": "One small square per attention head (rows are layers, columns heads). The darker "
            "the square, the larger the share of attention it puts on that kind of token; "
            "entropy in nats says how spread out its attention is.",
    "entropy": "Entropy measures how spread out a head's attention is. The dashed line is what "
               "perfectly even attention would give; a head far below it looks at only a few "
               "tokens.",
    "gradients": "Gradient importance asks: if this attention weight changed a little, how much "
                 "would the model's loss change? Where attention to [SEP] has a tiny gradient, "
                 "it barely matters: a no-op.",
    "norms": "Each dot is one head. Across: how much attention weight it puts on [CLS]/[SEP]. "
             "Up: how much of what it actually passes along comes from them (the attention "
             "norm). Dots far below the diagonal look at [CLS]/[SEP] but take almost nothing "
             "from them.",
    "heads": "The heads that rest most on [SEP]/[CLS] (no-op heads) and the heads that mostly "
             "look at the previous or next token. Open a head to see it on the corpus's first "
             "example on the Attention page.",
}
FIG2_COLORS = alt.Scale(domain=["[CLS]", "[SEP]", ". and ,"],
                        range=["#d62728", "#1f77b4", "#2ca02c"])


# ---------------------------------------------------------------------------------------------
# Cached computations


def token_limit(loaded) -> int:
    """Tokens per example: the model's maximum, or the server's cap (demo: ``max_tokens``)."""
    return settings().cap("max_tokens", loaded.max_length)


@st.cache_data(max_entries=16, show_spinner=False)
def _stats(key: StatsKey, _loaded, _dataset):
    inputs = Inputs(_loaded.spec, _dataset, key.batch_size, norms=key.norms,
                    max_length=key.token_limit)
    return run_job("Corpus statistics", STUDY.plan(inputs, _loaded), key=key.job_key,
                   kind="No-op statistics", size=key.n_examples, unit="examples")


def stats_key(spec: str, fingerprint: str, n_examples: int, batch_size: int, norms: bool,
              loaded) -> StatsKey:
    """What the statistics of these settings are cached on (with the token limit)."""
    return StatsKey(spec, fingerprint, n_examples, batch_size, norms, token_limit(loaded))


def compute_stats(key: StatsKey, loaded, dataset):
    """Corpus statistics through the server-wide queue (``ui.common.jobs``), cached per (model,
    corpus, settings, token limit); the progress bar shows examples/s while it runs (replayed,
    finished, on a cache hit, without queueing)."""
    return _stats(key, loaded, dataset)


@st.cache_resource(max_entries=2, show_spinner="Looking for the model's loss head...")
def get_loss_head(spec: str):
    return loss_head(spec)


@st.cache_data(max_entries=8, show_spinner=False)
def _gradients(spec: str, fingerprint: str, n_examples: int, max_length: int, _loaded, _dataset):
    head = get_loss_head(spec)
    if head.kind is None:
        return None
    work = GRADIENTS.plan(GradientInputs(spec, _dataset, n_examples, max_length), (_loaded, head))
    return run_job("Gradient importance", work, key=noop_state.JOB_GRADIENTS.format(fingerprint),
                   kind="No-op gradient importance", size=n_examples, unit="examples")


def compute_gradients(spec: str, fingerprint: str, n_examples: int, loaded, dataset):
    """Gradient importance through the server-wide queue, cached like :func:`compute_stats`."""
    return _gradients(spec, fingerprint, n_examples, token_limit(loaded), loaded, dataset)


# ---------------------------------------------------------------------------------------------
# Charts


def stats_frame(stats, names) -> pd.DataFrame:
    """Long table (statistic, label, layer, head, value) of the statistics ``names``."""
    return heads_frame({n: stats.metrics[n] for n in names}, column="statistic", labels=LABELS)


def show_chart(built: BuiltChart, basename: str, key: str, stretch: bool = False,
               report: dict | None = None) -> None:
    """A chart built once per result (``ui.common.chart_cache.cached_chart``) with its PNG/SVG/CSV
    downloads and, with ``report`` (the finding's source:
    ``ui.common.exports.findings.make_finding`` arguments), an "Add to report" button."""
    spec = built.spec if built.spec is not None else built.chart.to_dict()
    if has_panels(spec):  # the heatmap grids: one per row on a phone
        side_by_side(built, key)
    else:
        draw(built, stretch=stretch)
    chart_downloads(built.chart, basename, key=key, df=built.df)
    if report is not None:
        add_button(built.title, key, chart=built.chart, **report)


def figure2(stats) -> tuple[alt.Chart, pd.DataFrame]:
    """Clark et al. fig. 2: per-layer mean attention to [CLS], [SEP], punctuation (lines) with
    every head as a point."""
    df = stats_frame(stats, ["cls", "sep", "punct"])
    df["to"] = df["statistic"].map(CAT_LABEL)
    base = alt.Chart(df).encode(
        x=alt.X("layer:O", title="layer"),
        color=alt.Color("to:N", title="attention to", scale=FIG2_COLORS),
    )
    points = base.mark_circle(size=28, opacity=0.45).encode(
        y=alt.Y("value:Q", title="average attention", scale=alt.Scale(domain=[0, 1])),
        xOffset=alt.XOffset("to:N"),
        tooltip=["to", "layer", "head", alt.Tooltip("value:Q", format=".3f")],
    )
    lines = base.mark_line(point=True, strokeWidth=2.5).encode(y="mean(value):Q")
    chart = (points + lines).properties(height=320, title="Attention to special tokens and "
                                        "punctuation per layer (points: heads)")
    return chart, df


def heatmap_grid(stats, names, title: str, scheme="blues") -> tuple[alt.Chart, pd.DataFrame]:
    """One layers x heads heatmap per statistic, three per row, each with its own colour scale
    from 0 to its largest value and its own legend: on one 0-1 scale the [SEP] map's 15% heads
    looked blank next to [CLS]'s 90% (issue 49)."""
    df = stats_frame(stats, names)
    chart = heads_heatmap(df, "value", title=title, scheme=scheme, legend="",
                          facet="label", facet_sort=[LABELS[n] for n in names], columns=3,
                          domain_min=0)
    return chart.resolve_scale(color="independent"), df


def entropy_chart(stats) -> tuple[alt.Chart, pd.DataFrame]:
    """Entropy per layer (all rows, [CLS]'s row) against uniform attention."""
    df = stats_frame(stats, ["entropy", "entropy_cls"])
    df["rows"] = df["statistic"].map({"entropy": "all tokens", "entropy_cls": "[CLS] only"})
    base = alt.Chart(df).encode(x=alt.X("layer:O"), color=alt.Color("rows:N", title="rows"))
    pts = base.mark_circle(size=28, opacity=0.4).encode(
        y=alt.Y("value:Q", title="entropy (nats)"), xOffset="rows:N",
        tooltip=["rows", "layer", "head", alt.Tooltip("value:Q", format=".3f")])
    lines = base.mark_line(point=True, strokeWidth=2.5).encode(y="mean(value):Q")
    ref = alt.Chart(pd.DataFrame({"uniform": [stats.uniform_entropy]})).mark_rule(
        strokeDash=[6, 4], color="black").encode(y="uniform:Q", tooltip=[
            alt.Tooltip("uniform:Q", title="uniform attention", format=".3f")])
    chart = (pts + lines + ref).properties(
        height=300, title=f"Attention entropy per layer (dashed: uniform attention, "
                          f"{stats.uniform_entropy:.2f} nats)")
    out = df.copy()
    out["uniform_reference"] = stats.uniform_entropy
    return chart, out


def gradient_chart(grads) -> tuple[alt.Chart, pd.DataFrame]:
    """Mean |dL/dA| per layer for each key category (Clark et al. fig. 3)."""
    rows = []
    for cat in grads.per_head:
        for l, v in enumerate(grads.per_layer(cat)):
            rows.append({"to": CAT_LABEL[cat], "layer": l + 1, "mean_abs_grad": float(v)})
    df = pd.DataFrame(rows)
    chart = alt.Chart(df).mark_line(point=True, strokeWidth=2.5).encode(
        x="layer:O", y=alt.Y("mean_abs_grad:Q", title="mean |dL/dA|"),
        color=alt.Color("to:N", title="attention to", scale=CAT_COLORS),
        tooltip=["to", "layer", alt.Tooltip("mean_abs_grad:Q", title="mean |dL/dA|", format=".3e")],
    ).properties(height=300, title="Gradient of the loss with respect to attention weights")
    return chart, df


def norm_chart(stats) -> tuple[alt.Chart, pd.DataFrame]:
    """Per head: attention weight on [CLS]+[SEP] against its share of ||A f(x)||."""
    w = stats.metrics["cls"] + stats.metrics["sep"]
    n = stats.metrics["norm_cls"] + stats.metrics["norm_sep"]
    # field names without brackets: Vega-Lite reads "[...]" in a field name as a nested access
    df = heads_frame(w, value="weight")
    df["norm_share"] = heads_frame(n, value="norm_share")["norm_share"]
    diag = alt.Chart(pd.DataFrame({"x": [0, 1], "y": [0, 1]})).mark_line(
        strokeDash=[4, 4], color="#999").encode(x="x:Q", y="y:Q")
    pts = alt.Chart(df).mark_circle(size=60, opacity=0.75).encode(
        x=alt.X("weight:Q", title="attention weight on [CLS]+[SEP]",
                scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("norm_share:Q", title="share of ||A f(x)|| on [CLS]+[SEP]",
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("layer:O", scale=alt.Scale(scheme="viridis")),
        tooltip=["layer", "head", alt.Tooltip("weight:Q", title="weight", format=".3f"),
                 alt.Tooltip("norm_share:Q", title="norm share", format=".3f")],
    )
    chart = (diag + pts).properties(
        height=360, width=420,
        title="Weight vs norm share on [CLS]+[SEP] per head (below the diagonal: no-op)")
    return chart, df


# ---------------------------------------------------------------------------------------------
# Blocks


def gradients_block(spec: str, fingerprint: str, n_examples: int, loaded, dataset,
                    report: dict | None = None) -> None:
    """The gradient chart for the model's own loss, or why there is none."""
    try:
        head = get_loss_head(spec)
    except ModelLoadError as exc:
        show_error(exc)
        return
    if head.kind is None:
        st.info(plain(head.note), icon=":material/info:")
        return
    st.caption(plain(head.note))
    grads = compute_gradients(spec, fingerprint, n_examples, loaded, dataset)
    built = cached_chart(noop_state.gradients_chart_key(spec, fingerprint, n_examples,
                                                         token_limit(loaded)),
                         lambda: gradient_chart(grads))
    show_chart(built, "noop_gradients", noop_state.CHART_GRADIENTS, stretch=True, report=report)
    st.caption(f"Mean |dL/dA[i,j]| over the cells whose key j is in each category, per "
               f"layer, over {grads.n_examples} examples. Where the [SEP] line is low, "
               "changing attention to [SEP] barely changes the loss: a no-op.")


def layer_table(stats) -> None:
    """Per layer, the numbers the reading states in its units (percent, nats) with their 95%
    intervals over examples."""
    frame = pd.DataFrame(layer_rows(stats))
    st.caption("Per layer, mean over the layer's heads and over examples; the 95% intervals "
               "are over examples (normal approximation).")
    st.dataframe(frame, hide_index=True, key=noop_state.TABLE_LAYERS,
                 column_config={c: st.column_config.NumberColumn(
                     format="%.2f" if "nats" in c else "%.1f")
                     for c in frame.columns if pd.api.types.is_float_dtype(frame[c])})


def _percent(df: pd.DataFrame) -> dict:
    """Shares shown in percent, as the reading states them."""
    return {c: st.column_config.NumberColumn(format="percent")
            for c in df.columns if pd.api.types.is_float_dtype(df[c])}


def heads_tables(stats, spec: str, text: str, pair: str | None,
                 report: dict | None = None) -> None:
    """The top no-op heads and the positional heads, each linked to the Attention page on the
    corpus's first example (``text``, ``pair``)."""
    link_col = st.column_config.LinkColumn(
        "Attention page", display_text="open head",
        help=plain(f"Opens the head on the corpus's first example: {text[:60]}"))

    def with_links(rows: list[dict]) -> pd.DataFrame:
        df = pd.DataFrame(rows)
        if not df.empty:
            df["open"] = [attention_link(spec, text, pair, layer=r["layer"], head=r["head"])
                          for r in rows]
        return df

    by = st.radio("Rank the heads by their attention to", list(noop_state.RANKS),
                  format_func=noop_state.RANKS.get, key=noop_state.RANK, horizontal=True,
                  bind="query-params")
    st.markdown(f"**No-op heads**: most weight on {noop_state.RANKS[by]}")
    top = with_links(noop_heads(stats, top=10, by=by))
    st.dataframe(top, hide_index=True, column_config={"open": link_col, **_percent(top)},
                 key=noop_state.TABLE_NOOP)
    if report is not None:
        add_button(f"No-op heads: most weight on {noop_state.RANKS[by]}",
                   noop_state.ADD_TABLE_NOOP, df=top, **report)
    st.markdown("**Positional heads**: more than 50% on the previous or next token")
    pos = positional_heads(stats, threshold=0.5)
    if pos:
        frame = with_links(pos)
        st.dataframe(frame, hide_index=True, column_config={"open": link_col, **_percent(frame)},
                     key=noop_state.TABLE_POSITIONAL)
        if report is not None:
            add_button("Positional heads: over 50% on the previous or next token",
                       noop_state.ADD_TABLE_POSITIONAL, df=frame, **report)
        return
    best = max(((k, float(stats.metrics[k].max())) for k in ("prev", "next")),
               key=lambda kv: kv[1])
    st.info(f"No head puts more than 50% on the previous or next token; the most is "
            f"{100 * best[1]:.0f}% on the {'previous' if best[0] == 'prev' else 'next'} "
            "token.", icon=":material/info:")
