"""The Syntax page's blocks: the cached heads and probe runs, the Clark-style table and heatmap,
the widgets and the before/after comparison (docs/METHODS.md section 10); the treebank picker
is in ``ui.syntax.treebank`` (names re-exported here), the sentence views (dependency view,
probe tree) in ``ui.syntax.views``. Layers and heads are 1-indexed, as everywhere in the
UI; the library's are 0-indexed."""

from __future__ import annotations


import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis.core.encoding import word_level
from analysis.core.models import checkpoint_stamp
from analysis.syntax.heads import compare_rows, relation_rows, sentence_attention
from analysis.syntax.study import PROBES, STUDY, Inputs, ProbeInputs
from ui.common.chart_cache import BuiltChart, cached_chart, draw
from ui.common.errors import plain
from ui.common.exports.export import chart_downloads
from ui.common.heads import heads_frame, heads_heatmap
from ui.common.jobs import run_job
from ui.common.jobs.kept import job_cached
from ui.common.frame.models import second_model
from ui.server.settings import settings
from ui.syntax import state as syntax_state
from ui.syntax.state import reset_for
from ui.common.frame.url_select import url_choice
from ui.syntax.treebank import (HF, PASTE, SAMPLE, UPLOAD, fingerprint, read_treebank,  # noqa: F401
                                sources, treebank_picker)

Q = "query-params"  # widgets bound to the URL: a copied link opens the same view

DIRECTIONS = {"dep_to_head": "dependent attends to its head",
              "head_to_dep": "head attends to its dependent"}
PICKS = {"dep_to_head": "an arrow from the dependent to the word it attends to most",
         "head_to_dep": "an arrow to the dependent from the word that attends to it most"}
METRICS = {"uuas": "UUAS", "dspr": "distance Spearman", "root_acc": "root accuracy"}
MIN_COUNT = {SAMPLE: 10, PASTE: 1}  # any other source: 100
EVAL_SHARE = 0.25  # probes: the last quarter of the treebank is held out


# ---------------------------------------------------------------------------------------------
# Cached computations (the heavy ones go through the server-wide job queue)


@job_cached(max_entries=8, copy=True)
def _heads(spec: str, stamp: str, fp: str, _loaded, _dataset):
    inputs = Inputs(_loaded.spec, _dataset, max_length=_loaded.max_length)
    return run_job(f"Syntactic heads: {_loaded.name} on {len(_dataset)} sentences",
                   STUDY.plan(inputs, _loaded), key=syntax_state.JOB_HEADS.format(fp),
                   kind="Syntax heads", size=len(_dataset), unit="sentences")


def heads_result(loaded, dataset):
    """:func:`analysis.syntax.run.syntax_heads` on the treebank, cached per model (and its
    checkpoint's stamp) and treebank fingerprint."""
    return _heads(loaded.spec, checkpoint_stamp(loaded.spec), fingerprint(dataset), loaded,
                  dataset)


@job_cached(max_entries=8, copy=True)
def _probes(spec: str, stamp: str, fp: str, rank: int, _loaded, _dataset):
    inputs = ProbeInputs(_loaded.spec, _dataset, None, rank=rank, seed=0,
                         eval_share=EVAL_SHARE)
    return run_job(f"Structural probes: {_loaded.name}, rank {rank}",
                   PROBES.plan(inputs, _loaded),
                   key=syntax_state.JOB_PROBES.format(fp), kind="Syntax structural probes",
                   size=len(_dataset), unit="sentences")


def probe_result(loaded, dataset, rank: int):
    """:func:`analysis.syntax.probes.probe_layers` trained on the first three quarters of the
    treebank and evaluated on the rest, cached per model, treebank and rank."""
    return _probes(loaded.spec, checkpoint_stamp(loaded.spec), fingerprint(dataset), int(rank),
                   loaded, dataset)


@st.cache_data(max_entries=64, show_spinner=False)
def _word_maps(spec: str, stamp: str, words: tuple, _loaded):
    enc, token_maps, _ = sentence_attention(_loaded, list(words))
    return list(enc.words), word_level(token_maps, enc.word_ids)


def word_maps(loaded, words) -> tuple[list[str], np.ndarray]:
    """([CLS] + words + [SEP], word-level maps [L, H, n+2, n+2]) of one sentence."""
    return _word_maps(loaded.spec, checkpoint_stamp(loaded.spec), tuple(words), loaded)


# ---------------------------------------------------------------------------------------------
# Tables and charts


def _pct(x) -> float:
    return round(100.0 * float(x), 1)


def best_for(matrix: np.ndarray) -> tuple[int, int]:
    """(layer, head), 1-indexed, of the highest accuracy in an [L, H] matrix."""
    l0, h0 = np.unravel_index(int(np.argmax(matrix)), matrix.shape)
    return int(l0) + 1, int(h0) + 1


