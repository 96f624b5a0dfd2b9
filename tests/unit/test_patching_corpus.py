"""Counterfactual suggestions for ABSA pairs, the corpus view's bootstrap and Spearman, the
corpus view on a tiny checkpoint against per-pair patching, and the CLI (one line on bad
input)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples
from analysis.patching.corpus import corpus_patching, sentence_ci, spearman
from analysis.patching.counterfactuals import OPPOSITES, opinion_pool, suggest
from importance_util import cached_checkpoint, tiny_absa


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer

    from analysis.core.models import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())


def _pair(sentences, i, category, task="nli_m"):
    ex = next(e for e in build_examples(sentences.select([i]), task)
              if e.category == category)
    return sentences[i], ex


def test_suggestions_keep_the_token_count_and_flip_the_opinion(tok):
    data = load_sample()
    row, ex = _pair(data, 0, "food")  # "The pasta was delicious and the waiter was friendly."
    found = suggest(tok, row, ex, "nli_m", opinion_pool(data))
    n = len(tok(ex.text_a, ex.text_b)["input_ids"])
    aspects = found["aspect"]
    # price, food, service are one word piece; anecdotes and ambience are not
    assert [s.pair for s in aspects] == ["price", "service"]
    assert "(gold: none instead of positive)" in aspects[0].note  # a differing gold label first
    assert "(gold: positive instead of positive)" in aspects[1].note
    op = found["opinion"][0]
    assert op.text == "The pasta was disgusting and the waiter was friendly." and op.pair == "food"
    assert OPPOSITES["delicious"] == "disgusting"
    for s in aspects + found["opinion"]:
        assert len(tok(s.text, s.pair)["input_ids"]) == n


def test_an_opinion_word_without_a_listed_opposite_takes_an_annotated_one(tok):
    data = load_sample()
    row, ex = _pair(data, 2, "service")  # "Our server ignored us ..." (negative, 'ignored')
    assert "ignored" not in OPPOSITES
    op = suggest(tok, row, ex, "nli_m", opinion_pool(data), kinds=("opinion",))["opinion"][0]
    pool = opinion_pool(data)["positive"]
    new = op.text.split()[2]
    assert pool[new] > 0 and op.text.replace(new, "ignored") == row["text"]


def test_a_phrase_keeps_its_words_and_takes_a_listed_opposite_of_one(tok):
    data = load_sample()
    i = next(k for k, t in enumerate(data["text"]) if t.startswith("The service was painfully"))
    row, ex = _pair(data, i, "service")
    op = suggest(tok, row, ex, "nli_m", opinion_pool(data), kinds=("opinion",))["opinion"][0]
    assert op.note == "'slow' replaced by 'fast'"
    assert op.text == row["text"].replace("painfully slow", "painfully fast")


def test_sentence_bootstrap_and_spearman_by_hand():
    effects = np.array([[1.0], [3.0], [5.0]])
    mean, ci = sentence_ci(effects, np.array([0, 0, 1]), n_boot=2000)
    assert mean[0] == pytest.approx(3.0)
    # resampling 2 sentences: the mean of its pairs is 2 (sentence 0 twice), 5, or 3 (one each)
    assert ci[0, 0] == pytest.approx(2.0) and ci[0, 1] == pytest.approx(5.0)
    same, ci_same = sentence_ci(np.full((4, 2), 0.25), np.arange(4))
    np.testing.assert_allclose(ci_same, 0.25)
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(spearman([1, 1, 1, 1], [1, 2, 3, 4]))


def test_the_corpus_view_averages_the_pairs_own_maps():
    from analysis.patching import patch_pair

    loaded, card, ev = tiny_absa("nli_m", sentences=3)
    cr = corpus_patching(loaded, ev, contrast="aspect", importance=False, marks=False, min_gap=1e-9,
                         n_boot=200)
    assert cr.n_pairs + sum(cr.skipped.values()) == 15
    assert cr.effects.shape == (cr.n_pairs, 2, 4)
    np.testing.assert_allclose(cr.mean, cr.effects.mean(0))
    assert (cr.ci[..., 0] <= cr.mean + 1e-12).all() and (cr.mean <= cr.ci[..., 1] + 1e-12).all()
    # the first pair kept is the first sentence asked about price against ... its suggestion
    data = ev.sentences
    row, ex = _pair(data, 0, "price")
    s = suggest(loaded.tokenizer, row, ex, "nli_m", kinds=("aspect",))["aspect"][0]
    one = patch_pair(loaded, ex.text_a, ex.text_b, s.text, s.pair, sites=("heads",),
                     max_length=128)
    np.testing.assert_allclose(cr.effects[0], one.heads, atol=1e-12)
    js = cr.to_json()
    assert js["pairs"] == cr.n_pairs and len(js["heads"]) == 2 and len(js["heads_ci"][0][0]) == 2


def test_cli_writes_the_pairs_numbers_and_refuses_bad_input_in_one_line(tmp_path, capsys):
    from analysis.cli import main
    from analysis.importance.evalset import load_classifier
    from analysis.patching import patch_pair

    ck = str(cached_checkpoint("nli_m"))
    out = tmp_path / "p.json"
    args = ["patching", "--model", ck, "--text", "The pasta was delicious.", "--pair", "food",
            "--counter-text", "The pasta was disgusting.", "--counter-pair", "food"]
    assert main(args + ["--out", str(out)]) == 0
    got = json.loads(out.read_text())
    loaded, card = load_classifier(ck)
    ref = patch_pair(loaded, "The pasta was delicious.", "food", "The pasta was disgusting.",
                     "food", max_length=card["max_length"])
    assert got["tokens"] == ref.tokens and got["classes"] == list(ref.classes)
    np.testing.assert_allclose(got["heads"], ref.heads, atol=1e-12)
    np.testing.assert_allclose(got["residual"], ref.positions["residual"], atol=1e-12)
    assert got["clean"] == pytest.approx(ref.contrast.clean)
    capsys.readouterr()
    bad = args[:-4] + ["--counter-text", "The pasta was very very delicious.",
                       "--counter-pair", "food", "--out", str(tmp_path / "q.json")]
    assert main(bad) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "same number of tokens" in err
    assert main(["patching", "--model", ck, "--out", str(tmp_path / "r.json")]) == 2
    assert "--data" in capsys.readouterr().err
