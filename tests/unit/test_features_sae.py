"""The features study's arithmetic without a model: the dictionary's exact encoding and file
format, the trainer on planted sparse data, the crosscoder's shares and Latent Scaling, the
browser's alignment and contexts (docs/METHODS.md section 17)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.core.errors import DataError
from analysis.features.activations import Tokens
from analysis.features.browser import Codes, alignment, contexts, histogram, label, per_token
from analysis.features.crosscoder import (Crosscoder, latent_scaling, norm_share, share_class,
                                          spurious, train_crosscoder)
from analysis.features.sae import SAE, sparsify
from analysis.features.train import (TrainSettings, activation_scale, default_epochs,
                                     default_m, train_sae)


def hand_sae(**kw) -> SAE:
    """d = 3, m = 4: W_enc columns pick x0, x1, -x2 and x0 + x1; b_enc = [0, 0, 0, -1]."""
    W_enc = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, -1, 0]], np.float32)
    W_dec = np.array([[1, 0, 0], [0, 1, 0], [0, 0, -1], [0.5, 0.5, 0]], np.float32)
    args = dict(k=2, layer=1, activation="topk", pre_bias=True, scale=2.0)
    args.update(kw)
    return SAE(W_enc, np.array([0, 0, 0, -1], np.float32), W_dec,
               np.array([0.5, 0, 0], np.float32), **args)


def test_encoding_is_topk_relu_of_the_scaled_centred_input():
    sae = hand_sae()
    x = np.array([[1.0, 2.0, -0.5]], np.float32)
    # x * 2 - b_dec = [1.5, 4, -1]; pre = [1.5, 4, 1, 5.5 - 1 = 4.5]; top-2 of relu: 4.5, 4
    np.testing.assert_allclose(sae.pre_activations(x), [[1.5, 4.0, 1.0, 4.5]])
    np.testing.assert_allclose(sae.encode(x), [[0.0, 4.0, 0.0, 4.5]])
    # decode = z @ W_dec + b_dec = [0.5 + 2.25, 4 + 2.25, 0] (scaled); reconstruct / 2
    np.testing.assert_allclose(sae.decode(sae.encode(x)), [[2.75, 6.25, 0.0]])
    np.testing.assert_allclose(sae.reconstruct(x), [[1.375, 3.125, 0.0]])
    relu = hand_sae(activation="relu", pre_bias=False, scale=1.0)
    np.testing.assert_allclose(relu.encode(x), [[1.0, 2.0, 0.5, 2.0]])


def test_sparsify_breaks_ties_by_the_lower_feature():
    np.testing.assert_array_equal(sparsify(np.array([[1.0, 3.0, 3.0, -2.0]]), 1),
                                  [[0, 3.0, 0, 0]])
    np.testing.assert_array_equal(sparsify(np.array([[-1.0, -3.0]]), 1), [[0, 0]])


def test_files_hold_the_four_tensors_and_the_card(tmp_path):
    from safetensors.numpy import load_file

    sae = hand_sae(card={"fve": 0.9, "corpus": "x", "seed": 3, "nan": float("nan")})
    sae.save(tmp_path / "d")
    tensors = load_file(str(tmp_path / "d" / "sae.safetensors"))
    assert {n: tuple(t.shape) for n, t in tensors.items()} == {
        "W_enc": (3, 4), "b_enc": (4,), "W_dec": (4, 3), "b_dec": (3,)}
    card = json.loads((tmp_path / "d" / "card.json").read_text())
    assert {k: card[k] for k in ("layer", "k", "m", "d", "activation", "pre_bias", "scale",
                                  "fve", "corpus", "seed")} == {
        "layer": 1, "k": 2, "m": 4, "d": 3, "activation": "topk", "pre_bias": True,
        "scale": 2.0, "fve": 0.9, "corpus": "x", "seed": 3}
    assert card["nan"] is None  # strict JSON
    back = SAE.load(tmp_path / "d")
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    np.testing.assert_array_equal(back.encode(x), sae.encode(x))
    sae.save(tmp_path / "h", "float16")
    assert load_file(str(tmp_path / "h" / "sae.safetensors"))["W_enc"].dtype == np.float16


def test_a_damaged_folder_is_one_line(tmp_path):
    with pytest.raises(DataError, match="not a dictionary folder"):
        SAE.load(tmp_path)
    hand_sae().save(tmp_path / "d")
    (tmp_path / "d" / "sae.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(DataError, match="not a safetensors file"):
        SAE.load(tmp_path / "d")
    bad = hand_sae()
    bad.k = 9
    with pytest.raises(DataError, match="k must be from 1 to 4"):
        bad.check()


def planted(n: int, d: int = 16, atoms: int = 24, active: int = 3, seed: int = 0):
    """Tokens that are sums of ``active`` of ``atoms`` unit directions with positive
    coefficients (a dictionary a top-k SAE can find)."""
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(atoms, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    codes = np.zeros((n, atoms))
    for i in range(n):
        codes[i, rng.choice(atoms, active, replace=False)] = rng.uniform(1, 2, active)
    return (codes @ D).astype(np.float32), D


def test_training_finds_a_planted_dictionary_seeded():
    x, atoms = planted(3000)
    s = TrainSettings(m=24, k=3, epochs=40, batch_size=256, seed=1)
    sae = train_sae(x[:2500], 2, s)
    held = x[2500:]
    err = ((held - sae.reconstruct(held)) ** 2).sum() / ((held - held.mean(0)) ** 2).sum()
    assert 1 - err > 0.85  # measured 0.905
    assert (np.abs(sae.W_dec @ atoms.T).max(1) > 0.9).mean() >= 0.8  # 22 of 24 atoms found
    assert ((sae.encode(x) > 0).sum(0) == 0).mean() <= 0.1  # few dead features
    np.testing.assert_allclose(np.linalg.norm(sae.W_dec, axis=1), 1.0, atol=1e-5)
    again = train_sae(x[:2500], 2, s)
    np.testing.assert_array_equal(again.W_enc, sae.W_enc)  # seeded: the same weights
    assert sae.card["training"]["m"] == 24 and sae.layer == 2


def test_scale_and_default_size():
    x = np.array([[3.0, 4.0], [0.0, 10.0]])  # norms 5 and 10
    assert activation_scale(x) == pytest.approx(np.sqrt(2) / 7.5)
    assert default_m(384, 20_000) == 768 and default_m(384, 200_000) == 3072
    assert default_m(384, 1_000) == 384
    assert (default_epochs(12_665), default_epochs(42_500), default_epochs(500_000)) == (
        30, 9, 5)  # the example's training tokens, 50,000 less 15%, a large corpus


def test_norm_shares_and_classes():
    norms = np.array([[1.0, 1.0, 0.05, 1.0], [1.0, 0.0, 1.0, 0.5]])
    np.testing.assert_allclose(norm_share(norms), [0.5, 0.0, 0.975, 0.25])
    assert [share_class(v) for v in norm_share(norms)] == [
        "shared", "base-only", "fine-tuned-only", "leaning base"]


def test_latent_scaling_flags_a_direction_the_base_also_has():
    """Latent 0 lives only in the fine-tuned decoder, but the base activations hold the same
    direction, unexplained (Complete Shrinkage): nu_eps = 1. Latent 1 is the fine-tuned
    model's alone (the base holds nothing of it): both ratios 0."""
    d = 2
    cc = Crosscoder(W_enc=np.array([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]]),
                    b_enc=np.zeros(2), W_dec=np.array([[[0.0, 0.0], [0.0, 0.0]],
                                                       [[1.0, 0.0], [0.0, 1.0]]]),
                    b_dec=np.zeros((2, d)), scales=(1.0, 1.0), k=1, theta=0.0, layer=1)
    xa = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 0.0]])
    xb = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])
    out = latent_scaling(cc, xa, xb, [0, 1])
    assert out[0]["nu_eps"] == pytest.approx(1.0) and out[0]["own"] == 1
    assert out[0]["nu_r"] == pytest.approx(0.0)
    assert out[1]["nu_eps"] == pytest.approx(0.0) and out[1]["nu_r"] == pytest.approx(0.0)
    assert spurious(out[0]) == "complete shrinkage" and spurious(out[1]) is None


