"""The Drift page's cached models and results, and its blocks of charts and tables, each chart
built once per result (docs/METHODS.md section 9). Layers and heads are 1-indexed, as
everywhere in the UI. The model choice (``pick_models``) is in ``ui.common.frame.models``. The
comparison runs through the server-wide queue (``ui.common.jobs.run_job``); a cached result is shown
at once."""

from __future__ import annotations


import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis.drift import (PATTERN_TYPES, DriftResult, PatternThresholds, gallery,
                            head_cosine, load_pair, pattern_shares,
                            pattern_transitions)
from analysis.drift import example_maps as _example_maps
from analysis.drift.job import DriftJob, has_labels, models_of
from analysis.core import cost
from analysis.core.models import LoadedModel, checkpoint_stamp
from ui.common.charts import attention_heatmap, fit_width, map_frame
from ui.common.chart_cache import BuiltChart, cached_chart, draw
from ui.common.frame.corpus import fingerprint
from ui.common.errors import plain
from ui.common.exports.export import chart_downloads
from ui.common.heads import DECIMALS, decimals, heads_frame, heads_heatmap
from ui.common.jobs import run_job
from ui.common.frame.links import attention_link
from ui.common.frame.resources import check_listed, get_headed, get_model
from ui.server.caches import byte_cached
from ui.server.settings import settings
from ui.common.frame.models import pick_models
from ui.drift import state as drift_state
from analysis.drift.reading import layer_rows

KINDS = {"cls": "attention to [CLS]", "sep": "attention to [SEP]",
         "punct": "attention to . and ,"}
BATCH_SIZE = 32
MODELS = ["before", "after"]
# ---------------------------------------------------------------------------------------------
# Cached models and results


def _after_model(spec: str) -> LoadedModel:
    """The after-checkpoint, with its classification head when it has one (the copy every page
    shares: :func:`ui.common.frame.resources.get_headed`), else its encoder (the shared one)."""
    headed = get_headed(spec)
    return get_model(spec) if headed is None else headed[0]


def before_after_models(sidebar_spec: str, sidebar_name: str | None) -> tuple[str, str]:
    """The before and after models (``ui.common.frame.models.pick_models``, this page's keys)."""
    return pick_models(sidebar_spec, sidebar_name, (drift_state.BEFORE, drift_state.BEFORE_NAME),
                       drift_state.AFTER_MODEL, drift_state.URL_CHECKED)


def model_pair(before_spec: str, after_spec: str) -> tuple[LoadedModel, LoadedModel]:
    """Both checkpoints, loaded once per spec (see :func:`analysis.drift.load_pair`); in demo
    mode only listed ones."""
    check_listed(before_spec)
    check_listed(after_spec)
    return _pair(before_spec, after_spec,
                 (checkpoint_stamp(before_spec), checkpoint_stamp(after_spec)))


@st.cache_resource(max_entries=2, show_spinner=False)
def _pair(before_spec: str, after_spec: str, stamps: tuple):
    """The checked pair, once per specs and stamps (a rerun neither loads nor checks again)."""
    return load_pair(before_spec, after_spec, get_model,
                     after_loader=_after_model)


@st.cache_data(max_entries=8, show_spinner=False)
def _run(before_spec: str, after_spec: str, stamps: tuple, corpus_key: str, max_length: int,
         _before, _after, _dataset) -> DriftResult:
    n = len(_dataset)
    # its cost before it runs: refused up front past the host's budget, else the estimate shown
    pairs = _dataset["text_pair"] if "text_pair" in _dataset.column_names else None
    lengths = cost.lengths_of(_before.tokenizer, _dataset["text"], pairs, max_length)
    estimate = cost.check_job("drift", cost.shape_of(_before), lengths,
                              settings().max_job_seconds, "Drift over this corpus")
    note = st.empty()
    note.caption(plain(cost.estimate_words(estimate, n, sum(lengths))))
    try:
        return run_job("Fine-tuning drift",
                       DriftJob(_before.spec, _after.spec, BATCH_SIZE, has_labels(_dataset)),
                       _dataset, models=models_of(_before, _after), max_length=max_length,
                       start=f"Running both models on {n} examples...",
                       step=lambda progress: lambda d, t: progress(
                           d / t, f"Both models: {d} / {t} examples"),
                       key=drift_state.JOB.format(corpus_key), kind="Fine-tuning drift",
                       size=n, unit="examples")
    finally:
        note.empty()


