"""The Syntax page's views of one sentence: the dependency view (gold arcs above the words, a
head's attention or a probe's tree below; an SVG built here, every word escaped, never markup)
with the head view of the chosen layer, and the probe's tree of an evaluation sentence
(docs/METHODS.md section 10). Layers and heads are 1-indexed, as everywhere in the UI."""

from __future__ import annotations

import numpy as np
import streamlit as st

from analysis.attention.views import head_view_payload
from analysis.syntax.heads import example_sentences
from analysis.syntax.probes import example_tree
from ui.common.attention.views import head_view
from ui.common.errors import plain
from ui.common.html import esc
from ui.syntax import state as syntax_state
from ui.syntax.blocks import PICKS, word_maps
from ui.syntax.state import reset_for
from ui.common.frame.url_select import url_selectbox


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
# Blocks


def example_block(loaded, result, rel: str, direction: str, layer: int, head: int) -> None:
    """A sentence holding ``rel``: the dependency view (its gold ``rel`` arcs above, the
    chosen head's pick for each of their dependents below) and the head view of the layer."""
    exs = examples(result, rel)
    if not exs:
        st.info("No analysed sentence holds this relation.", icon=":material/info:")
        return
    reset_for(syntax_state.EXAMPLE_FOR, rel, {syntax_state.EXAMPLE: 0})
    # the link keeps the example's number, not its text (url_selectbox)
    k = url_selectbox(st, "Example sentence", list(range(len(exs))), key=syntax_state.EXAMPLE,
                      format_func=lambda i: exs[i]["label"])
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
    head_view(payload, key=syntax_state.HEAD_VIEW, heads=[h0])


def probe_tree_block(res, key: str) -> None:
    """An evaluation sentence's tree from a layer's distance probe (below) against the gold
    tree (above), both over the non-punctuation words."""
    layers = [int(r["layer"]) for r in res.layers]
    best = max(res.layers, key=lambda r: np.nan_to_num(r["uuas"], nan=-1.0))["layer"]
    c1, c2 = st.columns([1, 3])
    layer_key, sentence_key = syntax_state.tree_keys(key)
    # the best layer by default: bound by url_selectbox (a link to layer 0 keeps it)
    layer = url_selectbox(c1, "Probe layer", layers, key=layer_key, help="0 = the embeddings",
                          default=int(best))
    n_eval = len(res.eval_words)
    i = url_selectbox(c2, "Evaluation sentence", list(range(n_eval)), key=sentence_key,
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
