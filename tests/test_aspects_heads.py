"""Aspect-head discovery: exact scores on hand-made word maps and on a synthetic model whose
heads attend to known positions; baselines; bootstrap; causal check; CLI."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from analysis import absa as A
from analysis import heads as Hd
from analysis.absa_data import load_sample, to_dataset


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


def two_sentences():
    return to_dataset([
        {"id": "1", "text": "The pasta was great.", "source": "json",
         "terms": [{"term": "pasta", "start": 4, "end": 9, "category": "food",
                    "polarity": "positive",
                    "opinions": [{"word": "great", "start": 14, "end": 19}]}],
         "categories": [{"category": "food", "polarity": "positive"}]},
        {"id": "2", "text": "The pasta was cold but the waiter was kind.", "source": "json",
         "terms": [{"term": "pasta", "start": 4, "end": 9, "category": "food",
                    "polarity": "negative",
                    "opinions": [{"word": "cold", "start": 14, "end": 18}]},
                   {"term": "waiter", "start": 27, "end": 33, "category": "service",
                    "polarity": "positive",
                    "opinions": [{"word": "kind", "start": 38, "end": 42}]}],
         "categories": [{"category": "food", "polarity": "negative"},
                        {"category": "service", "polarity": "positive"}]},
    ])


@pytest.fixture(scope="module")
def fake_loaded(default_model):
    from analysis.models import LoadedModel

    tok = default_model.tokenizer
    model = FakeModel(tok.convert_tokens_to_ids("pasta"), tok.sep_token_id)
    return LoadedModel("fake", "fake", tok, model, "bert", 1, 3, 0, 128, {})


def test_gold_sets_of_pairs(default_model):
    encs, pairs = Hd.build_pairs(default_model.tokenizer, two_sentences(), "qa_m")
    assert len(pairs) == 10
    food2 = next(p for p in pairs if p.sentence == 1 and p.category == "food")
    w = food2.words
    assert [w[i] for i in food2.q] == ["food"]
    assert [w[i] for i in food2.sets["aspect"]] == ["pasta"]
    assert [w[i] for i in food2.sets["aspect_sentiment"]] == ["pasta", "cold"]
    assert [w[i] for i in food2.sets["opposite"]] == ["waiter"]
    assert "noop" not in food2.sets
    price1 = next(p for p in pairs if p.sentence == 0 and p.category == "price")
    # the category is absent: [SEP] is the gold (no-op); other aspects are no "opposite" here
    assert price1.label == "none" and [w for w in price1.sets] == ["noop"]
    service2 = next(p for p in pairs if p.sentence == 1 and p.category == "service")
    assert [service2.words[i] for i in service2.sets["opposite"]] == ["pasta"]
    assert [price1.words[i] for i in price1.sets["noop"]] == ["[SEP]", "[SEP]"]
    # aux first (B-task order): the query still is the aspect word, now in segment A
    _, pairs_b = Hd.build_pairs(default_model.tokenizer, two_sentences(), "nli_b")
    misc = next(p for p in pairs_b if p.category == "anecdotes/miscellaneous")
    assert misc.text_a == "positive - anecdotes" and [misc.words[i] for i in misc.q] == \
        ["anecdotes"]
    assert misc.review[0] > misc.q[0]


def test_scores_of_a_synthetic_model_are_exact(fake_loaded):
    disc = Hd.discover(fake_loaded, two_sentences(), "qa_m", n_boot=100)
    hs = disc.hs
    assert {k: len(hs.scores[k]) for k in Hd.KINDS} == {
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


def test_causal_check_masks_the_ranked_heads(tiny_model_dir):
    from analysis.models import load_model

    tiny = load_model(str(tiny_model_dir("bert")))
    clf = A.make_classifier(tiny, "qa_m", seed=2)
    ex = A.build_examples(load_sample().select(range(6)), "qa_m")
    ranked = [{"layer": 1, "head": 3}, {"layer": 0, "head": 0}]
    res = Hd.causal_check(clf, tiny.tokenizer, ex, "qa_m", ranked, 2, 2, 4, n_random=2)
    full = A.evaluate(clf, tiny.tokenizer, ex, "qa_m")
    masked = A.evaluate(clf, tiny.tokenizer, ex, "qa_m",
                        head_mask=Hd.head_mask_for([(1, 3), (0, 0)], 2, 4))
    assert res["masked_heads"] == [(1, 3), (0, 0)]
    for key in ("aspect_f1", "acc_4way"):
        assert res["full"][key] == pytest.approx(full[key])
        assert res["top_k"][key] == pytest.approx(masked[key])
        assert res["delta_top_k"][key] == pytest.approx(masked[key] - full[key])
    m = Hd.head_mask_for([(1, 3)], 2, 4)
    assert m.sum() == 7 and m[1, 3] == 0


def test_cli_aspect_heads(tmp_path, capsys):
    from analysis.cli import main
    from test_absa import make_tiny_checkpoint

    ck = make_tiny_checkpoint(tmp_path / "ck")
    out = tmp_path / "heads.json"
    rc = main(["aspect-heads", "--model", str(ck), "--data", "sample", "--max-sentences", "6",
               "--top-k", "3", "--out", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    kinds = [h["kind"] for h in data["heads"]]
    assert kinds.count("aspect") == 3 and kinds.count("noop") == 3
    assert all(0 <= h["layer"] < 2 and 0 <= h["head"] < 4 for h in data["heads"])
    assert all(h["ci_low"] <= h["score"] + 1e-9 <= h["ci_high"] + 2e-9 for h in data["heads"])
    assert set(data["baselines"]) == set(Hd.KINDS)
    capsys.readouterr()
    assert main(["aspect-heads", "--model", str(ck), "--data", "sample", "--out",
                 str(tmp_path / "x.txt")]) == 2
    assert capsys.readouterr().err.strip() == "error: --out must name a .json file."
