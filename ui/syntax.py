"""The Syntax page's blocks: the treebank picker, the cached heads and probe runs, the
Clark-style table and heatmap, the dependency view (gold arcs above the words, a head's
attention or a probe's tree below; an SVG built here, every word escaped) and the before/after
comparison (docs/METHODS.md section 10). Layers and heads are 1-indexed, as everywhere in the
UI; the library's are 0-indexed."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis.encoding import word_level
from analysis.errors import DataError
from analysis.attention.views import head_view_payload
from analysis.models import checkpoint_stamp
from analysis.syntax import treebank as T
from analysis.syntax.heads import (compare_rows, example_sentences, relation_rows,
                                   sentence_attention, syntax_heads)
from analysis.syntax.probes import example_tree, probe_layers
from ui.attention_view import head_view
from ui.errors import plain
from ui.export import chart_downloads
from ui.heads import heads_frame, heads_heatmap
from ui.html import esc
from ui.jobs import run_job
from ui.settings import settings

SAMPLE, PASTE, UPLOAD, HF = "Sample treebank", "Paste", "Upload", "Hugging Face dataset"
DIRECTIONS = {"dep_to_head": "dependent attends to its head",
              "head_to_dep": "head attends to its dependent"}
PICKS = {"dep_to_head": "an arrow from the dependent to the word it attends to most",
         "head_to_dep": "an arrow to the dependent from the word that attends to it most"}
METRICS = {"uuas": "UUAS", "dspr": "distance Spearman", "root_acc": "root accuracy"}
MIN_COUNT = {SAMPLE: 10, PASTE: 1}  # any other source: 100
PASTE_EXAMPLE = "1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n2\tsoup\tsoup\tNOUN\t_\t_\t0\troot\t_\t_\n"
EVAL_SHARE = 0.25  # probes: the last quarter of the treebank is held out


# ---------------------------------------------------------------------------------------------
# The treebank


def sources() -> list[str]:
    """Sample, paste and upload; a Hugging Face id too outside demo mode (a demo names no
    dataset of its own for treebanks)."""
    extra = [HF] if not settings().demo and hasattr(T, "read_hf_treebank") else []
    return [SAMPLE, PASTE, UPLOAD, *extra]


@st.cache_data(max_entries=4, show_spinner="Loading the treebank...")
def _load_hf(name: str, split: str, cap: int):
    return T.read_hf_treebank(name, split, max_sentences=cap)


def _checked_bytes(data: bytes, label: str) -> bytes:
    limit = settings().max_upload_bytes
    if limit is not None and len(data) > limit:
        raise DataError(f"{label} has {len(data):,} bytes; this server reads at most "
                        f"{limit:,}.")
    return data


def read_treebank(source: str, cap: int, *, text: str = "", upload=None, hf=("", "")):
    """The picked treebank (raises DataError / InputError with one line)."""
    if source == SAMPLE:
        return T.sample_treebank(max_sentences=cap)
    if source == PASTE:
        data = _checked_bytes(text.encode("utf-8"), "The pasted text")
        return T.read_conllu(data, name="the pasted text", max_sentences=cap)
    if source == UPLOAD:
        data = _checked_bytes(upload.getvalue(), "The upload")
        return T.read_conllu(data, name=upload.name, max_sentences=cap)
    return _load_hf(hf[0], hf[1], cap)


def treebank_picker(prefix: str, default_cap: int = 500):
    """(source, dataset or None): the source and cap widgets and, for a paste / upload / hub
    id, its box; None while there is nothing to read yet. Errors go to the caller."""
    c1, c2 = st.columns([3, 1.2], vertical_alignment="bottom")
    source = c1.segmented_control("Treebank", sources(), default=SAMPLE,
                                  key=f"{prefix}_source") or SAMPLE
    limit = settings().max_examples or 100_000
    st.session_state.setdefault(f"{prefix}_max", min(default_cap, limit))
    cap = int(c2.number_input("Sentences (at most)", min_value=1, max_value=limit, step=100,
                              key=f"{prefix}_max",
                              help="Only the first N sentences are read; more takes longer."))
    cap = settings().cap("max_examples", cap)
    if source == SAMPLE:
        st.caption("The bundled sample: 104 English sentences written and annotated by hand "
                   "for this project following the Universal Dependencies v2 guidelines "
                   "(data/treebank).")
        return source, read_treebank(source, cap)
    if source == PASTE:
        text = st.text_area("CoNLL-U text (10 tab-separated columns per word, a blank line "
                            "between sentences)", key=f"{prefix}_paste", height=160,
                            placeholder=PASTE_EXAMPLE)
        if not text.strip():
            st.info("Paste CoNLL-U sentences to analyse.", icon=":material/info:")
            return source, None
        return source, read_treebank(source, cap, text=text)
    if source == UPLOAD:
        up = st.file_uploader("A CoNLL-U file (.conllu), e.g. a Universal Dependencies "
                              "treebank; read in memory, not kept", type=["conllu", "txt"],
                              key=f"{prefix}_upload")
        if up is None:
            st.info("Upload a .conllu file to analyse.", icon=":material/upload_file:")
            return source, None
        return source, read_treebank(source, cap, upload=up)
    h1, h2 = st.columns(2)
    name = h1.text_input("Dataset id", key=f"{prefix}_hf_name",
                         placeholder="universal_dependencies")
    split = h2.text_input("Split", value="validation", key=f"{prefix}_hf_split")
    if not name.strip():
        st.info("Give a Hugging Face dataset id with UD-style columns (tokens, head, deprel) "
                "that is in the local cache or reachable online.", icon=":material/info:")
        return source, None
    return source, read_treebank(source, cap, hf=(name.strip(), split.strip()))


def fingerprint(dataset) -> str:
    return T.treebank_fingerprint(dataset)


# ---------------------------------------------------------------------------------------------
# Cached computations (the heavy ones go through the server-wide job queue)


def _sentences(done: int, total: int) -> tuple[float, str]:
    return done / max(total, 1), f"{done} / {total} sentences"


@st.cache_data(max_entries=8, show_spinner=False)
def _heads(spec: str, stamp: str, fp: str, _loaded, _dataset):
    def job(progress):
        return syntax_heads(_loaded, _dataset, progress=lambda d, t: progress(*_sentences(d, t)))

    return run_job(f"Syntactic heads: {_loaded.name} on {len(_dataset)} sentences", job,
                   key=f"syntax-heads-{fp}")


def heads_result(loaded, dataset):
    """:func:`analysis.syntax.heads.syntax_heads` on the treebank, cached per model (and its
    checkpoint's stamp) and treebank fingerprint."""
    return _heads(loaded.spec, checkpoint_stamp(loaded.spec), fingerprint(dataset), loaded,
                  dataset)


@st.cache_data(max_entries=8, show_spinner=False)
def _probes(spec: str, stamp: str, fp: str, rank: int, _loaded, _dataset):
    def job(progress):
        return probe_layers(_loaded, _dataset, None, rank=rank, seed=0, eval_share=EVAL_SHARE,
                            progress=lambda d, t: progress(d / max(t, 1), f"Probes: {d} / {t}"))

    return run_job(f"Structural probes: {_loaded.name}, rank {rank}", job,
                   key=f"syntax-probes-{fp}")


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
        })
    return pd.DataFrame(rows, columns=["relation", "n", "best head", "direction", "accuracy %",
                                       "baseline offset", "baseline %", "gain (points)"])


