"""analysis.representations.states: every layer's token vectors from the one forward, the
one-token and different-shape refusals, UPOS of treebank words and ABSA roles by hand."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.absa.data import to_dataset
from analysis.core.errors import InputError
from analysis.core.forward import forward
from analysis.core.models import load_model
from analysis.representations.states import (absa_words, check_same_shape, encode_input,
                                             input_states, marked, treebank_words)
from analysis.syntax.treebank import make_treebank


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return load_model(str(tiny_model_dir("bert")))


def test_input_states_are_the_forward_hidden_states(tiny):
    st = input_states(tiny, "The soup was cold.", "soup")
    enc = st.encoding
    assert st.layers.shape == (3, enc.n_tokens, 32)  # embeddings + 2 layers
    fw = forward(tiny.model, tiny.tokenizer, [enc], attentions=False, hidden_states=True)
    for l in range(3):
        np.testing.assert_array_equal(st.layers[l], fw.hidden_states[l][0].numpy())
    assert st.tokens[:3] == ["[CLS]", "the", "soup"]
    assert st.contexts()[2] == "[CLS] The «soup» was cold . [SEP] soup [SEP]"


def test_one_token_and_different_shapes_are_refused(tiny, default_model):
    with pytest.raises(InputError, match="one token"):
        encode_input(tiny, "Hello")
    with pytest.raises(InputError) as exc:
        check_same_shape(default_model, tiny)
    assert str(exc.value) == ("The models have different shapes (6 layers of 384 numbers "
                              "against 2 layers of 32), so their vectors cannot share one "
                              "projection.")
    check_same_shape(tiny, tiny)


def test_marked_wraps_one_word_in_a_window():
    assert marked(["a", "<b>x</b>", "c"], 1) == "a «<b>x</b>» c"
    words = [str(i) for i in range(30)]
    assert marked(words, 15, window=2) == "... 13 14 «15» 16 17 ..."
    assert marked(words, 0, window=2) == "«0» 1 2 ..."
    assert marked(words, 29, window=2) == "... 27 28 «29»"


def test_treebank_words_keep_upos_and_sentences(tiny):
    ds = make_treebank({"id": ["1", "2"], "words": [["Dogs", "bark", "."], ["Cats", "sleep"]],
                        "heads": [[2, 0, 2], [2, 0]], "deprels": [["nsubj", "root", "punct"],
                                                                  ["nsubj", "root"]],
                        "upos": [["NOUN", "VERB", "PUNCT"], ["NOUN", "VERB"]]})
    w = treebank_words(tiny, ds)
    assert w.forms == ["Dogs", "bark", ".", "Cats", "sleep"]
    assert w.labels["upos"] == ["NOUN", "VERB", "PUNCT", "NOUN", "VERB"]
    assert list(w.groups) == [0, 0, 0, 1, 1]
    assert len(w.layers) == 3 and w.layers[0].shape == (5, 32)
    assert w.context(4) == "Cats «sleep»"


def test_absa_roles_by_hand(tiny):
    text = "The pasta was superb but the waiter ignored us."
    row = {"id": "1", "text": text, "source": "sample",
           "terms": [{"term": "pasta", "start": 4, "end": 9, "category": "food",
                      "polarity": "positive",
                      "opinions": [{"word": "superb", "start": 14, "end": 20}]},
                     {"term": "waiter", "start": 29, "end": 35, "category": "service",
                      "polarity": "negative",
                      "opinions": [{"word": "ignored", "start": 36, "end": 43}]}],
           "categories": [{"category": "food", "polarity": "positive"},
                          {"category": "service", "polarity": "negative"}]}
    w = absa_words(tiny, to_dataset([row]))
    words = ["The", "pasta", "was", "superb", "but", "the", "waiter", "ignored", "us", "."]
    assert w.forms == words * 2  # one pair per present category: food, then service
    roles = dict(zip(words, w.labels["role"][:10]))
    assert (roles["pasta"], roles["superb"], roles["waiter"], roles["ignored"]) == \
        ("aspect", "opinion", "other aspect", "other")
    service = dict(zip(words, w.labels["role"][10:]))
    assert (service["waiter"], service["ignored"], service["pasta"]) == \
        ("aspect", "opinion", "other aspect")
    assert w.labels["aspect"][:10].count("aspect term") == 1
    assert list(w.groups) == [0] * 20 and w.n_sentences == 1
    assert w.context(1).startswith("The «pasta» was") and w.context(1).endswith("(asked: food)")