def drift_result(before: LoadedModel, after: LoadedModel, dataset) -> DriftResult:
    """:func:`analysis.drift.compare_models` over the picked corpus through the server-wide
    queue, cached per models (and their checkpoints' stamps), corpus and token cap (demo mode:
    ``max_tokens``)."""
    before_spec, after_spec, stamps, key, max_length = result_key(before, after, dataset)
    return _run(before_spec, after_spec, stamps, key, max_length, before, after, dataset)


@byte_cached()
def _maps(before_spec: str, after_spec: str, text: str, pair: str | None, _before, _after):
    # kept by their bytes (both models' maps of one example: 38 MB at 256 tokens, where 32
    # entries held 1.2 GB), shared by the sessions: read-only
    enc, before, after = _example_maps(_before, _after, text, pair)
    for maps in (before, after):
        maps.setflags(write=False)
    return enc, before, after


def example_maps(before: LoadedModel, after: LoadedModel, result: DriftResult, i: int):
    """(encoding, maps before [L,H,n,n], maps after) of the result's example ``i``."""
    return _maps(before.spec, after.spec, result.texts[i], result.pairs[i], before, after)


# ---------------------------------------------------------------------------------------------
# Charts


def result_key(before: LoadedModel, after: LoadedModel, dataset) -> tuple:
    """What :func:`drift_result` is cached on (models, their stamps, corpus, token cap): the
    charts of a result are built once per this key (and their own settings)."""
    key = fingerprint(dataset) + ("-labels" if "label" in dataset.column_names else "")
    stamps = (checkpoint_stamp(before.spec), checkpoint_stamp(after.spec))
    return (before.spec, after.spec, stamps, key,
            settings().cap("max_tokens", before.max_length))


def _chart(rkey: tuple, name: str, build) -> BuiltChart:
    """``build()`` -> (chart, table), built once per (result key, ``name``) when ``rkey`` is
    given (``ui.common.chart_cache``), else now."""
    if rkey:
        return cached_chart(("drift " + name, *rkey), build)
    chart, df = build()
    return BuiltChart(chart=chart, df=df, spec=None, title="")


def _show(built: BuiltChart, basename: str, dl_key: str, **kw) -> alt.Chart:
    """Draw a built chart (``kw``: ``st.altair_chart``'s) with its PNG/SVG/CSV downloads."""
    draw(built, **kw)
    chart_downloads(built.chart, basename, key=dl_key, df=built.df)
    return built.chart


def _lines(df: pd.DataFrame, y: str, color: str, title: str, zero: bool = True) -> alt.Chart:
    """A per-layer line chart, one line per ``color`` value."""
    return alt.Chart(df, title=title).mark_line(point=True).encode(
        x="layer:O", y=alt.Y(f"{y}:Q", scale=alt.Scale(zero=zero)), color=f"{color}:N",
        tooltip=[f"{color}:N", "layer:O", alt.Tooltip(f"{y}:Q", format=".3f")],
    ).properties(width=420, height=220)


def map_chart(labels, matrix: np.ndarray, title: str, size: int, **kw) -> alt.Chart:
    """Token-level heatmap of one map, as wide as its column (a third of the page, the whole
    screen on a phone): its plot keeps ``size`` px of height, so each row has room for its
    label; the colour legend goes below (it took a quarter of a narrow column's width)."""
    chart = attention_heatmap(map_frame(labels, matrix), labels, title, size=size, **kw)
    return fit_width(chart.properties(height=size)).configure_legend(
        orient="bottom", direction="horizontal", gradientLength=140)


def _on_pick() -> None:
    """A click on the cosine heatmap picks that head in the selectors below it."""
    picked = drift_state.cosine_pick()
    if picked is not None:
        drift_state.pick_head(*picked)


