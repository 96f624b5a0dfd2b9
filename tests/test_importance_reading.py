"""The plain reading (analysis.importance.reading) of a planted result."""

from __future__ import annotations

import numpy as np

from analysis.importance.reading import beyond_interval, reading
from analysis.importance.run import ImportanceResult


def planted() -> ImportanceResult:
    ch = np.zeros((2, 3))
    ch[1, 2] = -8.0  # hurts
    ch[0, 1] = 2.5  # helps
    ch[0, 0] = -0.5  # hurts a little, within its interval
    ci = np.stack([ch - 1.0, ch + 1.0], -1)
    loss = -ch / 100
    return ImportanceResult(
        "accuracy", "mask", ("accuracy", "loss"), "the 40 labelled examples of the data", 40,
        40, {"accuracy": 80.0, "loss": 0.5}, {"accuracy": ch, "loss": loss},
        {"accuracy": ci, "loss": np.stack([loss - 0.01, loss + 0.01], -1)},
        {"accuracy": np.array([-1.0, -12.0]), "loss": np.array([0.0, 0.2])},
        {"accuracy": np.zeros((2, 2)), "loss": np.zeros((2, 2))},
        np.ones((2, 3)), np.ones((2, 3)) / np.sqrt(3), {"accuracy": 0.82, "loss": 0.1},
        {"fractions": [0.0, 0.5], "prunable": {"by_importance": 0.5, "by_gradient": 0.0,
                                                "random_mean": 0.0}, "tolerance": 1.0})


def test_reading_names_the_numbers():
    r = planted()
    hurt, helped = beyond_interval(r)
    assert [(h[0], h[1]) for h in hurt] == [(1, 2)] and [(h[0], h[1]) for h in helped] == [(0, 1)]
    text = reading(r, aspect=[(1, 2), (0, 2)], sep=[(0, 1)])
    assert "intact model's accuracy is 80.0" in text[0] and "output set to zero" in text[0]
    assert text[1].startswith("4 of the 6 heads can go one at a time without any loss")
    assert "1 hurt beyond the 95% interval" in text[1] and "and 1 help" in text[1]
    assert "head 2-3 (-8.0 points), head 1-1 (-0.5 points)" in text[2]
    assert "layer 2 costs most (-12.0 points)" in text[3] and "every layer is needed" in text[3]
    assert "50% of the heads can go" in text[4] and "random orders 0%" in text[4]
    assert "strongly agrees" in text[5] and "0.82" in text[5]
    assert "aspect heads (Aspect heads page) 2-3 (-8.0 points), 1-3 (+0.0 points): 1 of them" \
        in text[6]
    assert "[SEP] heads (No-op statistics) 1-2 (+2.5 points): none of them" in text[7]
