"""analysis.syntax.layered (issue 48): every layer's structural probe of one kind trained in one
loop gives each layer the map it gets alone (the old one-probe-at-a-time training is
bench/references/syntax.py) to float32's rounding (to the bit at the default model's shapes:
docs/METHODS.md section 20), stopping at the same epoch; and the evaluation's faster MST and
ranks are scipy's."""

from __future__ import annotations


import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.stats import rankdata

from analysis.syntax.layered import _Gather, _Sentences, losses, train_layers
from analysis.syntax.trees import average_ranks, mst_edges, tree_depths, tree_distances

from bench.references import syntax as reference_syntax


def _random_tree(rng, n):
    heads = [0] * n
    order = rng.permutation(n)
    for k in range(1, n):
        heads[order[k]] = int(order[rng.integers(0, k)]) + 1
    return heads


def test_layers_together_equal_each_layer_alone():
    rng = np.random.default_rng(0)
    trees = [_random_tree(rng, int(rng.integers(3, 9))) for _ in range(40)]
    lengths = [len(h) for h in trees]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    depth = np.concatenate([tree_depths(h) for h in trees]).astype(np.float32)
    # three layers: the depth written into a few dimensions at growing strengths, noise around
    layers = [(rng.normal(size=(offsets[-1], 12)) + k * depth[:, None] * (np.arange(12) < 3))
              .astype(np.float32) for k in (0.0, 0.5, 2.0)]
    kw = dict(rank=3, seed=2, max_epochs=8, patience=2, lr=0.01, batch_size=5, decay=0.1)
    for kind, targets in (("distance", [tree_distances(h) for h in trees]),
                          ("depth", [tree_depths(h) for h in trees])):
        together = train_layers(layers, offsets, targets, kind, **kw)
        for l, got in enumerate(together):
            alone = reference_syntax._train(
                [layers[l][offsets[s]:offsets[s + 1]] for s in range(len(trees))], targets,
                kind, **kw)
            np.testing.assert_allclose(got.B, alone.B, atol=1e-6, err_msg=f"{kind} {l}")
            assert got.epochs == alone.epochs
            assert abs(got.stop_loss - alone.stop_loss) < 1e-6
        assert len({t.epochs for t in together}) > 1 or kind == "distance"


def test_written_out_gradient_is_autograds():
    """The training's gradient, written out (no autograd), is autograd's gradient of the
    reference losses (a padded batch, bench/references/syntax.py) for both kinds, on a batch of
    sentences of different lengths and three layers; the losses are the reference's too."""
    import torch

    rng = np.random.default_rng(3)
    trees = [_random_tree(rng, n) for n in (1, 4, 7, 5, 2)]
    offsets = np.concatenate([[0], np.cumsum([len(h) for h in trees])]).astype(np.int64)
    X = [torch.as_tensor(rng.normal(size=(offsets[-1], 6)), dtype=torch.float64)
         for _ in range(3)]
    P = torch.as_tensor(rng.normal(size=(3, 4, 6)), dtype=torch.float64)
    idx = [3, 0, 1, 4]  # a batch in the order the batches come: not the corpus's
    for kind, targets in (("distance", [tree_distances(h) for h in trees]),
                          ("depth", [tree_depths(h) for h in trees])):
        bt = _Sentences(offsets, targets, kind).batch(idx)
        bt.tb, bt.lengths = bt.tb.double(), bt.lengths.double()
        if bt.mask is not None:
            bt.mask = bt.mask.double()
        per, grad = losses(P, _Gather(X)(bt.rows, [0, 1, 2]), bt, kind, grad=True)
        n_max = max(len(trees[i]) for i in idx)
        tb = torch.zeros((len(idx), n_max, n_max) if kind == "distance"
                         else (len(idx), n_max), dtype=torch.float64)
        mask = torch.zeros((len(idx), n_max), dtype=torch.float64)
        for b, i in enumerate(idx):
            n = len(trees[i])
            tb[(b, slice(0, n), slice(0, n))[:tb.dim()]] = torch.as_tensor(targets[i])
            mask[b, :n] = 1.0
        for a in range(3):
            xb = torch.zeros((len(idx), n_max, 6), dtype=torch.float64)
            for b, i in enumerate(idx):
                xb[b, :len(trees[i])] = X[a][offsets[i]:offsets[i + 1]]
            B = P[a].clone().requires_grad_()
            ref = reference_syntax._losses(B, xb, tb, mask, mask.sum(-1), kind)
            ref.mean().backward()
            np.testing.assert_allclose(per[a].numpy(), ref.detach().numpy(), rtol=1e-12)
            np.testing.assert_allclose(grad[a].numpy(), B.grad.numpy(), rtol=1e-10,
                                       atol=1e-12, err_msg=f"{kind} layer {a}")
            assert float(B.grad.abs().max()) > 0.1


def test_mst_and_ranks_are_scipys():
    rng = np.random.default_rng(1)
    for _ in range(100):
        n = int(rng.integers(2, 30))
        x = rng.normal(size=(n, 4))
        D = ((x[:, None] - x[None]) ** 2).sum(-1)
        iu = np.triu_indices(n, 1)
        M = np.zeros((n, n))
        v = D[iu]
        M[iu] = (v - v.min()) / max(np.ptp(v), 1e-300) + 1.0
        tree = minimum_spanning_tree(M).tocoo()
        assert mst_edges(D) == sorted((int(min(i, j)), int(max(i, j)))
                                      for i, j in zip(tree.row, tree.col))
        ties = rng.integers(0, 4, size=(int(rng.integers(1, 5)), n)).astype(float)
        assert np.array_equal(average_ranks(ties), rankdata(ties, axis=-1))
    tied = np.array([[0, 1, 1, 2], [1, 0, 1, 2], [1, 1, 0, 1], [2, 2, 1, 0]], dtype=float)
    assert len(mst_edges(tied)) == 3  # ties: scipy's tree, as before
