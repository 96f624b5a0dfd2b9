"""analysis.attention.reading on hand-built maps where the right sentence is known, and on the
default model."""

import numpy as np
import pytest

from analysis.attention.reading import (attention_reading, behaviour_shares, head_reading,
                                        normalised_entropy)

TOKENS = ["[CLS]", "the", "play", "##ing", "cat", "the", "[SEP]"]
SPECIAL = [True, False, False, False, False, False, True]


def _map(rule):
    n = len(TOKENS)
    a = np.zeros((n, n))
    for i in range(n):
        a[i, rule(i, n)] = 1.0
    return a


def test_previous_token_head():
    r = head_reading(_map(lambda i, n: max(i - 1, 0)), TOKENS, SPECIAL, layer=2, head=7)
    assert r.kind == "prev"
    assert r.shares["prev"] == pytest.approx(6 / 7)
    assert r.sentence.startswith("Layer 2, head 7 mostly looks at the previous token: 86%")


def test_next_token_and_sep_heads():
    assert head_reading(_map(lambda i, n: min(i + 1, n - 1)), TOKENS, SPECIAL).kind == "next"
    r = head_reading(_map(lambda i, n: n - 1), TOKENS, SPECIAL)
    assert r.kind == "sep" and r.shares["sep"] == pytest.approx(1.0)
    assert "the separator token(s) ([SEP]): 100%" in r.sentence
    assert head_reading(_map(lambda i, n: 0), TOKENS, SPECIAL).kind == "cls"


def test_same_word_pieces_and_repeats():
    # "play" <-> "##ing" (one word) and "the" <-> "the" (a repeat); specials look at themselves
    partner = {1: 5, 5: 1, 2: 3, 3: 2, 4: 4, 0: 0, 6: 6}
    a = _map(lambda i, n: partner[i])
    word_ids = [None, 0, 1, 1, 2, 3, None]
    shares = behaviour_shares(a, TOKENS, SPECIAL, word_ids)
    assert shares["same_word"] == pytest.approx(4 / 7)
    r = head_reading(a, TOKENS, SPECIAL, word_ids)
    assert r.kind == "same_word" and "mostly looks at the same word: 57%" in r.sentence


def test_broad_and_mixed():
    n = len(TOKENS)
    uniform = np.full((n, n), 1 / n)
    assert normalised_entropy(uniform) == pytest.approx(1.0)
    r = head_reading(uniform, TOKENS, SPECIAL)
    assert r.kind == "broad" and "spreads its attention broadly: its entropy is 100%" in r.sentence
    # half on the previous token, half on the token two back: no single habit, focused
    a = np.zeros((n, n))
    for i in range(n):
        a[i, max(i - 1, 0)] += 0.35
        a[i, max(i - 2, 0)] += 0.35
        a[i, i] += 0.30
    r = head_reading(a, TOKENS, SPECIAL)
    assert r.kind == "mixed" and "no single habit" in r.sentence


def test_default_model_layer1_has_a_previous_token_head(default_model):
    from analysis.attention import attention_for

    res = attention_for(default_model, "The pasta was superb, but the waiter ignored us.")
    enc = res.encoding
    kinds = [head_reading(res.attentions[l, h], enc.tokens, enc.special).kind
             for l in range(6) for h in range(12)]
    assert "prev" in kinds and {"sep", "cls"} & set(kinds)


def test_attention_reading_names_layer_and_head(default_model):
    from analysis.attention import attention_for

    res = attention_for(default_model, "The pasta was superb, but the waiter ignored us.")
    r = attention_reading(res, 2, 5)
    ref = head_reading(res.attentions[1, 4], res.encoding.tokens, res.encoding.special,
                       res.encoding.word_ids)
    assert r.shares == ref.shares and r.kind == ref.kind
    assert r.sentence.startswith("Layer 2, head 5 ")
    assert sum(v for k, v in r.shares.items() if k in ("prev", "next", "self")) <= 1 + 1e-6


def test_layer_and_model_readings_group_heads_by_habit():
    from types import SimpleNamespace

    from analysis.attention.reading import heads_table, layer_reading, model_reading

    prev = _map(lambda i, n: max(i - 1, 0))
    sep = _map(lambda i, n: n - 1)
    uniform = np.full((len(TOKENS), len(TOKENS)), 1 / len(TOKENS))
    # layer 1: heads 1 and 3 previous token, head 2 [SEP]; layer 2: head 1 broad, 2-3 [SEP]
    att = np.stack([np.stack([prev, sep, prev]), np.stack([uniform, sep, sep])])
    enc = SimpleNamespace(tokens=TOKENS, special=SPECIAL, word_ids=[None, 0, 1, 1, 2, 3, None])
    result = SimpleNamespace(attentions=att, encoding=enc)
    assert layer_reading(result, 1) == [
        "Heads 1 and 3 of layer 1 mostly look at the previous token (86% of their attention "
        "on average).",
        "Head 2 of layer 1 mostly looks at the separator token(s) ([SEP]) (100% of its "
        "attention on average)."]
    assert layer_reading(result, 2)[1] == \
        "Head 1 of layer 2 spreads attention broadly over the input."
    assert [(r["layer"], r["head"], r["kind"]) for r in heads_table(result, 2)] == \
        [(2, 1, "broad"), (2, 2, "sep"), (2, 3, "sep")]
    assert model_reading(result) == (
        "Of the 6 heads, on this input: 3 mostly look at the separator token(s) ([SEP]); "
        "2 mostly look at the previous token; 1 spreads attention broadly.")
