"""Gold sets of (review, category) pairs: the aspect word Q, the review words, T, T or O, X
and [SEP], in both pair orders."""

from __future__ import annotations

from analysis.absa.data import to_dataset
from analysis.aspects.gold import build_pairs


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


def test_gold_sets_of_pairs(default_model):
    encs, pairs = build_pairs(default_model.tokenizer, two_sentences(), "qa_m")
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
    _, pairs_b = build_pairs(default_model.tokenizer, two_sentences(), "nli_b")
    misc = next(p for p in pairs_b if p.category == "anecdotes/miscellaneous")
    assert misc.text_a == "positive - anecdotes" and [misc.words[i] for i in misc.q] == \
        ["anecdotes"]
    assert misc.review[0] > misc.q[0]
