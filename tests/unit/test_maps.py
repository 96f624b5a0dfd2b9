"""One input's maps (analysis.core.maps, core; the Attention study's first step) on the default
model:
maps of real sentences, and the word-level view without special tokens (docs/METHODS.md
section 1)."""

import numpy as np

from analysis.core.maps import attention_for, level_view
from analysis.core.encoding import word_level


def test_default_model_rows_sum_to_one_on_real_sentence(default_model):
    r = attention_for(default_model, "The waiter was rude, but the sushi was fresh.",
                      "what do you think of the service of it ?")
    assert r.attentions.shape[:2] == (6, 12)
    assert r.attentions.dtype == np.float32
    np.testing.assert_allclose(r.attentions.sum(-1), 1.0, atol=1e-5)
    assert (r.attentions >= 0).all()


def test_level_view_word_without_specials(default_model):
    r = attention_for(default_model, "Unbelievably tasty food.", "what about food ?")
    labels, maps, seg, special = level_view(r, "word", hide_special=True)
    assert labels == ["Unbelievably", "tasty", "food", ".", "what", "about", "food", "?"]
    assert seg.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert not special.any()
    np.testing.assert_allclose(maps.sum(-1), 1.0, atol=1e-5)
    # word level equals pooling the token map by hand for one head
    enc = r.encoding
    w = word_level(r.attentions[2, 3], enc.word_ids)
    keep = [i for i, lab in enumerate(enc.words) if lab not in ("[CLS]", "[SEP]")]
    sub = w[np.ix_(keep, keep)]
    np.testing.assert_allclose(maps[2, 3], sub / sub.sum(-1, keepdims=True), atol=1e-6)
