"""Reading no-op statistics: the sentences and tables follow the numbers (docs/METHODS.md
section 3)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.noop import CorpusStats, noop_heads, positional_heads, reading


def _synthetic_stats(cls, sep):
    L, H = cls.shape
    z = np.zeros((L, H))
    metrics = {"cls": cls, "sep": sep, "punct": z + 0.05, "self": z + 0.1, "prev": z.copy(),
               "next": z.copy(),
               "entropy": z + 1.0, "entropy_cls": z + 1.5}
    return CorpusStats(model="m", n_layers=L, n_heads=H, n_examples=3, n_truncated=0,
                       n_tokens=30, metrics=metrics, uniform_entropy=2.3)


def test_reading_and_tables_follow_the_numbers():
    cls = np.array([[0.1, 0.05], [0.1, 0.1]])
    sep = np.array([[0.2, 0.1], [0.7, 0.6]])
    st = _synthetic_stats(cls, sep)
    st.metrics["next"][0, 1] = 0.6
    lines = reading(st, "ToyBERT")
    assert lines[0].startswith("In ToyBERT the main attention sink is [SEP], not [CLS]")
    assert "40% of attention goes to [SEP] and 9% to [CLS]" in lines[0]
    assert lines[1].startswith("In layer 2 more than half")
    assert "0 head(s) put more than half their attention on the previous token and 1" in lines[3]
    top = noop_heads(st, top=2)
    assert [(r["layer"], r["head"]) for r in top] == [(2, 1), (2, 2)]
    assert top[0]["to [CLS]+[SEP]"] == pytest.approx(0.8)
    assert positional_heads(st) == [{"layer": 1, "head": 2, "direction": "next", "share": 0.6}]
    d = st.to_json_dict(["cls", "sep"])
    assert d["metrics"]["sep"] == [[0.2, 0.1], [0.7, 0.6]] and d["n_examples"] == 3
