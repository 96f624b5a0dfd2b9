"""Batched ablations (analysis.importance.ablate) against the Aspect heads evaluation run once
per ablation."""

from __future__ import annotations

import numpy as np

from analysis.aspects.causal import head_mask_for
from analysis.absa.finetune import predict_probs
from analysis.importance.ablate import first_layers, run_ablations, single_ablations
from analysis.importance.scoring import softmax
from importance_util import tiny_absa


def test_single_ablations_layout():
    d = single_ablations(2, 3)
    assert d.shape == (9, 2, 3) and not d[0].any()
    assert [tuple(np.argwhere(d[1 + 1 * 3 + 2])[0])] == [(1, 2)]
    assert d[7][0].all() and not d[7][1].any() and d[8][1].all()
    assert first_layers(d).tolist() == [2, 0, 0, 0, 1, 1, 1, 0, 1]


def test_batched_ablations_equal_the_evaluation_with_a_head_mask():
    loaded, card, ev = tiny_absa(sentences=3)
    dis = single_ablations(2, 4)
    logits = run_ablations(loaded, ev, dis, "mask")
    ex = ev.scorer.examples
    for a, heads in ((0, []), (1 + 1 * 4 + 2, [(1, 2)]), (1 + 8 + 0, [(0, h) for h in range(4)])):
        ref = predict_probs(loaded.model, loaded.tokenizer, ex, max_length=card["max_length"],
                            head_mask=head_mask_for(heads, 2, 4) if heads else None)
        assert np.abs(softmax(logits[a]) - ref).max() < 1e-5
    # one ablation per forward (the benchmark's baseline layout) gives the same numbers
    some = [0, 7, 10]
    alone = run_ablations(loaded, ev, dis[some], "mask", max_tokens=1)
    assert np.abs(alone - logits[some]).max() < 1e-5
    uni = run_ablations(loaded, ev, dis[:3], "uniform", batch_size=5)
    assert np.abs(uni[0] - logits[0]).max() < 1e-5 and np.abs(uni[1] - logits[1]).max() > 0
