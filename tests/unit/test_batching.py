"""The one batcher and the padding of a batch (docs/METHODS.md section 1)."""

import random

import torch

from analysis.core.batching import batches, collate, pad_features
from analysis.core.encoding import encode


def test_length_sorted_batches_cover_every_index_once():
    assert batches([3, 9, 1, 9, 5], 2) == [[1, 3], [4, 0], [2]]


def test_ascending_batches_shortest_first():
    # shortest first; the smaller batch where it pads least: [1, 3] [5] [9, 9] pads 29 (as
    # [1] [3, 5] [9, 9]: a tie, the later place), [1, 3] [5, 9] [9] 33
    assert batches([3, 9, 1, 9, 5], 2, ascending=True) == [[2, 0], [4], [1, 3]]


def test_memory_budget_shrinks_batches_of_long_inputs():
    # 1 byte per token pair, budget 200 bytes: two maps padded to 10 tokens (2 x 100) fit,
    # three do not; a batch padded to 4 tokens (16 bytes a map) fills up to the batch size.
    mb = 200 / 2 ** 20
    assert batches([10, 4, 10, 10, 4, 4], 8, bytes_per_token_pair=1, max_batch_mb=mb) == [
        [0, 2], [3, 1], [4, 5]]
    assert batches([10, 4, 4, 4, 4], 8, bytes_per_token_pair=1, max_batch_mb=mb) == [
        [0, 1], [2, 3, 4]]
    # one example over the budget still forms a batch of its own
    assert batches([30, 2], 8, bytes_per_token_pair=1, max_batch_mb=mb) == [[0], [1]]


def test_training_batches_are_shuffled_buckets_sorted_by_length():
    lengths = [(7 * i) % 61 + 1 for i in range(50)]
    a = batches(lengths, 4, rng=random.Random(0), bucket_factor=5)
    b = batches(lengths, 4, rng=random.Random(0), bucket_factor=5)
    assert a == b  # the seed fixes the order
    assert sorted(i for batch in a for i in batch) == list(range(50))
    assert all(len(batch) <= 4 for batch in a)
    # within a batch lengths rise (each bucket of 20 is sorted before it is cut)
    assert all([lengths[i] for i in batch] == sorted(lengths[i] for i in batch) for batch in a)
    assert a != batches(lengths, 4, ascending=True)  # shuffled, not globally sorted


def test_collate_pads_with_the_pad_id_and_masks(default_model):
    tok = default_model.tokenizer
    encs = [encode(tok, "Good food."), encode(tok, "The waiter was slow.", "why ?")]
    batch = collate(tok, encs)
    n0, n1 = encs[0].n_tokens, encs[1].n_tokens
    assert batch["input_ids"].shape == (2, n1)
    assert batch["input_ids"][0, :n0].tolist() == encs[0].input_ids
    assert (batch["input_ids"][0, n0:] == tok.pad_token_id).all()
    assert batch["attention_mask"].sum(-1).tolist() == [n0, n1]
    assert batch["token_type_ids"][1, :n1].tolist() == encs[1].token_type_ids


def test_pad_features_pads_selected_rows(default_model):
    tok = default_model.tokenizer
    feats = tok(["a b c d e", "a"], ["x", "y"], truncation=True, max_length=16)
    out = pad_features(tok, feats, [1, 0])
    assert isinstance(out["input_ids"], torch.Tensor)
    assert out["attention_mask"].sum(-1).tolist() == [len(feats["input_ids"][1]),
                                                      len(feats["input_ids"][0])]


def test_the_smaller_batch_goes_where_it_pads_least():
    """Cut into full batches and one smaller one, placed where the padded tokens are fewest
    (the place of the smaller batch tried every way by hand); ties keep it last."""
    # longest first, batches of 2: [9, 9] [5, 3] [1] pads 29; [9] [9, 5] [3, 1] pads 33
    assert batches([3, 9, 1, 9, 5], 2) == [[1, 3], [4, 0], [2]]
    # one very long input: alone it pads 40 + 2 x 2 = 44; [40, 2] [2] pads 82
    assert batches([2, 40, 2], 2) == [[1], [0, 2]]
    assert batches([2, 40, 2], 2, ascending=True) == [[0, 2], [1]]
    rng = random.Random(0)
    for _ in range(300):
        n, b = rng.randint(1, 30), rng.randint(1, 7)
        lengths = [rng.randint(1, 50) for _ in range(n)]
        got = batches(lengths, b)
        assert sorted(i for g in got for i in g) == list(range(n))
        assert len(got) == -(-n // b) and all(len(g) <= b for g in got)
        pad = lambda gs: sum(len(g) * max(lengths[i] for i in g) for g in gs)  # noqa: E731
        order = sorted(range(n), key=lambda i: (-lengths[i], i))
        r = n % b
        cuts = [[order[:r]] + [order[k:k + b] for k in range(r, n, b)]] if r else []
        for j in range(n // b + 1):  # the smaller batch before full batch j
            head, tail = order[:j * b], order[j * b + r:]
            cuts.append([head[k:k + b] for k in range(0, len(head), b)] + [order[j * b:j * b + r]]
                        + [tail[k:k + b] for k in range(0, len(tail), b)])
        assert pad(got) == min(pad([g for g in c if g]) for c in cuts)
