"""The cost model behind the demo's per-study caps (issue 50): what one example of n tokens
costs each capped corpus study, measured, and the model's estimate against it.

For each study (``forward``: the bare batched forward with hidden states, the floor; ``search``:
the Search index's vectors, ``analysis.search.job.index_data`` streamed to a folder; ``drift``:
``analysis.drift.job.DriftJob.map`` of the embedded model against itself) and each length n of
``--tokens`` it runs ``--examples`` texts cut to exactly n tokens (the token cap) and prints the
process's CPU seconds and wall seconds per example and per token, and the estimate of
``analysis.core.cost`` for the same work. With ``--check`` it also runs the worst input each
study's cap lets through (the demo's caps: ``max_examples`` texts at ``max_tokens``, or what
the cost budget admits) and prints its wall time against the 120 s target and the estimate's
ratio (target: within 1.5x).

    python -m bench.server.caps [--threads 2] [--tokens 32,64,128,256] [--examples 8]
                               [--studies forward,search,drift] [--after example] [--check]

Run it on a quiet 2-core machine for the numbers in deploy/README.md ("Caps from measured
cost"); on a loaded one the CPU seconds (1 thread) are the usable measure and the wall times
say the load (printed with each row).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from bench import harness

WORDS = ("the soup was cold but the staff were kind and quick to help us with the bill after "
         "a long wait at the bar").split()


def texts(n_examples: int, seed: int = 50) -> list[str]:
    """Lines of about 2,000 characters (the demo's line cap): every one longer than 256
    tokens, so the token cap sets each example's length."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, 420))[:2000] for _ in range(n_examples)]


def dataset(n_examples: int):
    import datasets

    return datasets.Dataset.from_dict({"text": texts(n_examples),
                                       "text_pair": [None] * n_examples})


AFTER = {"spec": None}  # drift's after-model (None: the model itself)


def run_study(study: str, loaded, n_examples: int, folder: Path):
    from analysis.core.encoding import encode
    from analysis.core.forward import forward_batches
    from analysis.drift.job import DriftJob, models_of
    from analysis.search import search_corpus
    from analysis.search.job import index_data

    ds = dataset(n_examples)
    if study == "forward":
        encs = [encode(loaded.tokenizer, t, max_length=loaded.max_length) for t in ds["text"]]
        for _ in forward_batches(loaded.model, loaded.tokenizer, encs, 32, attentions=False,
                                 hidden_states=True):
            pass
    elif study == "search":
        index_data(loaded, search_corpus(ds), 32, out=folder)
    elif study == "drift":
        after = loaded if AFTER["spec"] is None else AFTER["loaded"]
        job = DriftJob(loaded.spec, after.spec)
        job.map(models_of(loaded, after), ds, range(n_examples))
    else:
        raise SystemExit(f"unknown study {study}")


def measure(study: str, loaded, n_examples: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="bench-caps-") as tmp:
        run_study(study, loaded, 1, Path(tmp))  # warm: first-call allocations and imports
        with harness.Timer() as t:
            run_study(study, loaded, n_examples, Path(tmp))
        return t.cpu, t.wall


def main() -> int:
    ap = harness.parser(__doc__, threads=1)
    ap.add_argument("--tokens", default="32,64,128,256")
    ap.add_argument("--examples", type=int, default=8)
    ap.add_argument("--studies", default="forward,search,drift")
    ap.add_argument("--after", default=None,
                    help="drift's after-model (default: the model itself; 'example': the "
                         "example checkpoint, as the Drift page's default pair)")
    ap.add_argument("--check", action="store_true",
                    help="also run each study's worst admitted input (the 120 s target)")
    ap.add_argument("--check-examples", type=int, default=300,
                    help="the examples cap of --check (the demo's max_examples: 300)")
    args = ap.parse_args()
    run = harness.start(args)

    from analysis.core import cost
    from analysis.core.models import load_model

    base = load_model("default")
    if args.after:
        from analysis.core.models import load_with_head

        AFTER.update(spec=args.after, loaded=load_with_head(args.after))
    print(f"{base.name}: {base.n_layers} layers x {base.n_heads} heads")
    shape = cost.shape_of(base)
    for study in args.studies.split(","):
        for n in map(int, args.tokens.split(",")):
            from dataclasses import replace

            loaded = replace(base, max_length=n)
            used, wall = measure(study, loaded, args.examples)
            est = cost.seconds(study, shape, [n] * args.examples, threads=1)
            print(f"{study:8s} n={n:4d}: {used / args.examples * 1000:8.1f} CPU-ms/example "
                  f"({used / args.examples / n * 1e6:7.1f} CPU-us/token), wall "
                  f"{wall / args.examples * 1000:8.1f} ms/example; model "
                  f"{est / args.examples * 1000:8.1f} "
                  f"ms/example (x{used / est:.2f})  [load {harness.load():.1f}]",
                  flush=True)
            run.row(f"{study} n={n}", cpu_seconds=used, seconds=wall, examples=args.examples,
                    estimate_seconds=est, ratio=used / est)
    if args.check:
        check(base, args, run)
    run.done()
    return 0


def check(base, args, run: harness.Run) -> None:
    """Each study's worst admitted input at the demo's caps, wall time against 120 s."""
    from dataclasses import replace

    from analysis.core import cost

    caps = {"max_examples": args.check_examples, "max_tokens": 256}
    loaded = replace(base, max_length=caps["max_tokens"])
    shape = cost.shape_of(loaded)
    for study in ("search", "drift"):
        n = cost.admitted(study, shape, caps["max_tokens"], caps["max_examples"])
        est = cost.seconds(study, shape, [caps["max_tokens"]] * n, threads=args.threads)
        with tempfile.TemporaryDirectory(prefix="bench-caps-") as tmp:
            with harness.Timer() as t:
                run_study(study, loaded, n, Path(tmp))
            wall, used = t.wall, t.cpu
        print(f"check {study}: {n} examples at {caps['max_tokens']} tokens took {wall:.1f} s "
              f"({used:.1f} CPU-s; target <= {cost.BUDGET_S:.0f} s), estimated {est:.1f} s "
              f"(x{wall / est:.2f}; target within 1.5x)  [load {harness.load():.1f}]",
              flush=True)
        run.row(f"check {study}", examples=n, seconds=wall, cpu_seconds=used,
                estimate_seconds=est, ratio=wall / est)


if __name__ == "__main__":
    sys.exit(main())