def show_table(df: pd.DataFrame, key: str) -> None:
    pct = st.column_config.ProgressColumn
    st.dataframe(df, hide_index=True, key=key, column_config={
        "accuracy %": pct("accuracy %", format="%.1f", min_value=0, max_value=100),
        "baseline %": pct("baseline %", format="%.1f", min_value=0, max_value=100),
        "best head": st.column_config.TextColumn(help="layer-head, numbered from 1"),
        "baseline offset": st.column_config.TextColumn(
            help="the best fixed offset k (the word k places away), 1 <= |k| <= 5"),
    })


def heads_grid(result, rel: str, direction: str, key: str) -> None:
    """The layers x heads accuracy of ``rel`` in ``direction``; a click picks the head."""
    r = result.relations[rel]
    matrix = np.asarray(getattr(r, direction), dtype=float)
    df = heads_frame(matrix, "accuracy")
    chart = heads_heatmap(df, "accuracy", title=f"{rel}: {DIRECTIONS[direction]}",
                          domain=[0, 1], scheme="greens", select="pick")
    st.altair_chart(chart, key=key, on_select=lambda: _on_pick(key), selection_mode="pick",
                    width="content")
    chart_downloads(chart, f"syntax_{rel}_{direction}", key=f"dl-{key}", df=df)


def _on_pick(chart_key: str) -> None:
    event = st.session_state.get(chart_key)
    points = (event or {}).get("selection", {}).get("pick", []) if event else []
    if points:
        st.session_state["syntax_layer"] = int(points[0]["layer"])
        st.session_state["syntax_head"] = int(points[0]["head"])


