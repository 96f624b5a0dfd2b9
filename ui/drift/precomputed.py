"""The Fine-tuning drift page's view of the example's precomputed result (issue 49): while the
example checkpoint is missing or being built, its drift against the embedded model over the
page's default corpus, read from ``data/precomputed/drift.json`` and labelled so: the numbers,
the summary, the cosine per head, RSA and CKA per layer, the no-op drift and the pattern types'
shares (the per-example views, the galleries and the reading need the models: they come with
the live result)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis.drift import PATTERN_TYPES
from analysis.drift.study import DriftSummary, example
from ui.common.example import precomputed_note, precomputed_result
from ui.common.frame.corpus import SAMPLE
from ui.common.frame.explain import explain
from ui.common.heads import heads_frame, heads_heatmap
from ui.drift import blocks
from ui.drift import state as S


def numbers(summary) -> dict:
    """The page's numbers of the summary (the tokens count is not in the JSON)."""
    cos = summary.cosine
    lo = np.unravel_index(int(np.argmin(cos)), cos.shape)
    return {"Examples": str(summary.n_examples), "Mean head cosine": f"{cos.mean():.3f}",
            "Most changed head": f"{lo[0] + 1}-{lo[1] + 1}",
            "RSA, last layer": f"{summary.rsa[-1]:.3f}",
            "CKA, last layer": f"{summary.cka[-1]:.3f}"}


def show(record: dict, summary) -> None:
    """The precomputed result under its label (the page's live result replaces it)."""
    precomputed_note(record)
    st.success(summary.summary, icon=":material/compare_arrows:")
    items = list(numbers(summary).items())
    for row in (items[:3], items[3:]):
        for col, (label, value) in zip(st.columns(3), row):
            col.metric(label, value)
    rkey = ("precomputed", record.get("made"))
    heads, layers, noop, patterns = st.tabs(["Heads: cosine", "Layers: RSA and CKA",
                                             "No-op drift", "Pattern types"])
    with heads:
        st.subheader("Per-head cosine similarity, before vs after")
        explain("Each square is one attention head (rows: layers, columns: heads). Its colour is "
                "how alike the head's attention maps are before and after fine-tuning, as a "
                "cosine similarity averaged over the corpus: 1 means unchanged, lower means the "
                "head changed more.")
        blocks.cosine_grid(summary, rkey)
    with layers:
        st.subheader("Layerwise representation similarity")
        explain("How alike the two models' internal representations are at each layer (layer 0 "
                "is the embeddings). RSA compares which token pairs each model finds alike; CKA "
                "compares the representations over the whole corpus. 1 = the same; lower = the "
                "layer changed more.")
        blocks.representation(summary, rkey)
    with noop:
        st.subheader("No-op drift")
        explain("The change, after minus before fine-tuning, in how much attention each head "
                "puts on [CLS], [SEP] or punctuation. Red squares put more there after "
                "fine-tuning.")
        kind = st.radio("Statistic", list(blocks.KINDS), format_func=blocks.KINDS.get,
                        key=S.NOOP_KIND, horizontal=True, bind="query-params")
        delta = summary.noop_delta[kind]
        lim = float(np.nanmax(np.abs(delta))) or 1e-6
        st.altair_chart(heads_heatmap(heads_frame(delta, "change"), "change",
                                      title=f"Change in {blocks.KINDS[kind]}",
                                      scale=alt.Scale(scheme="redblue", domain=[-lim, lim],
                                                      reverse=True)), width="content")
    with patterns:
        st.subheader("Pattern types (Kovaleva et al. 2019)")
        shares = summary.patterns
        df = pd.DataFrame([{"type": t, "model": m, "share": shares[m].get(t, 0.0)}
                           for m in blocks.MODELS for t in PATTERN_TYPES])
        st.caption(f"At the default thresholds ({shares.get('thresholds')}).")
        st.altair_chart(alt.Chart(df, title="Share of maps per type").mark_bar().encode(
            x=alt.X("type:N", sort=list(PATTERN_TYPES), title=None, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("model:N", sort=blocks.MODELS),
            y=alt.Y("share:Q", axis=alt.Axis(format="%")),
            color=alt.Color("model:N", sort=blocks.MODELS),
            tooltip=["type:N", "model:N", alt.Tooltip("share:Q", format=".1%")],
        ).properties(width="container", height=240))


def show_for(before_spec: str, dataset) -> None:
    """The precomputed result when the page shows the view it was made for: the embedded
    model before, the bundled sample corpus at the default cap."""
    inputs = example()
    if before_spec != inputs.before or dataset is None \
            or st.session_state.get(S.CORPUS.source, SAMPLE) != SAMPLE \
            or len(dataset) != inputs.max_examples:
        return
    found = precomputed_result("drift", DriftSummary)
    if found is not None:
        show(*found)
