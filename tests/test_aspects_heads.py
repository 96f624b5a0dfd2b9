"""Aspect-head scoring: exact scores on hand-made word maps and on a synthetic model whose
heads attend to known positions; bootstrap intervals; ranking and the JSON."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from analysis.aspects import heads as Hd
from analysis.aspects.data import to_dataset
from analysis.aspects.gold import KINDS
from test_aspects_gold import two_sentences


def test_pure_scoring_on_a_hand_made_word_map():
    # 1 layer, 2 heads, 5 words; query word 4; gold {1, 2}; candidates 1..3
    wm = np.zeros((1, 2, 5, 5))
    wm[0, 0, 4] = [0.1, 0.6, 0.1, 0.1, 0.1]
    wm[0, 1, 4] = [0.0, 0.1, 0.2, 0.6, 0.1]
    score, hit = Hd.pair_head_scores(wm, [4], [1, 2, 3], [1, 2])
    np.testing.assert_allclose(score, [[0.7, 0.3]])
    np.testing.assert_array_equal(hit, [[1.0, 0.0]])
    # two query words: their rows are averaged first
    wm[0, 0, 3] = [0.0, 0.0, 0.0, 0.0, 1.0]
    score, hit = Hd.pair_head_scores(wm, [3, 4], [0, 1, 2], [1])
    assert score[0, 0] == pytest.approx(0.3)
    assert hit[0, 0] == 1.0  # mean row over candidates 0..2: [0.05, 0.3, 0.05]


def test_bootstrap_interval():
    const = np.full((50, 2, 3), 0.25)
    lo, hi = Hd.bootstrap_ci(const, n_boot=200)
    np.testing.assert_allclose(lo, 0.25)
    np.testing.assert_allclose(hi, 0.25)
    vals = np.r_[np.zeros(50), np.ones(50)][:, None]
    lo, hi = Hd.bootstrap_ci(vals, n_boot=2000, seed=3)
    assert 0.38 < lo[0] < 0.45 and 0.55 < hi[0] < 0.62  # ~0.5 +- 1.96 * 0.05


class FakeModel:
    """Layer 0 heads: 0 -> every token attends to the token 'pasta' (else the last [SEP]);
    1 -> to the last [SEP]; 2 -> to position 1."""

    def __init__(self, pasta_id: int, sep_id: int):
        import torch

        self.pasta, self.sep = pasta_id, sep_id
        self.config = SimpleNamespace(num_attention_heads=3)
        self._p = torch.nn.Parameter(torch.zeros(1))

    def parameters(self):
        return iter([self._p])

    def __call__(self, input_ids, attention_mask, token_type_ids=None, **kw):
        import torch

        B, T = input_ids.shape
        att = torch.zeros(B, 3, T, T)
        for b in range(B):
            n = int(attention_mask[b].sum())
            last = n - 1
            tgt = (input_ids[b, :n] == self.pasta).nonzero().flatten()
            if len(tgt):
                att[b, 0, :n, tgt] = 1.0 / len(tgt)
            else:
                att[b, 0, :n, last] = 1.0
            att[b, 1, :n, last] = 1.0
            att[b, 2, :n, 1] = 1.0
        return SimpleNamespace(attentions=(att,))


@pytest.fixture(scope="module")
def fake_loaded(default_model):
    from analysis.models import LoadedModel

    tok = default_model.tokenizer
    model = FakeModel(tok.convert_tokens_to_ids("pasta"), tok.sep_token_id)
    return LoadedModel("fake", "fake", tok, model, "bert", 1, 3, 0, 128, {})


def test_scores_of_a_synthetic_model_are_exact(fake_loaded):
    disc = Hd.discover(fake_loaded, two_sentences(), "qa_m", n_boot=100)
    hs = disc.hs
    assert {k: len(hs.scores[k]) for k in KINDS} == {
        "aspect": 3, "aspect_sentiment": 3, "opposite": 2, "noop": 7}
    asp = Hd.score_matrix(hs, "aspect")
    np.testing.assert_allclose(asp[0], [2 / 3, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(Hd.score_matrix(hs, "aspect", "accuracy")[0], [2 / 3, 0, 0])
    # head 0 looks at 'pasta': the other aspect when asked about service, not about food
    np.testing.assert_allclose(Hd.score_matrix(hs, "opposite")[0], [1 / 2, 0, 0], atol=1e-6)
    np.testing.assert_allclose(Hd.score_matrix(hs, "opposite", "accuracy")[0], [1 / 2, 0, 0])
    np.testing.assert_allclose(Hd.score_matrix(hs, "noop")[0], [0, 1, 0], atol=1e-6)
    np.testing.assert_allclose(Hd.score_matrix(hs, "noop", "accuracy")[0], [0, 1, 0])
    top = disc.ranked["noop"][0]
    assert (top["layer"], top["head"]) == (0, 1) and top["score"] == pytest.approx(1.0)
    assert top["ci_low"] == pytest.approx(1.0) and top["ci_high"] == pytest.approx(1.0)
    assert disc.ranked["aspect"][0]["head"] == 0
    lo, hi = disc.ranked["aspect"][0]["ci_low"], disc.ranked["aspect"][0]["ci_high"]
    assert lo <= 2 / 3 <= hi and lo >= 0 and hi <= 1
    base = disc.baselines["aspect"]
    assert base["random_head"]["score"] == pytest.approx(2 / 9, abs=1e-6)
    # word 1 of the review ('pasta') is T in 2 of 3 pairs
    assert base["positional"] == {"offset": 1, "score": 2 / 3, "accuracy": 2 / 3}
    # uniform over review words: 1/5 (s1: The pasta was great .), 1/10 twice (s2)
    assert base["uniform"]["score"] == pytest.approx((1 / 5 + 2 / 10) / 3)
    # most frequent review word: 'The'/'the'/'.' etc., never an aspect term
    assert base["frequent_word"]["score"] == 0.0
    assert disc.baselines["noop"]["positional"]["offset"] == -1
    out = Hd.to_json(disc, top_k=2)
    assert len(out["heads"]) == 8 and set(out["heads"][0]) >= {
        "layer", "head", "kind", "score", "accuracy", "ci_low", "ci_high"}


def test_no_pairs_is_a_clear_error(fake_loaded):
    from analysis.errors import DataError

    ds = to_dataset([{"id": "1", "text": "Hello there.", "terms": [], "categories": [],
                      "source": "json"}])
    with pytest.raises(DataError, match="No usable"):
        Hd.discover(fake_loaded, ds, "qa_m")