def pick_head(result, rel: str, direction: str, n_layers: int, n_heads: int) -> tuple[int, int]:
    """Layer and head selectors (1-indexed), moved to the best head of the relation and
    direction whenever either changes."""
    matrix = np.asarray(getattr(result.relations[rel], direction))
    if st.session_state.get("_syntax_pick_for") != (rel, direction):
        st.session_state["_syntax_pick_for"] = (rel, direction)
        st.session_state["syntax_layer"], st.session_state["syntax_head"] = best_for(matrix)
    p1, p2 = st.columns(2)
    layer = int(p1.selectbox("Layer", list(range(1, n_layers + 1)), key="syntax_layer"))
    head = int(p2.selectbox("Head", list(range(1, n_heads + 1)), key="syntax_head"))
    return layer, head


def examples(result, rel: str, k: int = 50) -> list[dict]:
    """The first ``k`` analysed sentences holding ``rel`` (``analysis.syntax.heads.
    example_sentences``), with their text for a picker."""
    out = example_sentences(result, rel, k)
    for ex in out:
        ex["label"] = " ".join(ex["words"])[:100]
    return out


def attention_arcs(W: np.ndarray, heads, deprels, rel: str, direction: str) -> list[tuple]:
    """The chosen head's prediction for every ``rel`` dependent of a sentence, as arcs
    (from, to, weight, correct): ``W`` is the head's word map [n+2, n+2] over [CLS] + words +
    [SEP]; [CLS]/[SEP] and the diagonal are left out (docs/METHODS.md section 10)."""
    w = np.array(W[1:-1, 1:-1], dtype=float)
    np.fill_diagonal(w, 0.0)
    arcs = []
    for i, (g, d) in enumerate(zip(heads, deprels)):
        if g == 0 or (rel != "all" and d != rel):
            continue
        if direction == "dep_to_head":
            j = int(np.argmax(w[i]))
            arcs.append((i + 1, j + 1, float(w[i, j]), j + 1 == g))
        else:
            j = int(np.argmax(w[:, i]))
            arcs.append((j + 1, i + 1, float(w[j, i]), j + 1 == g))
    return arcs


def gold_arcs(heads, deprels, rel: str) -> list[tuple]:
    """(head, dependent, relation) of every ``rel`` arc of a sentence (1-based; 0 = root)."""
    return [(int(g), i + 1, d) for i, (g, d) in enumerate(zip(heads, deprels))
            if rel == "all" or d == rel]


# ---------------------------------------------------------------------------------------------
# The dependency view: an SVG built here; words and labels are escaped text, never markup


CHAR_W, PAD, FONT = 8.0, 14.0, 14


def _positions(words) -> tuple[list[float], float]:
    widths = [max(len(str(w)) * CHAR_W + PAD, 34.0) for w in words]
    xs, x = [], 10.0
    for wd in widths:
        xs.append(x + wd / 2)
        x += wd
    return xs, x + 10.0


def _arc(x1: float, x2: float, y: float, h: float) -> str:
    return f"M{x1:.1f},{y:.1f} C{x1:.1f},{y + h:.1f} {x2:.1f},{y + h:.1f} {x2:.1f},{y:.1f}"


def _tip(x: float, y: float, up: bool) -> str:
    """An arrowhead at (x, y), pointing into the word (down from above, up from below)."""
    s = -5 if up else 5
    return f"M{x - 4:.1f},{y - s * 1.4:.1f} L{x:.1f},{y:.1f} L{x + 4:.1f},{y - s * 1.4:.1f} Z"


def _one_line(text) -> str:
    """``text`` on one line (the view is one line of HTML inside Markdown: a line break could
    end that HTML block)."""
    return " ".join(str(text).split()) or "_"