def cosine_grid(result: DriftResult, rkey: tuple = ()) -> alt.Chart:
    """The layers x heads mean cosine (a click picks a head) and its per-layer means; returns
    the grid. ``rkey``: :func:`result_key` (charts built once per result)."""
    cos = result.cosine

    def grid():
        df_cos = heads_frame(cos, "cosine")
        scale = alt.Scale(scheme="viridis", domain=[float(min(cos.min(), 0.999)), 1.0])
        return heads_heatmap(df_cos, "cosine", title="Cosine similarity per head", scale=scale,
                             select="pick"), df_cos

    def per_layer():
        df_layer = pd.DataFrame({"layer": np.arange(1, result.n_layers + 1),
                                 "mean cosine": cos.mean(1), "min cosine": cos.min(1)})
        return alt.Chart(df_layer, title="Per-layer mean cosine").mark_bar().encode(
            x=alt.X("layer:O"), y=alt.Y("mean cosine:Q", scale=alt.Scale(zero=False)),
            tooltip=["layer:O", alt.Tooltip("mean cosine:Q", format=".3f"),
                     alt.Tooltip("min cosine:Q", format=".3f")],
        ).properties(width=34 * result.n_heads, height=200), df_layer

    chart = _show(_chart(rkey, "cosine grid", grid), "drift_cosine", drift_state.DOWNLOAD_COSINE,
                  key=drift_state.COSINE_CHART, on_select=_on_pick, selection_mode="pick",
                  width="content")
    _show(_chart(rkey, "cosine per layer", per_layer), "drift_cosine_per_layer",
          drift_state.DOWNLOAD_COSINE_LAYERS)
    return chart


def head_examples(result: DriftResult, before_spec: str, layer: int, head: int,
                  rkey: tuple = ()) -> np.ndarray:
    """One head's cosine over the examples (histogram) and its 10 most changed examples,
    with links to the attention page; returns the examples, most changed first."""
    per_ex = result.cosine_examples[:, layer - 1, head - 1]
    st.caption(f"Head {layer}-{head}: mean cosine {per_ex.mean():.3f}, median "
               f"{np.median(per_ex):.3f}, min {per_ex.min():.3f} over {len(per_ex)} examples.")

    def histogram():
        df = pd.DataFrame({"example": np.arange(len(per_ex)), "cosine": per_ex.astype(float)})
        return alt.Chart(df, title=f"Cosine over examples, head {layer}-{head}").mark_bar(
        ).encode(x=alt.X("cosine:Q", bin=alt.Bin(maxbins=30), title="cosine"),
                 y=alt.Y("count():Q", title="examples")).properties(height=200, width=420), df

    _show(_chart(rkey, f"histogram {layer}-{head}", histogram),
          f"drift_head_{layer}_{head}_distribution", drift_state.DOWNLOAD_DISTRIBUTION)
    order = np.argsort(per_ex, kind="stable")
    low = order[:10]
    st.dataframe(pd.DataFrame({
        "example": low, "cosine": per_ex[low].astype(float),
        "text": [result.texts[i] + (f"  |  {result.pairs[i]}" if result.pairs[i] else "")
                 for i in low],
        "attention page (before)": [attention_link(before_spec, result.texts[i],
                                                   result.pairs[i], layer, head) for i in low],
    }), hide_index=True, key=drift_state.LOW_TABLE, column_config={
        "attention page (before)": st.column_config.LinkColumn(display_text="open head"),
        "cosine": st.column_config.NumberColumn(format=f"%.{DECIMALS}f")})
    return order


def head_maps(enc, maps_before: np.ndarray, maps_after: np.ndarray, choice: int, layer: int,
              head: int, rkey: tuple = ()) -> None:
    """One example's map of one head: before, after and their difference (built once per
    result ``rkey``, example and head)."""
    labels = list(enc.tokens)
    a_b, a_a = maps_before[layer - 1, head - 1], maps_after[layer - 1, head - 1]
    size = int(min(280, max(180, 10 * len(labels))))
    lim = float(np.abs(a_a - a_b).max() or 1e-6)
    charts = [_chart(rkey, f"map {name} {choice} {layer}-{head}", build) for name, build in (
        ("before", lambda: (map_chart(labels, a_b, "before", size), None)),
        ("after", lambda: (map_chart(labels, a_a, "after", size), None)),
        ("difference", lambda: (map_chart(labels, a_a - a_b, "after - before", size,
                                          scheme="redblue", domain=(-lim, lim)), None)))]
    st.caption(f"Example {choice}, head {layer}-{head}: cosine "
               f"{head_cosine(a_b[None, None], a_a[None, None])[0, 0]:.3f}.")
    for col, chart, name in zip(st.columns(3), charts, ("before", "after", "difference")):
        with col:
            _show(chart, f"drift_{name}_{layer}_{head}", drift_state.DOWNLOAD_MAP.format(name),
                  width="stretch")