def heads_table(result, min_count: int) -> pd.DataFrame:
    """The Clark et al. (2019) table of the relations with at least ``min_count`` dependents
    (``analysis.syntax.heads.relation_rows``), accuracies in percent."""
    rows = []
    for r in relation_rows(result, min_count):
        rows.append({
            "relation": r["relation"], "n": r["n"],
            "best head": f"{r['layer']}-{r['head']}",
            "direction": DIRECTIONS.get(r["direction"], r["direction"]),
            "accuracy %": _pct(r["accuracy"]),
            "baseline offset": f"{int(r['baseline offset']):+d}",
            "baseline %": _pct(r["baseline accuracy"]),
            "gain (points)": _pct(r["above baseline"]),
            "gain 95% (points)": _ci_points(r["above baseline 95%"]),
        })
    return pd.DataFrame(rows, columns=["relation", "n", "best head", "direction", "accuracy %",
                                       "baseline offset", "baseline %", "gain (points)",
                                       "gain 95% (points)"])


def _ci_points(ci) -> str:
    """``20.1 to 26.7`` (points), ``within noise`` added when it covers 0; "" without one."""
    if ci is None:
        return ""
    lo, hi = 100 * ci[0], 100 * ci[1]
    return f"{lo:.1f} to {hi:.1f}" + (" (within noise)" if lo <= 0 <= hi else "")


def show_table(df: pd.DataFrame, key: str) -> None:
    pct = st.column_config.ProgressColumn
    st.dataframe(df, hide_index=True, key=key, column_config={
        "accuracy %": pct("accuracy %", format="%.1f", min_value=0, max_value=100),
        "baseline %": pct("baseline %", format="%.1f", min_value=0, max_value=100),
        "best head": st.column_config.TextColumn(help="layer-head, numbered from 1"),
        "baseline offset": st.column_config.TextColumn(
            help="the best fixed offset k (the word k places away), 1 <= |k| <= 5"),
    })


def heads_grid(result, rel: str, direction: str, key: str, result_key: tuple = ()):
    """The layers x heads accuracy of ``rel`` in ``direction``; a click picks the head. Built
    once per (``result_key``: what the result is cached on, rel, direction) when a key is
    given. Returns the Altair chart (exports, report)."""

    def build():
        r = result.relations[rel]
        df = heads_frame(np.asarray(getattr(r, direction), dtype=float), "accuracy")
        return heads_heatmap(df, "accuracy", title=f"{rel}: {DIRECTIONS[direction]}",
                             domain=[0, 1], scheme="greens", select="pick"), df

    built = cached_chart(("syntax grid", *result_key, rel, direction), build) if result_key \
        else BuiltChart(*build(), spec=None, title="")
    draw(built, key=key, on_select=lambda: _on_pick(key), selection_mode="pick",
         width="content")
    chart_downloads(built.chart, f"syntax_{rel}_{direction}",
                    key=syntax_state.DOWNLOAD_OF.format(key),
                    df=built.df)
    return built.chart


def _on_pick(chart_key: str) -> None:
    picked = syntax_state.chart_pick(chart_key)
    if picked is not None:
        syntax_state.pick_head(*picked)


def pick_head(result, rel: str, direction: str, n_layers: int, n_heads: int) -> tuple[int, int]:
    """Layer and head selectors (1-indexed), moved to the best head of the relation and
    direction whenever either changes."""
    matrix = np.asarray(getattr(result.relations[rel], direction))
    layer, head = best_for(matrix)
    reset_for(syntax_state.PICK_FOR, (rel, direction),
              {syntax_state.LAYER: layer, syntax_state.HEAD: head})
    p1, p2 = st.columns(2)
    # the best head by default: bound by url_choice (a link to layer or head 1 keeps it)
    layer = int(url_choice(p1, "Layer", list(range(1, n_layers + 1)), key=syntax_state.LAYER,
                           default=layer))
    head = int(url_choice(p2, "Head", list(range(1, n_heads + 1)), key=syntax_state.HEAD,
                          default=head))
    return layer, head


# ---------------------------------------------------------------------------------------------
# Probes and the comparison


def probe_frame(results: dict) -> pd.DataFrame:
    """Long table (model, layer, metric, value) of probe results keyed by model name."""
    rows = []
    for model, res in results.items():
        for entry in res.layers:
            for key, name in METRICS.items():
                rows.append({"model": model, "layer": int(entry["layer"]), "metric": name,
                             "value": float(entry[key])})
    return pd.DataFrame(rows)