def dependency_svg(words, above, below=(), *, above_name: str = "gold",
                   below_name: str = "head") -> str:
    """One sentence as an SVG: ``above`` = arcs (head, dependent, label) drawn above the words
    (head 0 = the root, a vertical arrow); ``below`` = arcs (from, to, weight, correct) drawn
    below (green when correct, red when not; thicker for a larger weight; ``weight`` None
    for an undirected, unweighted edge, drawn without an arrowhead). Positions are 1-based;
    words and labels are HTML-escaped and put on one line."""
    words = [_one_line(w) for w in words]
    xs, width = _positions(words)
    span = lambda a, b: abs(a - b)  # noqa: E731
    h_above = max([18 + 16 * min(span(h, d), 12) for h, d, _ in above if h] + [30])
    h_below = max([16 + 14 * min(span(a, b), 12) for a, b, *_ in below] + [0])
    y_word = h_above + 24
    height = y_word + 14 + (h_below + 22 if below else 8)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="dep-view" width="{width:.0f}" '
           f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
           f'font-family="sans-serif" font-size="{FONT}">']
    for k, (x, w) in enumerate(zip(xs, words), 1):
        out.append(f'<text class="dep-word" data-index="{k}" x="{x:.1f}" y="{y_word:.1f}" '
                   f'text-anchor="middle">{esc(w)}</text>')
    top = y_word - FONT - 2
    for h, d, label in above:
        xd = xs[d - 1]
        name = esc(_one_line(f"{above_name} {label}: {words[h - 1] if h else 'ROOT'} -> "
                             f"{words[d - 1]}"))
        if h == 0:
            path, lx, ly = f"M{xd:.1f},8 L{xd:.1f},{top:.1f}", xd + 4, 16
        else:
            hh = -(18 + 16 * min(span(h, d), 12))
            path, lx, ly = _arc(xs[h - 1], xd, top, hh), (xs[h - 1] + xd) / 2, top + 0.75 * hh - 3
        out.append(f'<g class="dep-arc gold" data-head="{h}" data-dep="{d}"><title>{name}</title>'
                   f'<path d="{path}" fill="none" stroke="#1f4e9c" stroke-width="1.6"/>'
                   f'<path d="{_tip(xd, top, up=False)}" fill="#1f4e9c"/>'
                   f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle" font-size="11" '
                   f'fill="#1f4e9c">{esc(_one_line(label)) if label else ""}</text></g>')
    bottom = y_word + 6
    for a, b, weight, ok in below:
        colour = "#2ca02c" if ok else "#d62728"
        wt = 1.0 if weight is None else float(weight)
        hh = 16 + 14 * min(span(a, b), 12)
        text = "" if weight is None else f" ({wt:.2f})"
        name = esc(_one_line(f"{below_name}: {words[a - 1]} -> {words[b - 1]}{text}, "
                             f"{'correct' if ok else 'wrong'}"))
        label = (f'<text x="{0.4 * xs[a - 1] + 0.6 * xs[b - 1]:.1f}" '
                 f'y="{bottom + 0.75 * hh + 12:.1f}"'
                 f' text-anchor="middle" font-size="10" fill="{colour}">{wt:.2f}</text>'
                 if weight is not None else "")
        tip = ("" if weight is None else
               f'<path d="{_tip(xs[b - 1], bottom, up=True)}" fill="{colour}"/>')
        strength = min(max(wt, 0.0), 1.0)
        path = _arc(xs[a - 1], xs[b - 1], bottom, hh)
        out.append(f'<g class="dep-arc below {"ok" if ok else "wrong"}" data-from="{a}" '
                   f'data-to="{b}"><title>{name}</title><path d="{path}" fill="none" '
                   f'stroke="{colour}" stroke-width="{1 + 2.5 * strength:.2f}" '
                   f'stroke-opacity="{0.45 + 0.55 * strength:.2f}"/>{tip}{label}</g>')
    out.append("</svg>")
    return "".join(out)


def show_dependency_view(svg: str, caption: str) -> None:
    """The view (one line of escaped SVG: st.html would strip the SVG) and its caption."""
    st.markdown(f'<div class="dep-scroll" style="overflow-x:auto">{svg}</div>',
                unsafe_allow_html=True)
    st.caption(caption)


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
# Widgets


def min_count_input(container, source: str) -> int:
    """The minimum number of dependents a relation needs to be shown: 10 on the sample, 1 on
    pasted text, 100 on a corpus; reset to that default when the source changes."""
    if st.session_state.get("_syntax_min_for") != source:
        st.session_state["_syntax_min_for"] = source
        st.session_state["syntax_min"] = MIN_COUNT.get(source, 100)
    return int(container.number_input(
        "Minimum dependents per relation", min_value=1, max_value=1_000_000, step=5,
        key="syntax_min", help="Relations with fewer dependents are left out of the tables "
                               "(they are all computed and in the JSON download)."))


def _example_ready() -> bool:
    try:
        from analysis.aspects.example import example_ready
    except ImportError:
        return False
    return bool(example_ready())


