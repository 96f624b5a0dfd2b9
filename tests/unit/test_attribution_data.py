"""The faithfulness examples (analysis.attribution.data)."""

from __future__ import annotations

from analysis.attribution.data import corpus_examples, heldout_examples


def test_heldout_pairs_follow_the_example_recipe():
    from analysis.absa.example import split_sample

    texts, pairs, notes = heldout_examples()
    n_sentences = len(split_sample()[1])
    assert len(texts) == len(pairs) == 5 * n_sentences  # NLI-M: one pair per aspect
    assert pairs[:5] == ["price", "anecdotes", "food", "ambience", "service"]
    assert len(set(texts[:5])) == 1 and str(len(texts)) in notes[0]
    assert heldout_examples(7)[0] == texts[:7]


def test_corpus_file(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("The food was great.\tfood\n\nSlow service.\n", encoding="utf-8")
    texts, pairs, _ = corpus_examples(f)
    assert texts == ["The food was great.", "Slow service."]
    assert pairs[0] == "food" and not pairs[1]
