"""The attention component's payloads of the embedded default model on a real sentence pair, as
the pages make them (token and word level, the long-input heatmap too), satisfy the one
contract (analysis/attention/payload_spec.py) in the Python check and in the JavaScript check;
with any required key taken out, both refuse them with the same sentence."""

from __future__ import annotations

import shutil

import pytest

from analysis.attention import attention_for, level_view
from analysis.attention import payload_spec as spec
from attention_payloads import js_problems, producer_payloads, without_each_required_key
from ui.common.attention.contract import payload_problem

TEXT = "The pasta was excellent, but the waiter ignored us for half an hour."
PAIR = "How was the service?"


@pytest.fixture(scope="module")
def page_payloads(default_model):
    res = attention_for(default_model, TEXT, PAIR)
    assert res.attentions.shape[:2] == (6, 12) and res.encoding.is_pair
    out = []
    for level, hide in (("token", False), ("word", True)):
        labels, maps, segments, special = level_view(res, level, hide)
        out += producer_payloads(labels, maps, segments, special, is_pair=True)
    return out


def test_the_default_models_payloads_satisfy_the_contract(page_payloads):
    assert len(page_payloads) == 12
    for kind, payload in page_payloads:
        assert payload_problem(payload, kind) is None, (kind, payload_problem(payload, kind))
    token_views = page_payloads[0][1]
    n = token_views["n"]
    assert (token_views["n_layers"], token_views["n_heads"]) == (6, 12)
    assert token_views["labels"][0] == "[CLS]" and "pasta" in token_views["labels"]
    assert token_views["segments"][-1] == 1 and token_views["special"][0] == 1
    assert len(token_views["labels"]) == n and token_views["encoding"] == "dense"
    assert page_payloads[1][1]["encoding"] == "sparse" and page_payloads[1][1]["top_k"] < n
    word_views = page_payloads[6][1]
    assert "[CLS]" not in word_views["labels"] and word_views["n"] < n
    assert {k for k, _ in page_payloads} == set(spec.PAYLOADS)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_accepts_them_and_refuses_each_missing_key_as_python_does(page_payloads):
    cases = page_payloads + [(k, p) for k, _, p in without_each_required_key(page_payloads)]
    got = js_problems(cases)
    assert got[:12] == [None] * 12
    assert got == [payload_problem(p, k) for k, p in cases]
    assert got[12] == "The payload of analysis.attention.views.views_payload lacks n_layers."
