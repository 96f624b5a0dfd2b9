"""The Aspect heads page's view of the example's precomputed result (issue 49): while the
example checkpoint is missing or being built, the heads it finds on the page's default data
(the first 60 sentences of the bundled sample), read from ``data/precomputed/aspects.json``
and labelled so: the reading, and for each kind the map of every head's score and the top
heads with their intervals (the examples, the model before fine-tuning and the causal check
need the models: they come with the live result)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from analysis.aspects.gold import KINDS
from analysis.aspects.reading import reading, task_explanation
from analysis.aspects.study import AspectHeadsResult
from ui.aspects import blocks
from ui.common.errors import plain
from ui.common.example import precomputed_note, precomputed_result
from ui.common.frame.explain import explain, glossed
from ui.common.heads import decimals, heads_frame, heads_heatmap

TOP = 10  # heads listed per kind


def score_map(rows: list[dict]) -> np.ndarray:
    """[L, H] score of each head from the JSON's rows of one kind (NaN where absent)."""
    L = 1 + max(r["layer"] for r in rows)
    H = 1 + max(r["head"] for r in rows)
    out = np.full((L, H), np.nan)
    for r in rows:
        out[r["layer"], r["head"]] = r["score"]
    return out


def top_table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"layer": r["layer"] + 1, "head": r["head"] + 1, "score": r["score"],
                          "95% CI": f"{r['ci_low']:.3f}–{r['ci_high']:.3f}",
                          "accuracy": r["accuracy"]} for r in rows[:TOP]])


def show() -> bool:
    """The precomputed result under its label; False when there is none for this recipe."""
    found = precomputed_result("aspects", AspectHeadsResult)
    if found is None:
        return False
    record, result = found
    st.header("2. The heads (precomputed)")
    precomputed_note(record)
    ranked = result.ranked()
    st.caption("Pairs per kind: " + ", ".join(f"{blocks.KIND_SHORT[k]} {result.n_pairs[k]}"
                                               for k in KINDS))
    explain(task_explanation(result.task))
    lines = reading(ranked, result.baselines)
    st.info(glossed(plain(lines[0])), icon=":material/gavel:")
    st.markdown(glossed("\n".join(f"- {plain(line)}" for line in lines[1:])))
    for tab, kind in zip(st.tabs([blocks.KIND_SHORT[k] for k in KINDS]), KINDS):
        with tab:
            st.subheader(blocks.KIND_TITLES[kind])
            rows = ranked[kind]
            if not rows:
                st.info("The gold data has no pairs of this kind.", icon=":material/info:")
                continue
            df = heads_frame(score_map(rows), value="score")
            st.altair_chart(heads_heatmap(df, "score", title=f"{blocks.KIND_SHORT[kind]} score "
                                          "per head", scheme="viridis", legend="attention mass",
                                          cell=(26, 24)), width="content")
            table = top_table(rows)
            st.dataframe(table, hide_index=True, column_config=decimals(table))
            st.dataframe(blocks.baseline_frame(result.baselines[kind]), hide_index=True)
    return True
