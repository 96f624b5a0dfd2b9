"""Payloads of every maker of analysis.attention.views and the JavaScript's check of them, for
the tests of the payload contract (tests/unit/test_attention_contract.py and
tests/integration/test_attention_payload_default_model.py)."""

from __future__ import annotations

import json
import subprocess
import shutil
from pathlib import Path

import numpy as np

from analysis.attention import payload_spec as spec
from analysis.attention.views import (head_view_payload, heatmap_payload, model_view_payload,
                                      views_payload)

CHECK_JS = Path(__file__).resolve().parent / "js" / "check_payload.mjs"


def js_problems(cases: list[tuple[str, dict]]) -> list[str | None]:
    """The JavaScript's checkPayload of each (kind, payload), in one Node process."""
    run = subprocess.run([shutil.which("node"), str(CHECK_JS)], input=json.dumps(cases),
                         capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def _maps(layers=2, heads=3, n=20, seed=0) -> np.ndarray:
    m = np.random.default_rng(seed).random((layers, heads, n, n)).astype(np.float32)
    return m / m.sum(-1, keepdims=True)


def _tokens(n=20):
    return ([f"t{i}" for i in range(n)], np.array([0] * (n // 2) + [1] * (n - n // 2)),
            np.array([True] + [False] * (n - 2) + [True]))


def producer_payloads(labels, maps, segments, special, *, is_pair=True) -> list[tuple]:
    """(kind, payload) of every maker of analysis.attention.views, dense and sparse."""
    n = maps.shape[-1]
    views = views_payload(labels, maps, segments, special, is_pair=is_pair)
    sparse = views_payload(labels, maps, segments, special, is_pair=is_pair,
                           budget=len(json.dumps(views)) - 800)
    heat = heatmap_payload(labels, maps[-1, 0], layer=maps.shape[0] - 1, head=0)
    head = dict(labels=labels, maps=maps[1], segments=segments, special=special, layer=1,
                is_pair=is_pair)
    # the Attention page's long-input heatmap (pages/attention.py): no layers, no thumbnails
    only_heatmap = {k: v for k, v in views.items() if k not in ("layers", "thumbs")}
    return [("views", views), ("views", {**sparse, "heatmap": heat}),
            ("head", head_view_payload(**head, highlight=[1, n - 2])),
            ("head", head_view_payload(**head, top_k=2)),
            ("model", model_view_payload(maps, max_size=4)),
            ("views", {**only_heatmap, "heatmap": heat})]


def hand_made_payloads() -> list[tuple]:
    """:func:`producer_payloads` of 20 tokens (a pair, [CLS] and [SEP] special) and random
    maps of 2 layers x 3 heads."""
    return producer_payloads(*_tokens()[:1], _maps(), *_tokens()[1:])


def without_each_required_key(payloads):
    """(kind, the missing key, the payload without it) for each key after view and version that
    the payload must have (a views payload with a heatmap may leave out layers and thumbs)."""
    for kind, payload in payloads:
        for f in spec.PAYLOADS[kind].fields[2:]:
            if f.required and (f.unless is None or payload.get(f.unless) is None):
                yield kind, f.name, {k: v for k, v in payload.items() if k != f.name}
