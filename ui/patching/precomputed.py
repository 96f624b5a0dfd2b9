"""The Causal patching page's view of the example's precomputed result (issue 49): while the
example checkpoint is missing or being built, the pair the page opens on and its corpus view
(every held-out pair against another aspect), read from ``data/precomputed/patching.json``
and labelled so: the answers, the reading, the heads' map, the causal tracing maps and the
corpus view (choosing another review or counterfactual needs the model: it comes with the
live result)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from analysis.patching.reading import corpus_reading, name, pair_reading, top_heads
from analysis.patching.study import PatchingResult
from ui.common.chart_cache import cached_chart, draw
from ui.common.errors import plain
from ui.common.example import precomputed_note, precomputed_result
from ui.common.frame.explain import explain, glossed
from ui.patching import blocks as B
from ui.patching import state as S

SPECIAL = ("[CLS]", "[SEP]", "[PAD]", "<s>", "</s>", "<pad>")


def words(tokens: list[str]) -> tuple[str, str]:
    """(text A, text B) of a pair's word pieces ("##" joined to the piece before)."""
    parts, out = [[]], []
    for t in tokens:
        if t in SPECIAL:
            if parts[-1]:
                parts.append([])
            continue
        if t.startswith("##") and parts[-1]:
            parts[-1][-1] += t[2:]
        else:
            parts[-1].append(t)
    out = [" ".join(p) for p in parts if p]
    return (out + ["", ""])[0], (out + ["", ""])[1]


def show(direction: str, scale: str) -> bool:
    """The precomputed result (made noising) under its label; False when there is none for
    this recipe or the page asks for another direction."""
    found = precomputed_result(S.PREFIX, PatchingResult)
    if found is None or found[1].pair is None or found[1].pair.direction != direction:
        return False
    record, result = found
    r, cr = result.pair, result.corpus
    precomputed_note(record)
    text, pair = words(r.tokens)
    ctext, cpair = words(r.counter_tokens)
    st.markdown(f"**Input:** {plain(text)} | {plain(pair)}  \n"
                f"**Counterfactual:** {plain(ctext)} | {plain(cpair)}")
    a, b = r.classes
    values = B.heads_values(r, scale)
    sign = -1.0 if scale == "probability" and direction == "noising" else 1.0
    l, h, _ = top_heads(sign * values)[0]
    best = float(values[l, h])
    numbers = {"Input's answer": r.predictions[0], "Counterfactual's answer": r.predictions[1],
               f"Gap {a} - {b}": f"{r.contrast.clean:+.2f} to {r.contrast.counter:+.2f}",
               "Head carrying most": f"{name(l, h)} ({best:+.0%})" if scale == "share"
               else f"{name(l, h)} ({best:+.3f})"}
    for col, (label, value) in zip(st.columns(len(numbers)), numbers.items()):
        col.metric(label, plain(value))
    st.subheader("Reading")
    st.markdown(glossed("\n".join(f"- {plain(line)}" for line in pair_reading(r))))
    key = (S.PREFIX, "precomputed", record.get("made"), scale)
    heads, positions, corpus = st.tabs(S.TABS)
    with heads:
        draw(cached_chart(("heads", *key), lambda: B.heads_chart(r, scale)), stretch=True)
    with positions:
        if scale != "share":
            st.caption("The precomputed maps give the share of the change only.")
        for site in ("residual", "attention", "mlp"):
            draw(cached_chart((site, *key), lambda site=site: B.positions_chart(r, site, "share")),
                 stretch=True)
    with corpus:
        if cr is None:
            st.info("The corpus view comes with the example checkpoint.", icon=":material/info:")
            return True
        explain("The per-head map of every held-out pair (each review asked about each aspect) "
                "against another aspect asked about it, averaged, with 95% bootstrap intervals "
                "over the reviews.")
        st.markdown("\n".join(f"- {plain(line)}" for line in corpus_reading(cr)))
        draw(cached_chart(("corpus", *key), lambda: B.corpus_chart(cr)), stretch=True)
        if cr.importance is not None and np.isfinite(cr.importance).any():
            draw(cached_chart(("against", *key), lambda: B.against_importance_chart(cr)),
                 stretch=True)
    return True