def test_crosscoder_finds_the_fine_tuned_models_own_directions():
    """Shared atoms in both models; 6 extra atoms only in the fine-tuned model's tokens."""
    rng = np.random.default_rng(0)
    n, d = 3000, 16
    shared = rng.normal(size=(12, d))
    extra = rng.normal(size=(6, d))
    cs = (rng.random((n, 12)) < 0.15) * rng.uniform(1, 2, (n, 12))
    ce = (rng.random((n, 6)) < 0.15) * rng.uniform(1, 2, (n, 6))
    xa = (cs @ shared).astype(np.float32)
    xb = (cs @ shared + ce @ extra).astype(np.float32)
    cc = train_crosscoder(xa, xb, 1, m=36, k=4, epochs=40, batch_size=256, seed=0)
    r = norm_share(cc.norms())
    f = cc.encode(xa, xb)
    alive = (f > 0).any(0)
    ft = np.flatnonzero((r > 0.9) & alive)
    assert len(ft) >= 4  # most of the 6 added directions have latents of their own
    cos = np.abs((cc.W_dec[1, ft] / np.linalg.norm(cc.W_dec[1, ft], axis=1, keepdims=True))
                 @ (extra / np.linalg.norm(extra, axis=1, keepdims=True)).T).max(1)
    assert (cos > 0.8).mean() >= 0.75  # ... pointing along them (measured: all 6 > 0.86)
    assert (np.abs(r[alive] - 0.5) < 0.2).sum() >= 8  # and the shared atoms are shared


