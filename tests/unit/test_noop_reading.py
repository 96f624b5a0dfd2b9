"""Reading no-op statistics: the sentences and tables follow the numbers (docs/METHODS.md
section 3)."""

from __future__ import annotations

import json

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
    assert positional_heads(st) == [{"layer": 1, "head": 2, "role": "positional (next)",
                                     "direction": "next", "share": 0.6}]
    # each head's role by the Head atlas's rules on these numbers: 0.7 and 0.6 of the
    # attention on [SEP] (> 0.5), entropy 1.0 of an even 2.3 (< 0.9 of it): a no-op only
    assert [r["role"] for r in top] == ["[SEP] no-op", "[SEP] no-op"]
    d = st.to_json()  # the command's and the page's JSON: the CLI_METRICS, no entropy_cls
    assert list(d["metrics"]) == ["cls", "sep", "punct", "self", "prev", "next", "entropy"]
    assert d["metrics"]["sep"] == [[0.2, 0.1], [0.7, 0.6]] and d["n_examples"] == 3
    back = CorpusStats.from_json(json.loads(json.dumps(d)))
    assert back.to_json() == d and back.metrics["next"][0, 1] == 0.6


# -- intervals over examples (issue 35) ---------------------------------------------------------

def _planted(per_example: dict[str, np.ndarray], uniform: float = 2.0):
    """CorpusStats of planted per-example statistics ({name: [N, L, H]}), through the job's
    own sums (NoopJob.merge of one partial built by square_sums)."""
    from analysis.noop.corpus import NoopJob, NoopPartial, square_sums

    n, L, H = next(iter(per_example.values())).shape
    part = NoopPartial(0, "m", L, H, {k: v.sum(0) for k, v in per_example.items()},
                       squares=square_sums(per_example), n_examples=n, n_tokens=10 * n,
                       sum_log_n=n * uniform)
    return NoopJob("m").merge([part])


def _examples(special_by_layer, n=40, seed=0, spread=0.02, punct=None):
    """[N, L, H=2] planted statistics: layer l's cls+sep share about special_by_layer[l]."""
    rng = np.random.default_rng(seed)

    def noise(sd, shape):  # centred: the planted means are exact
        e = rng.normal(0, sd, shape)
        return e - e.mean(0)

    L = len(special_by_layer)
    base = np.asarray(special_by_layer, float)[None, :, None]
    sep = base * 0.8 + noise(spread, (n, L, 2))
    cls = base * 0.2 + noise(spread, (n, L, 2))
    z = np.zeros((n, L, 2))
    pun = (np.asarray(punct, float)[None, :, None] + noise(spread, (n, L, 2))
           if punct is not None else z + 0.05)
    return {"cls": cls, "sep": sep, "punct": pun, "self": z + 0.1, "prev": z.copy(),
            "next": z.copy(), "entropy": z + 1.0,
            "entropy_cls": 1.5 + noise(0.1, (n, L, 2))}


def test_layer_interval_is_the_normal_interval_over_examples():
    ex = _examples([0.3, 0.6, 0.5], n=25, seed=1)
    st = _planted(ex)
    per_ex = (ex["cls"] + ex["sep"]).mean(2)[:, 1]  # layer 2's mean over heads, per example
    half = 1.959964 * per_ex.std(ddof=1) / np.sqrt(len(per_ex))
    lo, hi = st.layer_ci("special")
    assert lo[1] == pytest.approx(per_ex.mean() - half, abs=1e-12)
    assert hi[1] == pytest.approx(per_ex.mean() + half, abs=1e-12)
    cls_all = ex["cls"].mean((1, 2))
    half = 1.959964 * cls_all.std(ddof=1) / np.sqrt(len(cls_all))
    assert st.overall_ci("cls") == pytest.approx((cls_all.mean() - half, cls_all.mean() + half))
    ent = ex["entropy_cls"].mean(2)[:, -1]
    half = 1.959964 * ent.std(ddof=1) / np.sqrt(len(ent))
    lines = reading(st, "ToyBERT")
    assert (f"entropy {ent.mean():.2f} nats (95% {ent.mean() - half:.2f} to "
            f"{ent.mean() + half:.2f})") in lines[4]


def test_reading_states_intervals_and_a_clear_peak():
    ex = _examples([0.3, 0.7, 0.4], punct=[0.05, 0.1, 0.3])
    st = _planted(ex)
    lines = reading(st, "ToyBERT")
    lo, hi = st.overall_ci("sep")
    assert (f"{100 * st.overall('sep'):.0f}% of attention goes to [SEP] "
            f"(95% {100 * lo:.1f}% to {100 * hi:.1f}%)") in lines[0]
    lo, hi = st.layer_ci("special")
    assert lines[1] == (f"In layer 2 more than half of all attention goes to [CLS] or [SEP]; "
                        f"the peak is layer 2 (70%, 95% {100 * lo[1]:.1f}% to "
                        f"{100 * hi[1]:.1f}%).")
    assert "within noise" not in " ".join(lines)
    assert "most attention in layer 3 (30% on average, 95% " in lines[2]


def test_reading_says_within_noise_when_the_top_layers_overlap():
    # layers 2 and 3 a point apart with a 10-point spread over 40 examples: intervals overlap
    ex = _examples([0.3, 0.61, 0.6], spread=0.1, punct=[0.2, 0.21, 0.05])
    st = _planted(ex)
    lines = reading(st, "ToyBERT")
    assert "the peak is layer 2 (61%, 95% " in lines[1]
    assert ", within noise of layer 3 (60%, 95% " in lines[1]
    top = lines[2]
    assert "within noise of layer" in top and "layer 2 (21% on average" in top


def test_without_squares_the_reading_has_no_interval():
    cls = np.array([[0.1, 0.05], [0.1, 0.1]])
    st = _synthetic_stats(cls, cls + 0.2)
    assert st.layer_ci("special") is None and "95%" not in " ".join(reading(st))
    assert "layers_ci" not in st.to_json()


def test_layer_rows_are_the_reading_numbers_in_percent_and_nats():
    from analysis.noop.reading import layer_rows

    st = _planted(_examples([0.3, 0.7, 0.4], punct=[0.05, 0.1, 0.3]))
    row = layer_rows(st)[1]
    lo, hi = st.layer_ci("special")
    assert row["layer"] == 2 and row["[CLS]+[SEP] %"] == 70.0
    assert row["[CLS]+[SEP] 95%"] == f"{100 * lo[1]:.1f} to {100 * hi[1]:.1f}"
    assert row["[CLS] entropy (nats)"] == 1.5 and row["[CLS] entropy 95%"].count(" to ") == 1


def test_sinks_within_noise_of_each_other():
    ex = _examples([0.4, 0.4, 0.4], spread=0.1)
    ex["cls"], ex["sep"] = ex["sep"] - 0.01, ex["sep"]  # [CLS] a point below [SEP], same spread
    st = _planted(ex)
    line = reading(st, "ToyBERT")[0]
    assert line.startswith("In ToyBERT [SEP] and [CLS] are the main attention sinks, within "
                           "noise of each other: averaged over all 6 heads, 32% of attention "
                           "goes to [SEP] (95% ")
    clear = reading(_planted(_examples([0.4, 0.4, 0.4])), "ToyBERT")[0]
    assert clear.startswith("In ToyBERT the main attention sink is [SEP], not [CLS]: ")
