"""analysis.core.execution.progress.rate_step: the progress line of a job that counts items."""

from analysis.core.execution.progress import rate_step


def test_rate_step_reports_the_fraction_count_and_rate(monkeypatch):
    import analysis.core.execution.progress as mod

    clock = iter([100.0, 104.0, 110.0])
    monkeypatch.setattr(mod.time, "perf_counter", lambda: next(clock))
    seen = []
    step = rate_step(lambda f, t: seen.append((f, t)), "sentences", " on the cluster")
    step(8, 32)   # 4 s after the start: 2 a second
    step(32, 32)  # 10 s: 3.2 a second
    assert seen == [(0.25, "8 / 32 sentences on the cluster, 2.0 sentences/s"),
                    (1.0, "32 / 32 sentences on the cluster, 3.2 sentences/s")]


def test_rate_step_digits_and_an_empty_total(monkeypatch):
    import analysis.core.execution.progress as mod

    clock = iter([0.0, 3.0, 3.0])
    monkeypatch.setattr(mod.time, "perf_counter", lambda: next(clock))
    seen = []
    step = rate_step(lambda f, t: seen.append((f, t)), digits=2)
    step(2, 6)
    step(0, 0)  # nothing to do: no division by zero
    assert seen == [(2 / 6, "2 / 6 examples, 0.67 examples/s"),
                    (0.0, "0 / 0 examples, 0.00 examples/s")]
