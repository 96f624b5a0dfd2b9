"""Faithfulness (analysis.attribution.faithfulness): a planted oracle ranking beats random,
removal by hand, k checked, bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.attribution.faithfulness import (_probabilities, bootstrap_interval, check_ks,
                                               example_scores, faithfulness, perturbed,
                                               top_count)
from analysis.core.encoding import encode
from analysis.core.errors import InputError
from attribution_models import tiny_classifier
from builders import one_line

SENTENCES = [("The staff were rude and the soup was cold.", "service"),
             ("Great pizza, lovely wine and a friendly waiter.", "food"),
             ("We waited an hour for a table but the view was worth it.", "ambience"),
             ("Prices are too high for such small plates.", "price")]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_classifier(tmp_path_factory)


def test_top_count_and_ks():
    assert [top_count(10, k) for k in (1, 5, 10, 20, 50)] == [1, 1, 1, 2, 5]
    assert top_count(3, 50) == 2 and top_count(7, 100) == 7
    assert check_ks(["50", 1, "10"]) == (1, 10, 50)
    for bad in (["0"], ["101"], ["2.5"], ["x"], []):
        with pytest.raises(InputError) as exc:
            check_ks(bad)
        assert "1 to 100" in one_line(exc) or "at least one" in one_line(exc)


def test_removal_by_hand(tiny):
    enc = encode(tiny.tokenizer, "good food", "food")  # [CLS] good food [SEP] food [SEP]
    dropped = perturbed(enc, [1, 4], "drop", None)
    assert dropped.tokens == ["[CLS]", "food", "[SEP]", "[SEP]"]
    assert dropped.token_type_ids == [0, 0, 0, 1]
    masked = perturbed(enc, [2], "mask", tiny.tokenizer.mask_token_id)
    assert masked.input_ids[2] == tiny.tokenizer.mask_token_id
    assert masked.input_ids[:2] == enc.input_ids[:2] and masked.n_tokens == enc.n_tokens


def test_planted_oracle_ranking_beats_random(tiny):
    """The oracle ranks each token by how much the prediction falls when that token alone is
    dropped; it must beat random rankings on comprehensiveness."""
    oracle, rand = [], []
    from analysis.core.forward import forward

    for i, (text, pair) in enumerate(SENTENCES[:3]):
        enc = encode(tiny.tokenizer, text, pair)
        content = np.flatnonzero(~enc.special)
        target = int(forward(tiny.model, tiny.tokenizer, [enc]).output.logits[0].argmax())
        full = _probabilities(tiny, [enc], target)
        singles = _probabilities(tiny, [perturbed(enc, [j], "drop", None) for j in content],
                                 target)
        drops = np.zeros(enc.n_tokens)
        drops[content] = full[0] - singles
        scores = {"oracle": drops}
        scores.update({f"r{s}": np.random.default_rng([s, i]).random(enc.n_tokens)
                       for s in range(5)})
        ex = example_scores(tiny, enc, scores, target)
        assert ex["_p"]["p"] == pytest.approx(full[0])
        oracle.append(ex["oracle"]["comp"].mean())
        rand.append(np.mean([ex[f"r{s}"]["comp"].mean() for s in range(5)]))
        assert ex["oracle"]["comp"][0] >= max(ex[f"r{s}"]["comp"][0] for s in range(5)) - 1e-9
    assert np.mean(oracle) > np.mean(rand) + 0.01


def test_bootstrap_interval_brackets_the_mean():
    v = np.arange(20, dtype=float)
    lo, hi = bootstrap_interval(v)
    assert lo < v.mean() < hi and (lo, hi) == bootstrap_interval(v)
    assert bootstrap_interval([np.nan, 1.0, 1.0]) == (1.0, 1.0)


def test_corpus_run_and_bad_inputs(tiny, default_model):
    texts, pairs = zip(*SENTENCES[:3])
    f = faithfulness(tiny, list(texts) + ["   "], list(pairs) + [None],
                     methods=["attention", "integrated_gradients"], ks=(10, 50), seeds=2,
                     steps=8)
    assert f.n_examples == 3 and f.ks == (10, 50) and "1 example(s) skipped" in f.notes[0]
    for name in ("attention", "integrated_gradients"):
        c = f.methods[name]["comprehensiveness"]
        assert len(c["curve"]) == 2 and c["low"] <= c["mean"] <= c["high"]
        assert c["mean"] == pytest.approx(np.mean(c["curve"]))
    assert f.random["seeds"] == 2 and f.random["spread"]["comprehensiveness"] >= 0
    with pytest.raises(InputError) as exc:
        faithfulness(default_model, ["The food was great."])
    assert "no classification head" in one_line(exc)
    with pytest.raises(InputError):
        faithfulness(tiny, ["x"], removal="erase")