def representation(result: DriftResult, rkey: tuple = ()):
    """RSA and linear CKA per layer (0 = embeddings): chart and table."""
    df = pd.DataFrame({"layer": np.arange(result.n_layers + 1), "RSA": result.rsa,
                       "CKA": result.cka})

    def build():
        long = df.melt("layer", var_name="measure", value_name="similarity")
        return alt.Chart(long, title="RSA and linear CKA per layer").mark_line(point=True).encode(
            x=alt.X("layer:O", title="layer (0 = embeddings)"),
            y=alt.Y("similarity:Q", scale=alt.Scale(zero=False)), color="measure:N",
            tooltip=["layer:O", "measure:N", alt.Tooltip("similarity:Q", format=".3f")],
        ).properties(width=420, height=260), df

    chart = _show(_chart(rkey, "rsa cka", build), "drift_rsa_cka",
                  drift_state.DOWNLOAD_REPRESENTATION)
    st.dataframe(df, hide_index=True, key=drift_state.REPRESENTATION_TABLE,
                 column_config=decimals(df))
    return chart, df


def noop_drift(result: DriftResult, kind: str, rkey: tuple = ()) -> None:
    """after - before of one no-op statistic per head (diverging), and per-layer means."""

    def grid():
        delta = result.noop_delta[kind]
        df = heads_frame(delta, "change")
        df["before"] = result.noop_before[kind].ravel()
        df["after"] = result.noop_after[kind].ravel()
        lim = float(np.nanmax(np.abs(delta))) or 1e-6
        return heads_heatmap(df, "change", title=f"Change in {KINDS[kind]}", scale=alt.Scale(
            scheme="redblue", domain=[-lim, lim], reverse=True)), df

    def per_layer():
        L = result.n_layers
        df_layers = pd.DataFrame({
            "layer": np.tile(np.arange(1, L + 1), 2), "model": ["before"] * L + ["after"] * L,
            "share": np.concatenate([result.noop_before[kind].mean(1),
                                     result.noop_after[kind].mean(1)]),
        })
        return _lines(df_layers, "share", "model", f"Per-layer mean {KINDS[kind]}"), df_layers

    _show(_chart(rkey, f"noop {kind}", grid), f"drift_noop_{kind}", drift_state.DOWNLOAD_NOOP,
          width="content")
    _show(_chart(rkey, f"noop {kind} layers", per_layer), f"drift_noop_{kind}_layers",
          drift_state.DOWNLOAD_NOOP_LAYERS)


