"""Head importance of one example on the real example checkpoint (the user's cache, or the one
named by $ATTENTION_TEST_EXAMPLE; skipped when neither is built): the CLI's per-example JSON
answers a held-out row as the Predictions page does, and its changes are those of disabling
the heads one at a time with the model's own head mask."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def example_folder():
    from analysis.core.example import example_path, example_ready

    if example_ready():
        return example_path()
    built = os.environ.get("ATTENTION_TEST_EXAMPLE")
    if built and example_ready(built):
        return Path(built)
    pytest.skip("the example checkpoint is not built (set ATTENTION_TEST_EXAMPLE)")


def test_the_cli_on_a_held_out_row_of_the_example(example_folder, tmp_path):
    from analysis.absa.finetune import predict_probs
    from analysis.aspects.causal import head_mask_for
    from analysis.cli import main
    from analysis.importance.evalset import load_classifier
    from analysis.predictions.data import heldout
    from analysis.predictions.predict import predict_inputs

    loaded, card = load_classifier(str(example_folder))
    data = heldout(loaded, card)
    row = 0
    review, aspect = data.reviews[row], data.categories[row]
    gold = data.classes[int(data.gold[row])]
    out = tmp_path / "one.json"
    assert main(["importance", "--model", str(example_folder), "--text", review, "--aspect",
                 aspect, "--label", gold, "--method", "mask", "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["classes"] == list(data.classes) and got["intervals"] is None
    # the Predictions page's answer of the row
    row_probs = predict_inputs(loaded, data, [data.texts[row]], [data.pairs[row]])[0]
    assert np.abs(np.asarray(got["probabilities"]) - row_probs).max() < 1e-5
    # the three heads that matter most, each disabled alone with the model's head mask
    ex = [e for e in data.ev.scorer.examples if e.category == aspect and e.sentence ==
          int(data.sentence[row])]
    change = np.asarray(got["heads"]["gold_probability"])
    g = data.classes.index(gold)
    L, H = change.shape
    for i in np.argsort(change, axis=None)[:3]:
        l, h = divmod(int(i), H)
        p = predict_probs(loaded.model, loaded.tokenizer, ex, max_length=card["max_length"],
                          head_mask=head_mask_for([(l, h)], L, H))[0]
        assert change[l, h] == pytest.approx(p[g] - row_probs[g], abs=1e-5)
        assert got["heads"]["flips"][l][h] == bool(p.argmax() != np.argmax(row_probs))
