"""Benchmark: a corpus study on a local Ray cluster (1 and 2 workers) vs in process, same
corpus, same run (issue 23).

    nice python -m bench.sizes.scale [--study noop|syntax|drift] [--n 400] [--batch-size 32]

Corpus: SemEval-2014 restaurant sentences (noop, drift) or UD EWT dev sentences (syntax) from
../shared/data, the first ``--n``. Model: the embedded default (all-MiniLM-L6-v2); drift
compares it with the example checkpoint when it is built, else with itself.

Prints, per path: wall seconds of the study (the Ray rows include starting the worker actors
and loading the model in each, which is the Ray path's fixed cost), examples per second, and
the largest difference from the in-process numbers (counts must match exactly). The local
cluster (``ray.init(num_cpus=2)`` on 127.0.0.1) is started once, timed apart, and shut down at
the end. On one 2-core machine Ray cannot be faster than the in-process path (which already
uses both cores through torch); the point here is equal numbers and the size of the overhead.
The gain is on a cluster with one GPU per worker (deploy/README.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from bench import harness

ROOT, DATA = harness.ROOT, harness.SHARED
EXAMPLE = Path.home() / ".cache" / "attention-dashboard" / "example-absa"
os.environ.setdefault("DASHBOARD_DEVICE", "cpu")


def setup(study: str, n: int, batch_size: int):
    """(job, models, dataset, flatten(result) -> {name: array})."""
    from analysis.core.corpus import read_corpus
    from analysis.core.models import load_model

    if study == "syntax":
        from analysis.syntax import read_conllu
        from analysis.syntax.job import HeadsJob

        ds = read_conllu(DATA / "ud_english_ewt" / "en_ewt-ud-dev.conllu", max_sentences=n)
        lm = load_model("default")
        return HeadsJob(lm.spec, batch_size), lm, ds, lambda r: {
            f"{rel}/{d}": getattr(v, d) for rel, v in r.relations.items()
            for d in ("dep_to_head", "head_to_dep")} | {"n_sentences": r.n_sentences}
    ds = read_corpus(DATA / "semeval2014" / "Restaurants_Train.xml", max_examples=n)
    if study == "drift":
        from analysis.drift import load_pair
        from analysis.drift.job import DriftJob, has_labels, models_of

        after = str(EXAMPLE) if EXAMPLE.is_dir() else "default"
        before, after_m = load_pair("default", after)
        return DriftJob(before.spec, after_m.spec, batch_size, has_labels(ds)), \
            models_of(before, after_m), ds, lambda r: {
                "cosine": r.cosine_examples, "rsa": r.rsa_examples, "cka": r.cka,
                "n": r.n_examples}
    from analysis.noop.corpus import NoopJob

    lm = load_model("default")
    return NoopJob(lm.spec, batch_size, norms=False), lm, ds, lambda r: dict(
        r.metrics, n_examples=r.n_examples, n_tokens=r.n_tokens)


def max_diff(a: dict, b: dict) -> float:
    worst = 0.0
    for k in a:
        x, y = np.asarray(a[k], float), np.asarray(b[k], float)
        if x.shape != y.shape:
            return float("inf")
        d = np.abs(np.where(np.isfinite(x), x, 0) - np.where(np.isfinite(y), y, 0))
        worst = max(worst, float(d.max()) if d.size else 0.0)
    return worst


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--study", choices=("noop", "syntax", "drift"), default="noop")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    run = harness.start(args)

    import ray

    from analysis.core.execution.raydata import run_ray
    from analysis.core.execution.corpus import run_local

    job, models, ds, flat = setup(args.study, args.n, args.batch_size)
    base, t = harness.timed(lambda: run_local(job, models, ds))
    rows = [("in process", t.wall, 0.0)]
    ref = flat(base)
    _, t = harness.timed(lambda: ray.init(
        num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
        logging_level="ERROR",
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "DASHBOARD_DEVICE": "cpu"}}))
    start = t.wall
    try:
        for workers in (1, 2):
            res, t = harness.timed(lambda: run_ray(job, ds, None, workers=workers))
            rows.append((f"Ray, {workers} worker(s)", t.wall, max_diff(ref, flat(res))))
    finally:
        ray.shutdown()
    n = len(ds)
    print(f"{args.study}: {n} examples, batch size {args.batch_size}, load {harness.load():.1f}"
          f" (1 min); local cluster start {start:.1f} s (not in the rows)")
    print(f"{'path':<20} {'seconds':>8} {'ex/s':>7} {'vs in process':>14} {'max |diff|':>11}")
    for name, sec, diff in rows:
        print(f"{name:<20} {sec:8.1f} {n / sec:7.1f} {sec / rows[0][1]:13.2f}x {diff:11.2e}")
        run.row(name, seconds=sec, examples=n, baseline="in process",
                baseline_seconds=rows[0][1], ratio=sec / rows[0][1], max_abs_diff=diff)
    run.done()


if __name__ == "__main__":
    main()