def second_model_spec(sidebar_spec: str) -> str:
    """The second checkpoint, picked like the Drift page's "after" model: in demo mode one of
    the host's listed models by name; otherwise a hub id or a folder, "example" (the ABSA
    example checkpoint) by default once it exists. '' while none is given."""
    conf = settings()
    if conf.demo:
        names = list(conf.models)
        others = [n for n in names if conf.models[n] != sidebar_spec] or names
        st.session_state.setdefault("syntax_after_name", others[0])
        name = st.selectbox("Second model (fine-tuned)", names, key="syntax_after_name")
        return conf.models[name]
    st.session_state.setdefault("syntax_after", "example" if _example_ready() else "")
    return st.text_input(
        "Second model: the fine-tuned checkpoint (hub id or folder)", key="syntax_after",
        placeholder="example, or /path/to/fine-tuned-checkpoint",
        help="'example' is the ABSA example checkpoint (the default model fine-tuned on the "
             "bundled restaurant sample). Any encoder works: both models read the same words."
    ).strip()


# ---------------------------------------------------------------------------------------------
# Blocks


def example_block(loaded, result, rel: str, direction: str, layer: int, head: int) -> None:
    """A sentence holding ``rel``: the dependency view (its gold ``rel`` arcs above, the
    chosen head's pick for each of their dependents below) and the head view of the layer."""
    exs = examples(result, rel)
    if not exs:
        st.info("No analysed sentence holds this relation.", icon=":material/info:")
        return
    k = st.selectbox("Example sentence", range(len(exs)), format_func=lambda i: exs[i]["label"],
                     key=f"syntax_example_{rel}")
    ex = exs[min(int(k), len(exs) - 1)]
    labels, maps = word_maps(loaded, ex["words"])
    l0, h0 = layer - 1, head - 1
    arcs = attention_arcs(maps[l0, h0], ex["heads"], ex["deprels"], rel, direction)
    hits = sum(1 for a in arcs if a[3])
    show_dependency_view(
        dependency_svg(ex["words"], gold_arcs(ex["heads"], ex["deprels"], rel), arcs,
                       below_name=f"head {layer}-{head}"),
        f"Blue, above: the gold {plain(rel)} arcs, from head to dependent. Below: head "
        f"{layer}-{head}'s pick for each of their dependents, {PICKS[direction]}, with its "
        f"attention weight; green when the pick is the gold head, red when not: {hits} of "
        f"{len(arcs)} right in this sentence.")
    n = len(labels)
    special = np.zeros(n, dtype=bool)
    special[[0, n - 1]] = True
    payload = head_view_payload(labels, maps[l0], np.zeros(n, dtype=int), special, layer=l0,
                                is_pair=False, highlight=sorted({d for d, _ in ex["arcs"]}))
    st.markdown(f"**Head view, layer {layer}** (word level; head {head} shown, the others in "
                "its legend; the marked words are the relation's dependents)")
    head_view(payload, key="syntax_head_view", heads=[h0])


def probe_tree_block(res, key: str) -> None:
    """An evaluation sentence's tree from a layer's distance probe (below) against the gold
    tree (above), both over the non-punctuation words."""
    layers = [int(r["layer"]) for r in res.layers]
    best = max(res.layers, key=lambda r: np.nan_to_num(r["uuas"], nan=-1.0))["layer"]
    c1, c2 = st.columns([1, 3])
    layer = c1.selectbox("Probe layer", layers, index=layers.index(int(best)),
                         key=f"{key}_layer", help="0 = the embeddings")
    n_eval = len(res.eval_words)
    i = c2.selectbox("Evaluation sentence", range(n_eval), key=f"{key}_sentence",
                     format_func=lambda j: " ".join(res.eval_words[j])[:100])
    pred, gold, words = example_tree(res, int(i), int(layer))
    heads = res.eval_heads[int(i)]
    above = [(a + 1, b + 1, "") if heads[b] == a + 1 else (b + 1, a + 1, "") for a, b in gold]
    gold_set = {tuple(sorted(e)) for e in gold}
    below = [(a + 1, b + 1, None, tuple(sorted((a, b))) in gold_set) for a, b in pred]
    right = sum(1 for e in below if e[3])
    show_dependency_view(
        dependency_svg(words, above, below, below_name=f"probe, layer {layer}"),
        f"Blue, above: the gold tree (head to dependent). Below: the minimum spanning tree of "
        f"the layer-{layer} distance probe's distances, undirected: green edges are in the "
        f"gold tree, red ones are not ({right} of {len(below)}). Punctuation is left out.")


def json_download(data: dict, name: str, key: str, what: str) -> None:
    st.download_button(f"Download {what} (JSON, same schema as the CLI)",
                       data=json.dumps(data, indent=1), file_name=name,
                       mime="application/json", key=key, icon=":material/download:",
                       on_click="ignore")
