"""Payload sizes for the view benchmarks and tests (not used by the app)."""

from __future__ import annotations

import json
from typing import Sequence

import numpy as np


def payload_size(payload: dict) -> int:
    """Bytes of the JSON Streamlit sends for ``payload`` (``json.dumps`` as it serialises
    component data)."""
    return len(json.dumps(payload).encode("utf-8"))


def full_json_size(maps: np.ndarray, labels: Sequence[str]) -> int:
    """Bytes of every layer's and head's map as full-precision JSON floats plus the labels:
    what an uncompressed view (BertViz-style) sends."""
    return len(json.dumps({"attn": np.asarray(maps, dtype=np.float32).tolist(),
                           "labels": list(labels)}).encode("utf-8"))
