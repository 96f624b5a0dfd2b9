"""Treebank words -> Encoding: one word per treebank word, [CLS]/[SEP] as words of their own,
byte-level BPE words with a prefix space, unknown and too-long sentences, tokenizers that cannot
split words (docs/METHODS.md section 10, "Words")."""

from __future__ import annotations

import types

import numpy as np
import pytest

from analysis.core.encoding import word_level
from analysis.core.errors import DataError, InputError
from analysis.syntax.treebank import make_treebank
from analysis.syntax.words import (CANNOT_SPLIT, SentenceTooLong, encode_treebank, encode_words,
                                   needs_prefix_space)


@pytest.fixture(scope="module")
def wordpiece():
    from transformers import AutoTokenizer

    from analysis.core.models import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())


@pytest.fixture(scope="module")
def bytelevel(tmp_path_factory):
    """A RoBERTa tokenizer over a byte-level BPE trained here (no download)."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizer

    folder = tmp_path_factory.mktemp("bpe")
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(["the cat sat on the mat", "a dog barked at the cat"] * 20,
                            vocab_size=300, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(folder))
    return RobertaTokenizer(vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt"))


def test_wordpiece_words_and_word_ids(wordpiece):
    enc = encode_words(wordpiece, ["Don't", "go", "naïve", "!"], 512)
    assert enc.tokens == ["[CLS]", "don", "'", "t", "go", "naive", "!", "[SEP]"]
    assert enc.word_ids == [0, 1, 1, 1, 2, 3, 4, 5]
    assert enc.words == ["[CLS]", "Don't", "go", "naïve", "!", "[SEP]"]
    assert enc.special.tolist() == [True] + [False] * 6 + [True]
    assert enc.token_type_ids == [0] * 8 and enc.text == "Don't go naïve !"
    assert not needs_prefix_space(wordpiece)
    # word level over [CLS] + words + [SEP]: "Don't" = mean of 3 rows, sum of 3 columns
    A = np.random.default_rng(0).random((8, 8))
    A /= A.sum(1, keepdims=True)
    W = word_level(A, enc.word_ids)
    assert W.shape == (6, 6)
    assert W[1, 2] == pytest.approx(A[1:4, 4].mean())
    assert W[2, 1] == pytest.approx(A[4, 1:4].sum())


def test_word_without_pieces_reads_as_unknown(wordpiece):
    enc = encode_words(wordpiece, ["a", "\u200b", "b"], 512)
    assert enc.tokens == ["[CLS]", "a", "[UNK]", "b", "[SEP]"]
    assert enc.word_ids == [0, 1, 2, 3, 4]
    assert enc.words[2] == "\u200b"


def test_bytelevel_words_get_a_prefix_space(bytelevel):
    assert needs_prefix_space(bytelevel)
    enc = encode_words(bytelevel, ["the", "cat", "sat"], 512)
    pieces = bytelevel.convert_ids_to_tokens(enc.input_ids)
    assert pieces[0] == "<s>" and pieces[-1] == "</s>"
    assert pieces[1:4] == ["\u0120the", "\u0120cat", "\u0120sat"]  # word starts, not middles
    assert enc.tokens[1:4] == ["the", "cat", "sat"]
    assert enc.word_ids == [0, 1, 2, 3, 4]
    assert enc.token_type_ids is None and enc.words == ["<s>", "the", "cat", "sat", "</s>"]


def test_too_long_and_empty(wordpiece):
    with pytest.raises(SentenceTooLong, match="has 7 tokens; this model reads at most 6"):
        encode_words(wordpiece, ["one", "two", "three", "four", "five"], 6)
    assert isinstance(SentenceTooLong("x"), InputError)
    with pytest.raises(InputError, match="no words"):
        encode_words(wordpiece, [], 512)


class NoWordIds:
    """A tokenizer whose encodings have no word ids (slow tokenizers): pieces are matched to
    words by their counts."""

    def __init__(self, tok):
        self.tok = tok
        self.unk_token = tok.unk_token
        self.model_input_names = tok.model_input_names
        self.all_special_ids = tok.all_special_ids
        self.unk_token_id, self.mask_token_id = tok.unk_token_id, tok.mask_token_id

    def __call__(self, *a, **k):
        out = self.tok(*a, **k)
        return {"input_ids": out["input_ids"]}

    def __getattr__(self, name):
        return getattr(self.tok, name)


def test_tokenizer_without_word_ids(wordpiece):
    enc = encode_words(NoWordIds(wordpiece), ["Don't", "\u200b", "go"], 512)
    ref = encode_words(wordpiece, ["Don't", "\u200b", "go"], 512)
    assert enc.word_ids == ref.word_ids == [0, 1, 1, 1, 2, 3, 4]
    assert enc.input_ids == ref.input_ids


def test_tokenizer_that_cannot_split_words(wordpiece):
    class Refuses(NoWordIds):
        def __call__(self, *a, **k):
            if k.get("is_split_into_words"):
                raise ValueError("pre-tokenized input is not supported")
            return super().__call__(*a, **k)

    with pytest.raises(InputError, match="cannot read pre-split words") as err:
        encode_words(Refuses(wordpiece), ["a", "b"], 512)
    assert str(err.value).startswith(CANNOT_SPLIT) and "\n" not in str(err.value)


def test_encode_treebank_skips_and_counts(wordpiece):
    ds = make_treebank({"id": ["a", "b", "c"],
                        "words": [["a", "b"], ["a"] * 20, ["c"]],
                        "heads": [[2, 0], [0] + [1] * 19, [0]],
                        "deprels": [["dep", "root"], ["root"] + ["dep"] * 19, ["root"]],
                        "upos": [["X", "X"], ["X"] * 20, ["X"]]})
    loaded = types.SimpleNamespace(tokenizer=wordpiece, max_length=10)
    enc = encode_treebank(loaded, ds)
    assert len(enc) == 2 and enc.rows == [0, 2] and enc.skipped == 1 and enc.ids == ["a", "c"]
    assert enc.heads == [[2, 0], [0]] and "Skipped 1 sentence(s) longer" in enc.notes[0]
    assert len(encode_treebank(loaded, ds, max_sentences=1)) == 1
    with pytest.raises(DataError, match="No sentence of the treebank fits"):
        encode_treebank(types.SimpleNamespace(tokenizer=wordpiece, max_length=2), ds)
