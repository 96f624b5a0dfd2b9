"""Aspect-head scoring: exact scores on hand-made word maps and on a synthetic model whose
heads attend to known positions; bootstrap intervals; ranking and the JSON."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from analysis.aspects import heads as Hd
from analysis.absa.data import to_dataset
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
    from analysis.core.models import LoadedModel

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
    from analysis.core.errors import DataError

    ds = to_dataset([{"id": "1", "text": "Hello there.", "terms": [], "categories": [],
                      "source": "json"}])
    with pytest.raises(DataError, match="No usable"):
        Hd.discover(fake_loaded, ds, "qa_m")


def _row(layer, head, score, lo, hi):
    return {"layer": layer, "head": head, "score": score, "accuracy": score, "ci_low": lo,
            "ci_high": hi}


def _base(pos, rand=0.1, freq=0.05, uni=0.2):
    return {"n_pairs": 40, "random_head": {"score": rand, "accuracy": rand},
            "positional": {"offset": 1, "score": pos, "accuracy": pos},
            "frequent_word": {"score": freq, "accuracy": freq},
            "uniform": {"score": uni, "accuracy": uni}}


def test_verdict_in_words_on_synthetic_results():
    ranked = {
        # two heads above every baseline (interval low 0.52 and 0.41 > 0.40), one not
        "aspect": [_row(3, 6, 0.61, 0.52, 0.70), _row(0, 0, 0.45, 0.41, 0.50),
                   _row(1, 1, 0.42, 0.35, 0.49)],
        # best head's score above the strongest baseline, its interval not
        "aspect_sentiment": [_row(2, 2, 0.50, 0.44, 0.56), _row(0, 1, 0.1, 0.05, 0.15)],
        # the case: no head near the fixed-position baseline
        "opposite": [_row(5, 11, 0.165, 0.14, 0.19)],
        "noop": [],  # no pairs
    }
    base = {"aspect": _base(0.40), "aspect_sentiment": _base(0.30, uni=0.47),
            "opposite": _base(0.783), "noop": {"n_pairs": 0}}
    v = Hd.kind_verdict(ranked["aspect"], base["aspect"])
    assert v["beats"] and [(r["layer"], r["head"]) for r in v["heads"]] == [(3, 6), (0, 0)]
    assert v["baseline"] == "positional" and v["baseline_score"] == 0.40
    assert Hd.kind_verdict(ranked["noop"], base["noop"]) is None
    assert Hd.verdict(ranked, base) == [
        "A head beats every baseline for the Aspect kind (aspect terms); no head does for the "
        "Aspect-sentiment kind (aspect terms or their opinion words) and the Opposite-aspect "
        "kind (the other aspect's terms).",
        "Head 4-7 beats every baseline for aspect terms: score 0.610 (95% interval 0.520–0.700) "
        "against the fixed-position baseline's 0.400; 2 heads in all.",
        "No head beats the uniform baseline for aspect terms or their opinion words with "
        "confidence (best 0.500, 95% interval 0.440–0.560, vs 0.470).",
        "No head beats the fixed-position baseline for the other aspect's terms (best 0.165 vs "
        "0.783).",
        "[SEP] when the aspect is absent: no pairs of this kind in the data.",
    ]


def test_verdict_headlines_when_all_or_none_beat():
    ranked = {"aspect": [_row(0, 0, 0.9, 0.85, 0.95)], "noop": [_row(1, 2, 0.9, 0.8, 0.99)]}
    base = {"aspect": _base(0.5), "noop": _base(0.79)}
    assert Hd.verdict(ranked, base)[0] == ("For every kind with data (the Aspect kind (aspect "
                                           "terms) and the No-op kind ([SEP] when the aspect is "
                                           "absent)), a head beats every baseline.")
    base["noop"] = _base(0.8)  # interval low 0.8 is not above 0.8
    base["aspect"] = _base(0.85)
    assert Hd.verdict(ranked, base)[0] == ("No head beats every baseline, for any kind (the "
                                           "Aspect kind (aspect terms) and the No-op kind ([SEP] "
                                           "when the aspect is absent)).")
    assert Hd.verdict({}, {})[0] == "The data has no pairs of any kind to score heads on."


def test_verdict_of_the_synthetic_model(fake_loaded):
    """The fake model's best heads only equal the best fixed position (its head 1 always looks
    at the last [SEP], as offset -1 does): a tie is not a head above every baseline. For [SEP]
    when the aspect is absent the fixed position scores 1.000 by construction (the [SEP]s are
    the last candidates): it is left out, said so, and the head is read against the next
    strongest baseline (random head, 1/3 of the 3 heads)."""
    disc = Hd.discover(fake_loaded, two_sentences(), "qa_m", n_boot=100)
    assert disc.baselines["noop"]["positional"] == {"offset": -1, "score": 1.0, "accuracy": 1.0}
    assert Hd.unbeatable(disc.baselines["noop"]) == ["positional"]
    assert Hd.unbeatable(disc.baselines["aspect"]) == []
    assert Hd.verdict(disc.ranked, disc.baselines) == [
        "A head beats every baseline for the No-op kind ([SEP] when the aspect is absent); no "
        "head does for the Aspect kind (aspect terms), the Aspect-sentiment kind (aspect terms "
        "or their opinion words) and the Opposite-aspect kind (the other aspect's terms).",
        "No head beats the fixed-position baseline for aspect terms (best 0.667 vs 0.667).",
        "No head beats the fixed-position baseline for aspect terms or their opinion words (best "
        "0.667 vs 0.667).",
        "No head beats the fixed-position baseline for the other aspect's terms (best 0.500 vs "
        "0.500).",
        "Head 1-2 beats every baseline for [SEP] when the aspect is absent: score 1.000 (95% "
        "interval 1.000–1.000) against the random-head baseline's 0.333; 1 head in all (the "
        "fixed-position baseline is left out: it scores 1.000, the most any head can score, so "
        "no head could beat it).",
    ]


def test_a_baseline_at_the_ceiling_is_left_out_and_named():
    """Planted baselines: a positional baseline of 1.000 no longer hides a head at 0.95 (its
    interval's low end 0.90 above the uniform 0.5); at 0.999 it still counts; with every
    baseline at the ceiling there is nothing to beat (no verdict)."""
    ranked = [_row(2, 3, 0.95, 0.90, 0.99)]
    v = Hd.kind_verdict(ranked, _base(1.0, uni=0.5))
    assert v["beats"] and v["left_out"] == ["positional"]
    assert v["baseline"] == "uniform" and v["baseline_score"] == 0.5
    v = Hd.kind_verdict(ranked, _base(0.999, uni=0.5))
    assert not v["beats"] and v["left_out"] == [] and v["baseline_score"] == 0.999
    assert Hd.kind_verdict(ranked, _base(1.0, rand=1.0, freq=1.0, uni=1.0)) is None
