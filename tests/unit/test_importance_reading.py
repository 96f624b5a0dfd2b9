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
        {"accuracy": np.array([[-2.5, 0.5], [-14.0, -10.0]]),
         "loss": np.array([[-0.01, 0.01], [0.15, 0.25]])},
        np.ones((2, 3)), np.ones((2, 3)) / np.sqrt(3), {"accuracy": 0.82, "loss": 0.1},
        {"fractions": [0.0, 0.5, 1.0], "prunable": {"by_importance": 0.5, "by_gradient": 0.0,
                                                "random_mean": 0.0}, "tolerance": 1.0})


def test_reading_names_the_numbers():
    r = planted()
    hurt, helped = beyond_interval(r)
    assert [(h[0], h[1]) for h in hurt] == [(1, 2)] and [(h[0], h[1]) for h in helped] == [(0, 1)]
    text = reading(r, aspect=[(1, 2), (0, 2)], sep=[(0, 1)])
    assert "intact model's accuracy is 80.0" in text[0] and "output set to zero" in text[0]
    assert text[1].startswith("One at a time, 5 of the 6 heads can go with no loss beyond "
                              "noise (the change's 95% interval reaches zero; 4 show no loss")
    assert "1 hurt beyond the 95% interval" in text[1] and "and 1 help" in text[1]
    # each head as the Head atlas states it (analysis.atlas.facts.head_statement)
    assert text[2] == ("Removing these hurts most: head 2-3 (output zeroed: -8.0 points of "
                       "accuracy, 95% -9.0 to -7.0); head 1-1 (output zeroed: -0.5 points of "
                       "accuracy, 95% -1.5 to +0.5, within noise).")
    assert text[3] == ("Switching off a whole layer: layer 2 costs most (-12.0 points, 95% "
                       "-14.0 to -10.0); 1 of 2 layers can go with no loss beyond noise.")
    assert text[4].startswith("Removed together, in the order of the measured changes, 50% of "
                              "the heads (3 of 6) can go before the model loses more than 1 "
                              "point of accuracy")
    assert "random orders 0%" in text[4]
    assert "That is fewer than the 5 heads that can go one at a time" in text[4]
    r2 = planted()
    r2.pruning["prunable"]["by_importance"] = 1.0  # the curve's last step: nothing lost
    last = reading(r2)[4]
    assert "100% of the heads (6 of 6) can go" in last
    assert last.endswith("The curve never lost more than 1 point up to its last step (100%).")
    assert "fewer than" not in last
    assert "strongly agrees" in text[5] and "0.82" in text[5]
    assert "its output zeroed: that sets what the head writes to zero" in text[6]
    assert "They disagree" not in text[6]  # the other method is not at hand
    assert text[7].startswith("The top-ranked aspect heads (Aspect heads page, ranked on the "
                              "first 60 sentences of the bundled ABSA sample, the Aspect heads "
                              "page's default) head 2-3 (output zeroed: -8.0 points of "
                              "accuracy, 95% -9.0 to -7.0); head 1-3 (output zeroed: +0.0 "
                              "points of accuracy, 95% -1.0 to +1.0, within noise): 1 of them "
                              "hurts beyond the 95% interval when switched off alone. That page "
                              "picks heads by where they look")
    assert "its causal check switches its top heads off together" in text[7]
    assert text[8].startswith("The [SEP] heads (over half their attention on [SEP] across the "
                              "first 200 examples of the bundled sample corpus, No-op "
                              "statistics' default) head 1-2 (output zeroed: +2.5 points of "
                              "accuracy, 95% +1.5 to +3.5): none of them hurts beyond the 95% "
                              "interval")


def test_free_to_go_and_removable_together_are_each_defined():
    """The page's two numbers: heads free to go one at a time (no loss beyond the interval:
    6 heads less the 1 that hurts) and removable together (the pruning curve's 50%: 3 heads)."""
    from analysis.importance.reading import free_heads, removable_together

    r = planted()
    assert free_heads(r) == 5 and removable_together(r) == (0.5, 3)
    r.pruning = None
    assert removable_together(r) is None


def test_the_two_methods_disagreeing_on_a_head_are_explained():
    """The issue's head 4-5: -33.3 points with uniform attention, +0.6 with its output zeroed.
    The reading of either method names the head, both numbers, what each removes and which
    question each answers; heads both methods read alike are not named."""
    import dataclasses

    from analysis.importance.reading import disagreements, methods_sentence

    mask = planted()
    ch = np.zeros((2, 3))
    ch[1, 2] = -8.5  # both hurt: alike
    ch[0, 2] = -33.3  # only uniform hurts
    ci = np.stack([ch - 1.0, ch + 1.0], -1)
    m_ch = mask.heads["accuracy"].copy()
    m_ch[0, 2] = 0.6
    mask = dataclasses.replace(mask, heads={**mask.heads, "accuracy": m_ch},
                               heads_ci={**mask.heads_ci, "accuracy": np.stack(
                                   [m_ch - 1.0, m_ch + 1.0], -1)})
    uniform = dataclasses.replace(mask, method="uniform", heads={**mask.heads, "accuracy": ch},
                                  heads_ci={**mask.heads_ci, "accuracy": ci})
    assert disagreements(uniform, mask) == [(0, 2, -33.3, 0.6)]
    text = methods_sentence(uniform, mask)
    assert text.startswith("Here a head is switched off with its attention spread evenly: that "
                           "keeps what the head passes on but spreads its attention evenly")
    assert "zeroing the output asks whether the model needs the head at all (whether it can " \
        "be pruned), spreading the attention asks whether the model needs where the head looks" \
        in text
    assert text.endswith("They disagree on head 1-3: -33.3 points with its attention spread "
                         "evenly, +0.6 points with its output zeroed (the model copes without "
                         "the head, not with a head that looks everywhere).")
    back = methods_sentence(mask, uniform)
    assert back.startswith("Here a head is switched off with its output zeroed")
    assert "head 1-3: -33.3 points with its attention spread evenly, +0.6 points with its " \
        "output zeroed" in back
    assert "They disagree" not in methods_sentence(mask, None)
    assert "They disagree on head 1-3" in reading(uniform, other=mask)[6]