def pattern_moves(result: DriftResult, thresholds: PatternThresholds, rkey: tuple = ()):
    """Share of maps per type before and after, and how maps moved between types."""
    tb, ta = result.pattern_types(thresholds)

    def build():
        shares = {"before": pattern_shares(tb), "after": pattern_shares(ta)}
        df = pd.DataFrame([{"type": t, "model": m, "share": shares[m][t]}
                           for m in MODELS for t in PATTERN_TYPES])
        return alt.Chart(df, title="Share of maps per type").mark_bar().encode(
            x=alt.X("type:N", sort=list(PATTERN_TYPES), title=None,
                    axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("model:N", sort=MODELS),
            y=alt.Y("share:Q", axis=alt.Axis(format="%")),
            color=alt.Color("model:N", sort=MODELS),
            tooltip=["type:N", "model:N", alt.Tooltip("share:Q", format=".1%")],
        ).properties(width=460, height=240), df

    chart = _show(_chart(rkey, f"pattern shares {thresholds!r}", build),
                  "drift_pattern_shares", drift_state.DOWNLOAD_SHARES)
    moves = pd.DataFrame(pattern_transitions(tb, ta), columns=list(PATTERN_TYPES))
    moves.insert(0, "before / after", list(PATTERN_TYPES))
    st.caption("How maps moved between types (rows: before, columns: after; counts of "
               "example-head maps).")
    st.dataframe(moves, hide_index=True, key=drift_state.MOVES_TABLE)
    return chart


GALLERY_WIDTH = 296  # px: a third of a 1400 px page's main column (303 px) less a margin


def gallery_map_size(tokens) -> int:
    """The gallery map's side, so the map and its row labels fit ``GALLERY_WIDTH``: the y axis's
    labels are "i: token" (at most 120 px: charts' labelLimit; about 6.5 px a character) beside
    the map, plus about 24 px of axis ticks, title and padding; between 150 and 200 px."""
    longest = max((len(f"{i + 1}: {t}") for i, t in enumerate(tokens)), default=0)
    label_px = min(120.0, 6.5 * longest)
    return int(max(150, min(200, GALLERY_WIDTH - 24 - label_px)))


def pattern_gallery(result: DriftResult, before: LoadedModel, after: LoadedModel, which: str,
                    pattern: str, thresholds: PatternThresholds, rkey: tuple = ()) -> None:
    """Up to six maps of one type, with their features."""
    picks = gallery(result, which, pattern, thresholds, k=6)
    if not picks:
        st.info(f"No {which} map is of type {pattern} with these thresholds.",
                icon=":material/info:")
        return
    feats = result.features_before if which == "before" else result.features_after
    cols = st.columns(3)
    for k, (ex, li, hi) in enumerate(picks):
        v, d, b = feats[ex, li, hi]

        def build(ex=ex, li=li, hi=hi):
            enc, maps_b, maps_a = example_maps(before, after, result, ex)
            mat = (maps_b if which == "before" else maps_a)[li, hi]
            # a square map whose axes, title and legend are added around it ("pad"), not
            # squeezed into a guessed box: labels such as "14: [SEP]" are never cut, and the
            # map is as large as leaves room for its longest label in a third of a 1400 px page
            chart = attention_heatmap(map_frame(enc.tokens, mat), enc.tokens,
                                      f"ex {ex}, head {li + 1}-{hi + 1}",
                                      size=gallery_map_size(enc.tokens)
                                      ).properties(autosize=alt.AutoSizeParams(type="pad"))
            # the legend below the map (a narrow column never cuts its title)
            return chart.configure_legend(orient="bottom", direction="horizontal",
                                          titleOrient="left", gradientLength=120), None

        with cols[k % 3]:
            draw(_chart(rkey, f"gallery {which} {ex} {li}-{hi}", build), width="content")
            st.caption(f"vertical {v:.2f} · diagonal {d:.2f} · block {b:.2f}")


def groups(result: DriftResult, rkey: tuple = ()) -> None:
    """Mean cosine per gold label and per correct/wrong prediction: table and per layer."""
    if result.label_note:
        st.info(result.label_note, icon=":material/info:")
    found = result.groups()
    for name, title in (("label", "gold label"), ("prediction", "after-model's prediction")):
        if name not in found:
            continue
        grp = found[name]
        if name == "label":
            labs = np.array([str(x) for x in result.labels])
            counts = {g: int((labs == g).sum()) for g in grp}
        else:
            correct = result.correct
            counts = {"correct": int(correct.sum()), "wrong": int((~correct).sum())}
        st.markdown(f"**By {title}**")
        st.dataframe(pd.DataFrame({
            "group": list(grp), "examples": [counts[g] for g in grp],
            "mean cosine": [float(v.mean()) for v in grp.values()],
            "last layer mean cosine": [float(v[-1].mean()) for v in grp.values()],
        }), hide_index=True, key=drift_state.GROUP_TABLE.format(name), column_config={
            c: st.column_config.NumberColumn(format=f"%.{DECIMALS}f")
            for c in ("mean cosine", "last layer mean cosine")})

        def build(grp=grp, title=title):
            df = pd.DataFrame([{"group": g, "layer": li + 1, "mean cosine": float(v[li].mean())}
                               for g, v in grp.items() for li in range(result.n_layers)])
            return _lines(df, "mean cosine", "group", f"Per-layer mean cosine by {title}",
                          zero=False), df

        _show(_chart(rkey, f"groups {name}", build), f"drift_by_{name}",
              drift_state.DOWNLOAD_GROUP.format(name))


def layer_table(result) -> None:
    """Per layer, the mean head cosine the reading states and its 95% interval over
    examples."""
    frame = pd.DataFrame(layer_rows(result.cosine_examples))
    st.caption("Per layer: mean head cosine over examples (1 = unchanged); the 95% interval is "
               "over examples (normal approximation).")
    st.dataframe(frame, hide_index=True, key=drift_state.LAYER_TABLE, column_config={
        "mean head cosine": st.column_config.NumberColumn(format="%.3f")})