def tiny_codes() -> Codes:
    tokens = Tokens(np.array([0, 0, 0, 1, 1], np.int32), np.array([0, 1, 2, 0, 1], np.int32),
                    ["[CLS]", "good", "food", "[CLS]", "bad"],
                    np.array([1, 0, 0, 1, 0], bool), np.zeros(5, bool))
    z = np.array([[0, 0], [2.0, 0], [1.0, 0.5], [0, 0], [3.0, 0]], np.float32)
    return Codes(z, tokens)


def test_alignment_precision_recall_by_hand():
    fires = np.array([1, 1, 0, 1, 0, 0], bool)
    upos = ["ADJ", "ADJ", "ADJ", "NOUN", "NOUN", "_"]
    rows = alignment(fires, {"upos": upos}, min_support=1)
    adj = next(r for r in rows if r["label"] == "ADJ")
    assert (adj["precision"], adj["recall"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    noun = next(r for r in rows if r["label"] == "NOUN")
    assert (noun["precision"], noun["recall"]) == (pytest.approx(1 / 3), 0.5)
    assert rows[0]["label"] == "ADJ"
    assert label(["good"], rows).startswith("upos = ADJ")


def test_contexts_one_per_input_peak_first_and_histogram():
    c = tiny_codes()
    ctx = contexts(c, 0)
    assert [(x["example"], x["position"], x["activation"]) for x in ctx] == [
        (1, 1, 3.0), (0, 1, 2.0)]
    assert ctx[1]["tokens"] == ["[CLS]", "good", "food"] and ctx[1]["peak"] == 1
    assert ctx[1]["acts"] == [0.0, 2.0, 1.0] and ctx[1]["special"] == [True, False, False]
    h = histogram(c.z[:, 0], bins=3)
    assert h["counts"] == [0, 1, 2] and h["edges"][-1] == 3.0  # [0, 1), [1, 2), [2, 3]


def test_per_token_lists_strongest_first():
    sae = hand_sae()
    view = per_token(sae, np.array([[1.0, 2.0, -0.5]], np.float32), ["tok"])
    assert view == {"tokens": ["tok"], "features": [[{"feature": 3, "activation": 4.5},
                                                     {"feature": 1, "activation": 4.0}]]}


def test_the_reading_of_before_and_after():
    from analysis.features.reading import diff_lines

    base = {"classes": {"fine-tuned-only": 0, "base-only": 0, "shared": 9,
                        "leaning fine-tuned": 1, "leaning base": 0},
            "fve": {"base": 0.8, "after": 0.85}}
    lean = {"latent": 7, "side": "after", "class": "leaning fine-tuned", "share": 0.8,
            "label": "'good'", "nu_eps": 0.1, "nu_r": 0.2, "spurious": None}
    lines = diff_lines({**base, "latents": [lean]})
    assert lines[0].startswith("Of the crosscoder's live latents, 0 are the fine-tuned")
    assert "No latent belongs to the fine-tuned model alone" in lines[1]
    assert "#7 (80%): 'good'" in lines[1] and "calls #7 genuine" in lines[1]
    own = {**lean, "class": "fine-tuned-only", "share": 0.95}
    spur = {**own, "latent": 8, "spurious": "complete shrinkage", "label": "'bad'"}
    lines = diff_lines({**base, "latents": [own, spur]})
    assert "1 of the 2 fine-tuned-only latents" in lines[1]
    assert lines[2] == "What fine-tuning added: latents that fire on #7: 'good'."
