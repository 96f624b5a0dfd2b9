"""Encoding, word pooling, special tokens and segment filters: exact values on hand-made maps
and the default model's tokenizer on real sentences (docs/METHODS.md section 1)."""

import numpy as np
import pytest

from analysis.core.maps import attention_for
from analysis.core.encoding import clean_text, drop_specials, encode, encode_corpus, word_level
from analysis.core.errors import DataError, InputError

HAND = np.array([
    [0.10, 0.20, 0.30, 0.40],
    [0.25, 0.25, 0.25, 0.25],
    [0.00, 0.50, 0.50, 0.00],
    [1.00, 0.00, 0.00, 0.00],
], dtype=np.float32)


def test_word_level_sums_to_columns_and_means_rows():
    # tokens 1 and 2 are pieces of one word
    w = word_level(HAND, [0, 1, 1, 2])
    expected = np.array([[0.1, 0.5, 0.4], [0.125, 0.75, 0.125], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(w, expected, atol=1e-7)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)


def test_word_level_keeps_leading_axes():
    stacked = np.stack([HAND, HAND[::-1]])[None]  # [1, 2, 4, 4]
    w = word_level(stacked, [0, 0, 1, 1])
    assert w.shape == (1, 2, 2, 2)
    # first map: to word0 = cols 0+1, from word0 = mean rows 0,1
    np.testing.assert_allclose(w[0, 0, 0], [(0.3 + 0.5) / 2, (0.7 + 0.5) / 2], atol=1e-7)


def test_drop_specials_renormalises_rows():
    sub = drop_specials(HAND, np.array([False, True, True, False]))
    np.testing.assert_allclose(sub, [[0.5, 0.5], [0.5, 0.5]], atol=1e-7)


def test_drop_specials_row_with_no_mass_left_is_zero_not_nan():
    m = np.array([[0, 1.0], [0.5, 0.5]], dtype=np.float32)
    sub = drop_specials(m, np.array([True, False]))
    assert sub.tolist() == [[0.0]]


# The head view's segment filter (segmentAllows in ui/common/attention/frontend/heads.js), as a
# matrix.


def segment_mask(segments: np.ndarray, which: str) -> np.ndarray:
    """Boolean [T, T] mask of the (query, key) cells a segment filter keeps."""
    seg = np.asarray(segments)
    a, b = seg == 0, seg == 1
    table = {
        "All": np.ones((len(seg), len(seg)), dtype=bool),
        "A->A": np.outer(a, a), "B->B": np.outer(b, b),
        "A->B": np.outer(a, b), "B->A": np.outer(b, a),
    }
    if which not in table:
        raise InputError(f"Unknown segment filter {which!r}; use one of {', '.join(table)}.")
    return table[which]


def test_segment_mask_blocks():
    seg = np.array([0, 0, 1])
    assert segment_mask(seg, "A->B").tolist() == [[False, False, True], [False, False, True],
                                                 [False, False, False]]
    assert segment_mask(seg, "B->A").tolist() == [[False, False, False], [False, False, False],
                                                 [True, True, False]]
    assert segment_mask(seg, "All").all()
    with pytest.raises(InputError):
        segment_mask(seg, "C->D")


@pytest.mark.parametrize("bad", ["", "   ", "\u200b\u200b", None])
def test_empty_text_is_refused(bad):
    with pytest.raises(InputError, match="empty"):
        clean_text(bad)


def test_invisible_characters_are_removed_with_a_notice():
    text, notes = clean_text("good\u200b food\u200f")
    assert text == "good food"
    assert "2 invisible" in notes[0]


def test_pair_segments_and_specials(default_model):
    enc = encode(default_model.tokenizer, "The food was great.", "what about the food ?")
    assert enc.tokens[0] == "[CLS]" and enc.tokens.count("[SEP]") == 2
    first_sep = enc.tokens.index("[SEP]")
    assert enc.segments[: first_sep + 1].tolist() == [0] * (first_sep + 1)
    assert enc.segments[first_sep + 1:].tolist() == [1] * (enc.n_tokens - first_sep - 1)
    assert enc.special.tolist() == [t in ("[CLS]", "[SEP]") for t in enc.tokens]


@pytest.fixture(scope="module")
def bpe_tokenizer():
    """A tiny fast tokenizer with RoBERTa's framing (<s> A </s></s> B </s>)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "a": 4, "b": 5, "c": 6}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>",
                                   sep_token="</s>", cls_token="<s>", unk_token="<unk>",
                                   pad_token="<pad>")


def test_roberta_double_separator_splits_between_segments(bpe_tokenizer):
    enc = encode(bpe_tokenizer, "a b", "c")
    assert enc.tokens == ["<s>", "a", "b", "</s>", "</s>", "c", "</s>"]
    # A ends with the first </s>; the second one opens B
    assert enc.segments.tolist() == [0, 0, 0, 0, 1, 1, 1]
    assert enc.words == ["<s>", "a", "b", "</s>", "</s>", "c", "</s>"]


def test_unknown_token_is_content_not_special(default_model):
    enc = encode(default_model.tokenizer, "pizza \U0001F355")
    unk = enc.tokens.index("[UNK]")
    assert not enc.special[unk]


def test_words_group_wordpieces_with_original_spelling(default_model):
    enc = encode(default_model.tokenizer, "The Unbelievably tasty food")
    assert enc.words == ["[CLS]", "The", "Unbelievably", "tasty", "food", "[SEP]"]
    pieces = [t for t, w in zip(enc.tokens, enc.word_ids) if w == 2]
    assert pieces == ["un", "##bel", "##ie", "##va", "##bly"]


def test_emoji_and_rtl_text_are_analysed_with_notice(default_model):
    r = attention_for(default_model, "I love \U0001F355 and \u05e9\u05dc\u05d5\u05dd")
    assert "[UNK]" in r.encoding.tokens
    assert any("unknown" in n for n in r.encoding.notices)
    np.testing.assert_allclose(r.attentions.sum(-1), 1.0, atol=1e-5)


def test_long_input_is_truncated_with_notice(default_model):
    r = attention_for(default_model, "word " * 700)
    assert r.encoding.n_tokens == 512 and r.encoding.truncated
    assert r.encoding.n_tokens_full == 702
    assert "truncated" in r.encoding.notices[-1]
    assert r.attentions.shape == (6, 12, 512, 512)


def test_encode_corpus_skips_unreadable_and_caps_encoded_examples(default_model):
    tok = default_model.tokenizer
    c = encode_corpus(tok, ["Good food.", "\u200b", "Slow service.", "Nice view."],
                      ["", None, "why ?", None], labels=["a", "b", "c", "d"], max_examples=2)
    assert [e.text for e in c.encodings] == ["Good food.", "Slow service."]
    assert c.rows == [0, 2] and c.labels == ["a", "c"] and c.skipped == 1
    assert c.encodings[0].pair is None and c.pairs == [None, "why ?"]
    with pytest.raises(DataError, match="The corpus is empty"):
        encode_corpus(tok, ["", "   ", "\u200b"])


def test_far_too_long_text_is_cut_before_tokenising_with_the_same_tokens(default_model):
    """A text over max_length * CHARS_PER_TOKEN characters is cut at a space before the
    tokenizer sees it: the kept tokens are those of the full text, and the notice gives the
    full length estimated."""
    from analysis.core.encoding import CHARS_PER_TOKEN

    tok = default_model.tokenizer
    text = "The soup was cold , but the bread was fresh and warm . " * 800  # 44,800 chars
    assert len(text) > 512 * CHARS_PER_TOKEN
    enc = encode(tok, text)
    assert enc.input_ids == tok(text.strip(), truncation=True, max_length=512)["input_ids"]
    assert len(enc.text) < len(text) // 10  # only a prefix was tokenised
    exact = len(tok(text.strip())["input_ids"])
    assert enc.truncated and abs(enc.n_tokens_full - exact) <= 0.02 * exact
    assert enc.notices[-1] == (f"The input has about {enc.n_tokens_full} tokens "
                               f"({len(text.strip())} "
                               "characters); it was truncated to the model's maximum of 512.")
    # a pair: one long part, or both (the longer one keeps the odd token, as without the cut)
    short = "what about the soup ?"
    for a, b, ml in ((text, short, 512), (short, text, 512), (text, text[: len(text) // 2], 128),
                     (text[: len(text) // 2], text, 129)):
        enc = encode(tok, a, b, max_length=ml)
        ref = tok(a.strip(), b.strip(), truncation=True, max_length=ml)
        assert enc.input_ids == ref["input_ids"]
        assert int(enc.segments.sum()) == sum(1 for s in ref.sequence_ids() if s == 1) + 1


def test_a_giant_word_is_read_only_up_to_a_ceiling(default_model):
    enc = encode(default_model.tokenizer, "a" * 2_000_000)
    assert enc.tokens == ["[CLS]", "[UNK]", "[SEP]"]
    assert enc.notices[-1] == ("The input has 2000000 characters; only its first 524288 were "
                               "tokenised (it has words or runs of spaces too long to be worth "
                               "reading further).")
