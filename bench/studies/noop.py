"""Benchmark: streaming no-op statistics vs a plain per-sentence loop (same run, same machine).

    nice python -m bench.studies.noop [--sizes 1000 4000] [--batch-size 64]

Corpus: SemEval-2014 restaurant train sentences from ../shared/data (3,044 sentences; sizes
above that cycle through them again). Model: the embedded default (all-MiniLM-L6-v2).

- *pipeline*: ``analysis.noop.corpus_stats`` (length-sorted padded batches, statistics of the
  whole batch at once with torch under masks, running sums; no map kept);
- *loop*: one forward per sentence with ``output_attentions``, then the same statistics in numpy
  (``bench.references.noop.corpus_stats_loop`` over ``analysis.noop.example_stats``, the
  definition; docs/METHODS.md section 3).

- *forwards only*: the pipeline's batches through the model and nothing else: the floor of
  any batched pipeline here, so ``loop / forwards only`` is the largest ratio this machine
  allows.

Each (method, size) runs in its own process so peak memory is its own: peak RSS of the process
(resource.getrusage), the part above the RSS after loading the model, and the tracemalloc peak
of Python/numpy allocations during the run. Prints times, the ratio loop/pipeline and the max
abs difference between the two results (target: ratio >= 4, diff <= 1e-4). Times are wall-clock
on a shared machine: read them as ratios measured side by side, not absolutes.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import tracemalloc

import numpy as np

from bench import harness

ROOT, DATA = harness.ROOT, harness.SEMEVAL


def corpus(n: int):
    from analysis.core.corpus import make_dataset, read_corpus

    base = read_corpus(DATA)["text"]
    texts = [base[i % len(base)] for i in range(n)]
    return make_dataset(texts)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(method: str, n: int, batch_size: int, norms: bool, out: str) -> None:
    import torch

    from analysis.core.models import load_model
    from analysis.noop import corpus_stats
    from bench.references.noop import corpus_stats_loop

    loaded = load_model("default")
    ds = corpus(n)
    torch.manual_seed(0)
    base_rss = rss_mb()
    tracemalloc.start()
    with harness.Timer() as t:
        if method == "pipeline":
            metrics = corpus_stats(loaded, ds, batch_size=batch_size, norms=norms).metrics
        elif method == "forward":
            metrics = forward_only(loaded, ds, batch_size)
        else:
            metrics = corpus_stats_loop(loaded, ds)
    seconds, cpu = t.wall, t.cpu
    _, py_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    np.savez(out, **metrics)
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mb": rss_mb(),
                      "base_rss_mb": base_rss,
                      "py_peak_mb": py_peak / 2 ** 20, "threads": torch.get_num_threads()}))


def forward_only(loaded, ds, batch_size: int) -> dict:
    """The pipeline's batches and forwards with nothing else (no statistics): the floor that
    any batched pipeline pays on this machine, to read the ratio against."""
    from analysis.core.encoding import encode_dataset
    from analysis.core.forward import forward_batches

    encs = encode_dataset(loaded.tokenizer, ds, loaded.max_length).encodings
    per_pair = 4 * loaded.n_layers * loaded.n_heads * 2
    for _ in forward_batches(loaded.model, loaded.tokenizer, encs, batch_size,
                             bytes_per_token_pair=per_pair):
        pass
    return {}


def run_child(method: str, n: int, batch_size: int, norms: bool = False,
              threads: int | None = None) -> tuple[dict, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "m.npz")
        cmd = [sys.executable, "-m", __spec__.name, "--child", method, "--n", str(n),
               "--batch-size", str(batch_size), "--out", out] + (["--norms"] if norms else []) \
            + (["--threads", str(threads)] if threads else [])
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if res.returncode != 0:
            raise SystemExit(f"{method} {n} failed:\n{res.stderr[-2000:]}")
        info = json.loads(res.stdout.strip().splitlines()[-1])
        with np.load(out) as z:
            metrics = {k: z[k] for k in z.files}
    return info, metrics


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000])
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--child", choices=["pipeline", "loop", "forward"])
    ap.add_argument("--n", type=int)
    ap.add_argument("--out")
    ap.add_argument("--norms", action="store_true")
    args = ap.parse_args()
    if args.child:
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        child(args.child, args.n, args.batch_size, args.norms, args.out)
        return 0
    if not DATA.is_file():
        print(f"skipped: {DATA} is absent")
        return 0
    run = harness.start(args)
    print(f"SemEval-2014 train sentences, default model, batch size {args.batch_size}")
    header = (f"{'n':>6} {'method':<16} {'seconds':>8} {'CPU s':>8} {'ex/s':>7} "
              f"{'peak RSS MB':>12} "
              f"{'above model MB':>15} {'py peak MB':>11}")
    print(header, flush=True)
    summary = []
    for n in args.sizes:
        pipe, pm = run_child("pipeline", n, args.batch_size, threads=args.threads)
        loop, lm = run_child("loop", n, args.batch_size, threads=args.threads)
        pipe_n, pnm = run_child("pipeline", n, args.batch_size, norms=True, threads=args.threads)
        fwd, _ = run_child("forward", n, args.batch_size, threads=args.threads)
        for name, info in (("loop", loop), ("pipeline", pipe), ("pipeline+norms", pipe_n),
                           ("forwards only", fwd)):
            run.row(name, n=n, **info)
            print(f"{n:>6} {name:<16} {info['seconds']:>8.2f} {info['cpu_seconds']:>8.2f} "
                  f"{n / info['seconds']:>7.1f} "
                  f"{info['peak_rss_mb']:>12.0f} "
                  f"{info['peak_rss_mb'] - info['base_rss_mb']:>15.0f} "
                  f"{info['py_peak_mb']:>11.1f}")
        diff = max(float(np.abs(pm[k] - lm[k]).max()) for k in lm)
        diff_n = max(float(np.abs(pnm[k] - lm[k]).max()) for k in lm)
        ratio = loop["seconds"] / pipe["seconds"]
        ratio_n = loop["seconds"] / pipe_n["seconds"]
        ratio_cpu = loop["cpu_seconds"] / pipe["cpu_seconds"]
        summary.append((n, ratio, ratio_n, diff, diff_n))
        print(f"{n:>6} ratio loop/pipeline {ratio:.2f}x wall, {ratio_cpu:.2f}x CPU "
              f"(with norms {ratio_n:.2f}x wall), "
              f"max abs diff {diff:.2e} (with norms {diff_n:.2e})", flush=True)
        print(f"{n:>6} the batched forwards alone take {fwd['seconds']:.2f}s "
              f"({fwd['seconds'] / pipe['seconds']:.0%} of the pipeline): no pipeline of these "
              f"forwards can beat the loop by more than {loop['seconds'] / fwd['seconds']:.2f}x "
              "here", flush=True)
        run.ratio(f"{n:>6} pipeline", pipe["seconds"], fwd["seconds"], "the forwards alone",
                  digits=2)
        run.row(f"{n} loop / pipeline", n=n, ratio=ratio, ratio_cpu=ratio_cpu,
                ratio_norms=ratio_n, max_abs_diff=diff, max_abs_diff_norms=diff_n)
    ok = all(r >= 4 and d <= 1e-4 and dn <= 1e-4 for _, r, _, d, dn in summary)
    print("target (ratio >= 4x, max abs diff <= 1e-4):", "met" if ok else "NOT met")
    run.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
