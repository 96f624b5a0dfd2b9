"""Head view / model view payloads: exact contents, sparsification, pooling, size."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from analysis.attention.views import (
    VIEWS_BUDGET,
    head_view_payload,
    heatmap_payload,
    kept_keys,
    model_view_payload,
    pool_map,
    views_payload,
)
from bench.references.attention import full_json_size, payload_size

ROOT = Path(__file__).resolve().parents[2]
XSS = "<img src=x onerror=alert(1)>"

REVIEW_A = (
    "The pasta was cooked perfectly and the sauce tasted fresh, but the waiter forgot our "
    "drinks twice and the bill took almost half an hour to arrive. The dining room is small "
    "and loud on weekends, although the decor is charming and the prices are fair for the "
    "neighbourhood."
)
REVIEW_B = (
    "what do you think of the service of it ? I would come back for the food alone , "
    "since the kitchen clearly cares about ingredients , yet the staff seemed overwhelmed "
    "and nobody checked on our table after the mains were served , which spoiled an "
    "otherwise lovely evening with friends from out of town ; still , we will tell everyone "
    "we know about the friendly owner and the wonderful homemade desserts that closed the meal "
    "on a high note"
)


# What the views draw: the inverse of the payload encoding (the JavaScript does the same).


def _unb64(text: str, dtype) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype)


def decode_head_payload(payload: dict) -> np.ndarray:
    """The ``[H, n, n]`` float map a head view draws (dropped cells are 0)."""
    n_heads, n = payload["n_heads"], payload["n"]
    weights = _unb64(payload["weights"], np.uint8).astype(np.float32) / payload["scale"]
    if payload["encoding"] == "dense":
        return weights.reshape(n_heads, n, n)
    counts = _unb64(payload["counts"], "<u2").astype(np.int64)
    keys = _unb64(payload["keys"], "<u2").astype(np.int64)
    rows = np.repeat(np.arange(n_heads * n), counts)
    out = np.zeros((n_heads * n, n), dtype=np.float32)
    out[rows, keys] = weights
    return out.reshape(n_heads, n, n)


def decode_model_payload(payload: dict) -> np.ndarray:
    """The ``[L, H, s, s]`` float thumbnails a model view draws."""
    q = _unb64(payload["thumbs"], np.uint8).astype(np.float32) / payload["scale"]
    s = payload["size"]
    return q.reshape(payload["n_layers"], payload["n_heads"], s, s)


def random_maps(shape, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.random(shape).astype(np.float32) ** 3
    return m / m.sum(-1, keepdims=True)


def pair_with_n_tokens(tokenizer, n):
    """A real review + auxiliary-sentence pair whose encoding has exactly n tokens."""
    from analysis.core.encoding import encode

    words_b = REVIEW_B.split()
    for k in range(len(words_b), 0, -1):
        enc = encode(tokenizer, REVIEW_A, " ".join(words_b[:k]))
        if enc.n_tokens == n:
            return enc
    raise AssertionError(f"no prefix of REVIEW_B gives {n} tokens")


# ---------------------------------------------------------------------------------------------
# head view


def test_dense_payload_round_trips_within_one_step():
    maps = random_maps((3, 7, 7))
    labels = ["[CLS]", XSS, "&amp;", "caf\u00e9", "\u05e9\u05dc\u05d5\u05dd", "x", "[SEP]"]
    segments = np.array([0, 0, 0, 0, 1, 1, 1], dtype=np.int8)
    special = np.array([1, 0, 0, 0, 0, 0, 1], dtype=bool)
    p = head_view_payload(labels, maps, segments, special, layer=4, is_pair=True)
    assert p["encoding"] == "dense"
    assert (p["layer"], p["n_heads"], p["n"], p["is_pair"]) == (4, 3, 7, True)
    # labels are data: passed through exactly, never escaped
    assert p["labels"] == labels
    assert p["segments"] == [0, 0, 0, 0, 1, 1, 1]
    assert p["special"] == [1, 0, 0, 0, 0, 0, 1]
    decoded = decode_head_payload(p)
    assert decoded.shape == (3, 7, 7)
    assert np.abs(decoded - maps).max() <= 0.5 / 255 + 1e-6
    # the wire format is JSON: it survives a round trip unchanged
    assert json.loads(json.dumps(p)) == p


def test_quantisation_of_known_weights():
    maps = np.array([[[1.0, 0.0], [0.25, 0.75]]], dtype=np.float32)
    p = head_view_payload(["a", "b"], maps, [0, 0], [False, False], layer=0, is_pair=False)
    q = np.frombuffer(__import__("base64").b64decode(p["weights"]), np.uint8)
    assert q.tolist() == [255, 0, 64, 191]  # round(0.25*255)=64, round(0.75*255)=191


def test_top_k_keeps_exactly_the_k_largest_per_row():
    # two heads, 4 tokens, distinct weights: the kept keys are known by hand
    maps = np.array([
        [[0.1, 0.4, 0.2, 0.3], [0.7, 0.1, 0.15, 0.05], [0.25, 0.25, 0.1, 0.4],
         [0.0, 0.0, 0.9, 0.1]],
        [[0.5, 0.3, 0.15, 0.05], [0.05, 0.05, 0.6, 0.3], [0.2, 0.3, 0.45, 0.05],
         [0.3, 0.3, 0.3, 0.1]],
    ], dtype=np.float32)
    keep = kept_keys(maps, top_k=2)
    expected = {
        (0, 0): {1, 3}, (0, 1): {0, 2}, (0, 2): {3, 0},  # tie 0.25/0.25: lower index wins
        (0, 3): {2, 3}, (1, 0): {0, 1}, (1, 1): {2, 3}, (1, 2): {2, 1}, (1, 3): {0, 1},
    }
    for (h, i), keys in expected.items():
        assert set(np.flatnonzero(keep[h, i])) == keys, (h, i)
    p = head_view_payload(list("abcd"), maps, np.zeros(4), np.zeros(4, bool), layer=1,
                          is_pair=False, top_k=2)
    decoded = decode_head_payload(p)
    assert ((decoded > 0) | keep).sum() == keep.sum()  # nothing outside the kept cells
    assert np.allclose(decoded[keep], maps[keep], atol=0.5 / 255 + 1e-6)


@pytest.mark.parametrize("k", [1, 2, 5, 11, 12])
def test_top_k_mask_is_the_stable_sorts_first_k(k):
    """top_k_mask names the cells a stable sort of -values puts first, on 8-bit weights with
    many ties (values 0-3 in rows of 12), float maps, and rows that are all one value."""
    from analysis.attention.views import top_k_mask

    rng = np.random.default_rng(k)
    for values in (rng.integers(0, 4, size=(3, 7, 12)).astype(np.uint8),
                   rng.random((2, 5, 12)).astype(np.float32),
                   np.full((2, 3, 12), 7, dtype=np.uint8)):
        order = np.argsort(-values.astype(np.float64), axis=-1, kind="stable")[..., :k]
        expected = np.zeros(values.shape, dtype=bool)
        np.put_along_axis(expected, order, True, axis=-1)
        got = top_k_mask(values, k)
        assert (got == expected).all()
        assert (got.sum(-1) == k).all()


def test_sparse_encoding_for_long_input():
    n, k = 200, 5
    maps = random_maps((4, n, n), seed=1)
    p = head_view_payload([f"t{i}" for i in range(n)], maps, np.zeros(n), np.zeros(n, bool),
                          layer=0, is_pair=False, top_k=k)
    assert p["encoding"] == "sparse"
    assert p["n_edges"] == 4 * n * k
    decoded = decode_head_payload(p)
    kept = decoded > 0
    assert (kept.sum(-1) <= k).all()
    # every row keeps its k strongest keys: compare with numpy's partition
    for h in range(4):
        for i in (0, 57, 199):
            strongest = set(np.argsort(-maps[h, i], kind="stable")[:k])
            assert set(np.flatnonzero(kept[h, i])) <= strongest
            row = np.zeros(n, np.float32)
            row[list(strongest)] = maps[h, i, list(strongest)]
            assert np.abs(decoded[h, i] - row).max() <= 0.5 / 255 + 1e-6
    # far smaller than the dense form of the same layer
    dense = head_view_payload([f"t{i}" for i in range(n)], maps, np.zeros(n), np.zeros(n, bool),
                              layer=0, is_pair=False)
    assert payload_size(p) < payload_size(dense) / 4


def test_threshold_keeps_weights_at_or_above():
    maps = np.array([[[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]]], dtype=np.float32)
    keep = kept_keys(maps, threshold=0.3)
    assert keep.astype(int).tolist() == [[[1, 1, 0], [0, 0, 1], [1, 1, 1]]]
    both = kept_keys(maps, top_k=1, threshold=0.3)
    assert both.astype(int).tolist() == [[[1, 0, 0], [0, 0, 1], [0, 0, 1]]]
    p = head_view_payload(list("abc"), maps, [0, 0, 1], [0, 0, 0], layer=0, is_pair=True,
                          threshold=0.3)
    assert np.allclose(decode_head_payload(p), np.where(keep, maps, 0), atol=0.5 / 255 + 1e-6)


def test_head_payload_rejects_mismatched_input():
    maps = random_maps((2, 3, 3))
    with pytest.raises(ValueError, match="labels has 2 entries"):
        head_view_payload(["a", "b"], maps, [0, 0, 0], [0, 0, 0], layer=0, is_pair=False)
    with pytest.raises(ValueError, match="one layer"):
        head_view_payload(list("abc"), maps[None], [0, 0, 0], [0, 0, 0], layer=0, is_pair=False)
    with pytest.raises(ValueError, match="top_k"):
        head_view_payload(list("abc"), maps, [0, 0, 0], [0, 0, 0], layer=0, is_pair=False,
                          top_k=0)
    with pytest.raises(ValueError, match="highlight positions must lie in 0..2"):
        head_view_payload(list("abc"), maps, [0, 0, 0], [0, 0, 0], layer=0, is_pair=False,
                          highlight=[1, 3])


def test_highlight_is_sorted_unique_positions():
    maps = random_maps((2, 4, 4))
    p = head_view_payload(list("abcd"), maps, [0] * 4, [0] * 4, layer=0, is_pair=False,
                          highlight=[3, 1, 3])
    assert p["highlight"] == [1, 3]
    assert head_view_payload(list("abcd"), maps, [0] * 4, [0] * 4, layer=0,
                             is_pair=False)["highlight"] == []


# ---------------------------------------------------------------------------------------------
# model view


def test_model_view_thumbnails_are_block_maxima():
    m = np.arange(16, dtype=np.float32).reshape(4, 4) / 100.0
    maps = np.stack([m, m.T])[None]  # [1 layer, 2 heads, 4, 4]
    p = model_view_payload(maps, max_size=2)
    assert (p["n_layers"], p["n_heads"], p["n"], p["size"], p["pool"]) == (1, 2, 4, 2, "max")
    thumbs = decode_model_payload(p)
    # blocks {0,1}x{0,1}, {0,1}x{2,3}, ... : maxima 0.05, 0.07, 0.13, 0.15
    assert np.allclose(thumbs[0, 0], [[0.05, 0.07], [0.13, 0.15]], atol=0.5 / 255 + 1e-6)
    assert np.allclose(thumbs[0, 1], [[0.05, 0.13], [0.07, 0.15]], atol=0.5 / 255 + 1e-6)


def test_model_view_uneven_blocks_and_small_maps():
    m = np.arange(25, dtype=np.float32).reshape(5, 5)
    # 5 cells into 2 bins: rows/cols {0,1} and {2,3,4}
    assert pool_map(m, 2, "max").tolist() == [[6.0, 9.0], [21.0, 24.0]]
    assert pool_map(m, 2, "mean").tolist() == [[3.0, 5.5], [15.5, 18.0]]
    small = random_maps((2, 3, 6, 6))
    p = model_view_payload(small, max_size=32)
    assert p["size"] == 6 and p["pool"] == "none"
    assert np.abs(decode_model_payload(p) - small).max() <= 0.5 / 255 + 1e-6


def test_model_view_of_512_tokens_is_small():
    maps = random_maps((6, 12, 512, 512), seed=2)
    p = model_view_payload(maps, max_size=32)
    assert p["size"] == 32
    assert payload_size(p) < 110_000  # 6*12*32*32 bytes, base64
    assert np.allclose(decode_model_payload(p)[3, 5], pool_map(maps[3, 5], 32),
                       atol=0.5 / 255 + 1e-6)


# ---------------------------------------------------------------------------------------------
# what is sent


def test_payload_size_is_the_json_streamlit_sends():
    from streamlit.components.v2.bidi_component.serialization import serialize_mixed_data
    from streamlit.proto.BidiComponent_pb2 import BidiComponent

    maps = random_maps((2, 5, 5))
    p = head_view_payload([XSS, "b", "c", "d", "e"], maps, np.zeros(5), np.zeros(5, bool),
                          layer=0, is_pair=False)
    proto = BidiComponent()
    serialize_mixed_data(p, proto)
    assert proto.WhichOneof("data") == "json"
    assert payload_size(p) == len(proto.json.encode("utf-8"))


def test_128_token_pair_payload_is_under_two_percent_of_full_json(default_model):
    from analysis.core.forward import forward

    enc = pair_with_n_tokens(default_model.tokenizer, 128)
    att = forward(default_model.model, default_model.tokenizer, [enc]).maps(0)
    assert att.shape == (6, 12, 128, 128)
    p = head_view_payload(enc.tokens, att[2], enc.segments, enc.special, layer=2, is_pair=True)
    assert p["encoding"] == "dense"
    assert np.abs(decode_head_payload(p) - att[2]).max() <= 0.5 / 255 + 1e-6
    full = full_json_size(att, enc.tokens)  # every layer and head as floats (BertViz-style)
    assert full > 10_000_000
    assert payload_size(p) <= 0.02 * full
    # the page's long-input setting (5 strongest keys per query) is smaller still
    sparse = head_view_payload(enc.tokens, att[2], enc.segments, enc.special, layer=2,
                               is_pair=True, top_k=5)
    assert sparse["encoding"] == "sparse"
    assert payload_size(sparse) <= 0.005 * full
    assert payload_size(model_view_payload(att)) <= 0.01 * full


def test_components_receive_the_payload_unchanged():
    from streamlit.testing.v1 import AppTest

    def app():
        import numpy as np
        import streamlit as st

        from analysis.attention.views import head_view_payload, model_view_payload
        from ui.common.attention.views import head_view, model_view

        m = np.array([[[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]], dtype=np.float32)
        p = head_view_payload(["<img src=x onerror=alert(1)>", "a", "[SEP]"], m,
                              np.array([0, 0, 1]), np.array([0, 0, 1], bool), layer=2,
                              is_pair=True)
        st.session_state["sent"] = p
        st.session_state["head_state"] = head_view(p, key="hv", heads=[0], pin=1)
        st.session_state["clicked"] = model_view(model_view_payload(m[None]), key="mv")

    at = AppTest.from_function(app, default_timeout=60)
    at.run()
    assert not at.exception
    comps = at.get("bidi_component")
    assert [c.proto.component_name for c in comps] == ["attention_head_view",
                                                        "attention_model_view"]
    head = json.loads(comps[0].proto.json)
    assert head["ui"] == {"heads": [0], "pin": {"side": "from", "index": 1}}
    assert {k: v for k, v in head.items() if k != "ui"} == at.session_state["sent"]
    assert head["labels"][0] == "<img src=x onerror=alert(1)>"
    model = json.loads(comps[1].proto.json)
    assert model["view"] == "model" and model["size"] == 3
    # no interaction yet: no state, no click
    assert at.session_state["head_state"] is None
    assert at.session_state["clicked"] is None
    # the JS and CSS ship with the component (offline: nothing is fetched from the web)
    js = comps[0].proto.js_content
    dist = ROOT / "ui" / "common" / "attention" / "frontend" / "dist"
    assert js == (dist / "head_view_single.js").read_text(encoding="utf-8")  # the committed one
    assert "export default headViewMain;" in (dist.parent / "head_view_single.js").read_text()
    assert "http" not in js.replace("http://www.w3.org/2000/svg", "")
    assert comps[0].proto.css_content.strip()


def test_frontend_never_parses_text_as_html():
    paths = sorted((ROOT / "ui" / "common" / "attention" / "frontend").glob("*.js"))
    paths += sorted((ROOT / "ui" / "common" / "attention" / "frontend" / "dist").glob("*.js"))
    assert len(paths) >= 10, "the frontend modules moved: this test would check nothing"
    for path in paths:
        src = path.read_text(encoding="utf-8")
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                     "eval(", "new Function"):
            assert sink not in src, f"{path.name} uses {sink}"
        # no remote resources: the views work offline
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", src), path.name


# ---------------------------------------------------------------------------------------------
# every layer at once (the Attention page's component)


def decode_views_payload(payload: dict) -> np.ndarray:
    """The ``[L, H, n, n]`` float maps the component draws (cells not sent are 0)."""
    n_layers, n_heads, n = payload["n_layers"], payload["n_heads"], payload["n"]
    out = np.zeros((n_layers, n_heads * n, n), dtype=np.float32)
    for l, layer in enumerate(payload["layers"]):
        w = _unb64(layer["weights"], np.uint8).astype(np.float32) / payload["scale"]
        if payload["encoding"] == "dense":
            out[l] = w.reshape(n_heads * n, n)
            continue
        counts = _unb64(layer["counts"], "<u2").astype(np.int64)
        keys = _unb64(layer["keys"], "<u2").astype(np.int64)
        assert counts.sum() == keys.size == w.size == layer["n_edges"]
        out[l, np.repeat(np.arange(n_heads * n), counts), keys] = w
    return out.reshape(n_layers, n_heads, n, n)


def test_views_payload_dense_round_trips_every_layer():
    maps = random_maps((3, 4, 6, 6), seed=5)
    labels = ["[CLS]", XSS, "if", "\\'\"", "{x}", "[SEP]"]
    p = views_payload(labels, maps, np.array([0, 0, 0, 1, 1, 1]), np.array([1, 0, 0, 0, 0, 1]),
                      is_pair=True)
    assert (p["view"], p["encoding"], p["top_k"]) == ("views", "dense", None)
    assert (p["n_layers"], p["n_heads"], p["n"]) == (3, 4, 6)
    assert p["labels"] == labels and len(p["layers"]) == 3
    decoded = decode_views_payload(p)
    assert np.abs(decoded - maps).max() <= 0.5 / 255 + 1e-6
    # the thumbnails are the model view's, every layer
    assert p["thumbs"] == model_view_payload(maps)["thumbs"]
    assert json.loads(json.dumps(p)) == p
    # the digest follows the content: another map, another digest
    other = views_payload(labels, maps[::-1], np.zeros(6), np.zeros(6, bool), is_pair=True)
    assert other["digest"] != p["digest"]


def test_views_payload_sparse_keeps_each_rows_strongest_keys_within_budget():
    n = 60
    maps = random_maps((2, 3, n, n), seed=6)
    budget = 20_000
    p = views_payload([f"t{i}" for i in range(n)], maps, np.zeros(n), np.zeros(n, bool),
                      is_pair=False, budget=budget)
    assert p["encoding"] == "sparse"
    k = p["top_k"]
    assert 1 <= k < n
    assert payload_size(p) <= budget
    # the largest k that fits: one more key per row would not
    bigger = views_payload([f"t{i}" for i in range(n)], maps, np.zeros(n), np.zeros(n, bool),
                           is_pair=False, budget=payload_size(p) + 1000)
    assert bigger["top_k"] in (k, k + 1)
    decoded = decode_views_payload(p)
    q = np.rint(maps * 255)
    for l in range(2):
        for h in range(3):
            for i in (0, 31, n - 1):
                kept = np.flatnonzero(decoded[l, h, i])
                # exactly the k largest (stable on ties, lower key first), weights to 0.5/255
                strongest = np.argsort(255 - q[l, h, i], kind="stable")[:k]
                strongest = strongest[q[l, h, i, strongest] > 0]
                assert set(kept) == set(strongest), (l, h, i)
                assert (np.abs(decoded[l, h, i, kept] - maps[l, h, i, kept]).max()
                        <= 0.5 / 255 + 1e-6)


def test_views_payload_of_a_512_token_pair_is_under_two_megabytes(default_model):
    from analysis.attention import attention_for

    a = REVIEW_A + " " + REVIEW_A + " " + REVIEW_A
    b = " ".join([REVIEW_B] * 5)  # longer than the model takes: truncated to 512
    res = attention_for(default_model, a, b)
    enc = res.encoding
    assert enc.n_tokens == 512 and enc.is_pair
    p = views_payload(enc.tokens, res.attentions, enc.segments, enc.special, is_pair=True)
    size = payload_size(p)
    assert size <= VIEWS_BUDGET == 2_000_000
    assert p["encoding"] == "sparse" and p["top_k"] >= 8  # still a useful number of keys
    full = full_json_size(res.attentions, enc.tokens)  # BertViz-style floats of every layer
    assert size <= 0.01 * full
    decoded = decode_views_payload(p)
    kept = decoded > 0
    assert np.abs(decoded[kept] - res.attentions[kept]).max() <= 0.5 / 255 + 1e-6
    # in every layer, head and row, no dropped key outweighs a kept one (8-bit weights)
    q = np.rint(res.attentions * 255)
    assert (np.where(kept, q, 256).min(-1) >= np.where(kept, -1, q).max(-1)).all()
    assert (kept.sum(-1) <= p["top_k"]).all() and kept.any(-1).mean() > 0.99


def test_heatmap_payload_scales_to_the_maps_maximum():
    m = np.array([[0.0, 0.05, 0.1], [0.025, 0.075, 0.0], [0.1, 0.1, 0.1]])
    p = heatmap_payload(["a", "<b>", "c"], m, layer=2, head=4)
    assert (p["layer"], p["head"], p["n"], p["max"]) == (2, 4, 3, 0.1)
    q = _unb64(p["weights"], np.uint8)
    assert q.tolist() == [0, 128, 255, 64, 191, 0, 255, 255, 255]  # round(w / 0.1 * 255)
    drawn = q.reshape(3, 3) * p["max"] / 255
    assert np.abs(drawn - m).max() <= 0.5 * p["max"] / 255 + 1e-9
    with pytest.raises(ValueError):
        heatmap_payload(["a", "b"], m, layer=0, head=0)
