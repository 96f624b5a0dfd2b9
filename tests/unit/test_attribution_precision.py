"""ALTI in float32 with float64 sums (issue 48: the page's precision, analysis.attribution.l1)
against the float64 definition on the default model and real pairs: the held-out ABSA pairs'
input-score rankings are the same, and every layer's matrix within the stated 1e-6."""

from __future__ import annotations

import numpy as np

from analysis.attribution.data import heldout_examples
from analysis.attribution.mixing import rollout
from analysis.attribution.run import encode_input, mixing_layers

PAIRS = 12  # of the 165 (`python -m bench.studies.attribution --alti-precision` checks them all)


def test_float32_alti_keeps_every_ranking_of_held_out_pairs(default_model):
    texts, pairs, _ = heldout_examples(PAIRS)
    worst = 0.0
    for text, pair in zip(texts, pairs):
        enc = encode_input(default_model, text, pair)
        exact = mixing_layers(default_model, enc, ("alti",), precision="float64")[0]["alti"]
        fast = mixing_layers(default_model, enc, ("alti",), precision="float32")[0]["alti"]
        worst = max(worst, float(np.abs(exact - fast).max()))
        a, b = rollout(exact, False)[-1, 0], rollout(fast, False)[-1, 0]
        assert (np.argsort(-a, kind="stable") == np.argsort(-b, kind="stable")).all(), text
    assert worst <= 1e-6
