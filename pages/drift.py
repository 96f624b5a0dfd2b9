"""Drift: what fine-tuning changed in each head and layer, over a corpus."""

from __future__ import annotations

import numpy as np
import streamlit as st

from analysis.drift import PATTERN_TYPES, DriftError, PatternThresholds
from analysis.errors import DataError, InputError
from analysis.models import ModelLoadError
from ui import drift as D
from ui.corpus import corpus_picker
from ui.errors import show_error
from ui.example import wait_for_example
from ui.settings import settings
from ui.sidebar import context

st.title("Fine-tuning drift")
st.caption(
    "What fine-tuning changed, head by head and layer by layer, over a corpus: cosine "
    "similarity of each head's attention maps before vs after (Kovaleva et al. 2019), "
    "layerwise RSA (Merchant et al. 2020) and linear CKA (Kornblith et al. 2019), the drift of "
    "attention to [CLS]/[SEP]/punctuation, and Kovaleva's pattern types."
)
ctx = context()

before_spec, after_spec = D.pick_models(ctx.spec)
dataset = corpus_picker("drift", labels=True)
if not after_spec:
    st.info(
        "Enter the fine-tuned checkpoint to compare with: a local folder (with config.json and "
        "weights) or a hub id. To get one, fine-tune on the **Aspect heads** page and save it, "
        "or run `python -m analysis finetune --data FILE --task qa_m --out DIR` and paste "
        "DIR here. The before model is the sidebar's model unless you enter another. Left "
        "empty, the after model is the example checkpoint once it is built:",
        icon=":material/info:")
    if wait_for_example():  # built meanwhile (a background build reruns the page itself)
        st.rerun()
    st.stop()
if dataset is None:
    st.stop()

try:
    before, after = D.model_pair(before_spec, after_spec)
    result = D.drift_result(before, after, dataset)
except (ModelLoadError, DriftError, DataError, InputError) as exc:
    # in demo mode both models are the host's: their specs (maybe folders) stay unsaid
    show_error("One of the models is not available right now." if settings().demo
               and isinstance(exc, ModelLoadError) else exc)
    st.stop()

# ---------------------------------------------------------------------------------------------
# Summary

L, H = result.n_layers, result.n_heads
cos = result.cosine
if result.identical or result.all_ones:
    st.info(result.summary(), icon=":material/info:")
else:
    st.success(result.summary(), icon=":material/compare_arrows:")
for note in result.notices:
    st.caption(note)
m = st.columns(5)
m[0].metric("Examples", result.n_examples)
m[1].metric("Tokens", int(result.n_tokens.sum()))
m[2].metric("Mean head cosine", f"{cos.mean():.3f}")
lo = np.unravel_index(int(np.argmin(cos)), cos.shape)
m[3].metric("Most changed head", f"{lo[0] + 1}-{lo[1] + 1}", f"cosine {cos[lo]:.3f}",
            delta_color="off", delta_arrow="off")
m[4].metric("RSA / CKA, last layer", f"{result.rsa[-1]:.3f} / {result.cka[-1]:.3f}")

tab_heads, tab_layers, tab_noop, tab_patterns, tab_labels = st.tabs(
    ["Heads: cosine", "Layers: RSA and CKA", "No-op drift", "Pattern types", "By label"])

with tab_heads:
    st.subheader("Per-head cosine similarity, before vs after")
    st.caption("Mean over examples of cos(flatten(A_before), flatten(A_after)) on each example's "
               "real tokens. 1 = unchanged; low = the head changed most. Click a cell to pick "
               "that head.")
    D.cosine_grid(result)
    st.subheader("One head")
    if st.session_state.get("drift_layer") not in range(1, L + 1):
        st.session_state["drift_layer"] = int(lo[0]) + 1
    if st.session_state.get("drift_head") not in range(1, H + 1):
        st.session_state["drift_head"] = int(lo[1]) + 1
    p1, p2 = st.columns(2)
    layer = int(p1.selectbox("Layer", list(range(1, L + 1)), key="drift_layer"))
    head = int(p2.selectbox("Head", list(range(1, H + 1)), key="drift_head"))
    order = D.head_examples(result, before.spec, layer, head)
    per_ex = result.cosine_examples[:, layer - 1, head - 1]
    choice = st.selectbox(
        "Example (most changed first)", order[: min(len(order), 200)].tolist(),
        format_func=lambda i: f"{per_ex[i]:.3f}  {result.texts[i][:90]}",
        key=f"drift_example_{layer}_{head}")
    D.head_maps(*D.example_maps(before, after, result, choice), choice, layer, head)

with tab_layers:
    st.subheader("Layerwise representation similarity")
    st.caption("Layer 0 is the embeddings. RSA: Pearson correlation of the token-by-token "
               "cosine-similarity triangles of both models' hidden states, per example, averaged "
               "over examples. Linear CKA: over all tokens of the corpus, centred. 1 = the same "
               "geometry; lower = the layer changed more.")
    D.representation(result)

with tab_noop:
    st.subheader("No-op drift")
    st.caption("Change (after - before) in the mean share of attention each head puts on "
               "[CLS], [SEP] and punctuation (Clark et al. 2019 statistics). Red = more after "
               "fine-tuning, i.e. a move towards the vertical pattern.")
    kind = st.radio("Statistic", list(D.KINDS), format_func=D.KINDS.get, key="drift_noop_kind",
                    horizontal=True)
    D.noop_drift(result, kind)

with tab_patterns:
    st.subheader("Pattern types (Kovaleva et al. 2019)")
    st.caption("Every (example, head) map gets three transparent features: **vertical** = mean "
               "mass on [CLS]/[SEP] columns; **diagonal** = mean mass on i-1, i, i+1; **block** = "
               "1 - mean total-variation distance from uniform attention over the own segment's "
               "tokens. The rules below turn them into a type; move the thresholds to see how "
               "the shares respond.")
    s = st.columns(4)
    thr = PatternThresholds(
        vertical=s[0].slider("vertical >=", 0.0, 1.0, 0.5, 0.05, key="drift_t_vertical"),
        diagonal=s[1].slider("diagonal >=", 0.0, 1.0, 0.5, 0.05, key="drift_t_diagonal"),
        mixed=s[2].slider("both (vertical+diagonal) >=", 0.0, 1.0, 0.3, 0.05, key="drift_t_mixed"),
        block=s[3].slider("block >=", 0.0, 1.0, 0.6, 0.05, key="drift_t_block"),
    )
    st.markdown("\n".join(f"{k + 1}. {line}" for k, line in enumerate(thr.describe())))
    D.pattern_moves(result, thr)
    g1, g2 = st.columns(2)
    pattern = g1.selectbox("Gallery: type", list(PATTERN_TYPES), key="drift_gallery_type")
    which = g2.radio("Maps of", D.MODELS, key="drift_gallery_model", horizontal=True)
    D.pattern_gallery(result, before, after, which, pattern, thr)

with tab_labels:
    st.subheader("Split by label and by prediction")
    D.groups(result)