def probe_chart(res) -> tuple[alt.Chart, pd.DataFrame]:
    """UUAS, distance Spearman and root accuracy per layer (layer 0: the embeddings), with
    the linear-chain UUAS and the embedding layer as dashed baselines."""
    df = probe_frame({"model": res}).drop(columns="model")
    base = [{"metric": "UUAS", "baseline": "linear chain",
             "value": float(res.baselines["linear_chain_uuas"])}]
    emb = df[df["layer"] == 0]
    base += [{"metric": m, "baseline": "embeddings (layer 0)", "value": float(v)}
             for m, v in zip(emb["metric"], emb["value"])]
    colour = alt.Color("metric:N", title="metric", sort=list(METRICS.values()))
    lines = alt.Chart(df).mark_line(point=True, strokeWidth=2.5).encode(
        x=alt.X("layer:O", title="layer (0 = embeddings)"),
        y=alt.Y("value:Q", title="score", scale=alt.Scale(domain=[0, 1])), color=colour,
        tooltip=["metric", "layer", alt.Tooltip("value:Q", format=".3f")])
    rules = alt.Chart(pd.DataFrame(base)).mark_rule(strokeDash=[6, 4]).encode(
        y="value:Q", color=colour, tooltip=["metric", "baseline",
                                            alt.Tooltip("value:Q", format=".3f")])
    chart = (lines + rules).properties(
        height=300, width=460, title="Structural probes per layer (dashed: baselines)")
    return chart, df


def percent_columns(df: pd.DataFrame) -> dict:
    """One decimal for every percent and points column (the page's unit for accuracies)."""
    return {c: st.column_config.NumberColumn(format="%.1f") for c in df.columns
            if c.endswith("%") or c.endswith("(points)")}


def treebank_name(source: str) -> str:
    """The treebank by name for a finding's provenance (never a path or a file's content)."""
    if source == SAMPLE:
        return "the bundled sample treebank"
    if source == HF:
        return f"the dataset {syntax_state.hf_name()[:120]}"
    return "pasted CoNLL-U text" if source == PASTE else "an uploaded treebank"


def compare_table(before, after, min_count: int) -> pd.DataFrame:
    """Per relation shown for both models (``analysis.syntax.heads.compare_rows``): each
    model's best head and its accuracy, and the difference (after - before) in points."""
    rows = [{"relation": r["relation"], "n": r["n"],
             "before %": _pct(r["before"]), "before head": r["before head"],
             "after %": _pct(r["after"]), "after head": r["after head"],
             "difference (points)": _pct(r["difference"]),
             "baseline %": _pct(r["baseline"])}
            for r in compare_rows(before, after, min_count)]
    return pd.DataFrame(rows)


def difference_chart(df: pd.DataFrame) -> alt.Chart:
    """Bars of the difference per relation (green: the fine-tuned model's best head is more
    accurate; red: less)."""
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("difference (points):Q", title="after - before (points)"),
        y=alt.Y("relation:N", sort=None, title=None),
        color=alt.condition("datum['difference (points)'] >= 0", alt.value("#2ca02c"),
                            alt.value("#d62728")),
        tooltip=list(df.columns),
    ).properties(height=max(120, 18 * len(df)), width=420,
                 title="Best head accuracy, after - before fine-tuning")


def compare_probe_chart(results: dict) -> tuple[alt.Chart, pd.DataFrame]:
    df = probe_frame(results)
    chart = alt.Chart(df).mark_line(point=True, strokeWidth=2.5).encode(
        x=alt.X("layer:O", title="layer (0 = embeddings)"),
        y=alt.Y("value:Q", title="score", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("model:N", title="model"),
        tooltip=["model", "metric", "layer", alt.Tooltip("value:Q", format=".3f")],
    ).properties(width=260, height=220).facet(
        facet=alt.Facet("metric:N", title=None, sort=list(METRICS.values())), columns=3)
    return chart.properties(title="Probe metrics per layer, both models"), df


def reading_lines(lines) -> str:
    """The plain reading as a Markdown list, every line shown literally."""
    return "\n".join(f"- {plain(line)}" for line in lines)


# ---------------------------------------------------------------------------------------------
# Widgets (bound to the URL: a copied link opens the same view)


MIN_COUNT_WIDTH = 260  # px


def min_count_input(container, source: str) -> int:
    """The minimum number of dependents a relation needs to be shown: 10 on the sample, 1 on
    pasted text, 100 on a corpus; reset to that default when the source changes."""
    reset_for(syntax_state.MIN_COUNT_FOR, source,
              {syntax_state.MIN_COUNT: MIN_COUNT.get(source, 100)})
    return int(container.number_input(
        "Minimum dependents per relation", min_value=1, max_value=1_000_000, step=5,
        width=MIN_COUNT_WIDTH,  # a number box the width of its label, not of the page
        key=syntax_state.MIN_COUNT, bind=Q,
        help="Relations with fewer dependents are left out of the tables (they are all computed "
             "and in the JSON download)."))


def second_model_spec(sidebar_spec: str) -> str:
    """The second checkpoint (``ui.common.frame.models.second_model``): in demo mode one of the
    host's listed models by name (another than the sidebar's first); otherwise a model name,
    hub id or folder, "example" (the ABSA example checkpoint) by default once it exists. ''
    while none is given."""
    conf = settings()
    others = [n for n in conf.models if conf.models[n] != sidebar_spec] or list(conf.models)
    return second_model(st, syntax_state.SECOND_MODEL, demo_default=others[0] if others else None)
