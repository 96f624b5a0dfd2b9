"""Every study at real model sizes (issue 30): wall time, peak memory and the study's floor.

For each size (the embedded all-MiniLM-L6-v2, then stand-ins with the published shapes of
distilbert-base-uncased, bert-base-uncased, roberta-base and bert-large-uncased, built by
bench/sizes/standins.py with seeded random weights), each study's main computation through the
same library call its page makes (analysis/..., the rows: bench/sizes/rows.py), and in the same
run, on the same inputs, the study's FLOOR (bench/sizes/inputs.py): the forward (and backward)
passes it cannot avoid, timed as bare ``model(...)`` calls. The ratio study / floor is what the
study adds (target <= 1.5x).

Floors:

- attention, representations (one input): one forward of the input;
- corpus statistics, Syntax heads, structural probe, representations (corpus): one forward of
  every sentence, batched as the study batches (length-sorted batches of 32-64);
- Drift: one forward of every sentence through each of its two models (``drift_long``: 300
  lines of 2,000 characters at the demo's 256-token cap, issue 48);
- attribution, mixing methods but value zeroing: one forward with hidden states; value
  zeroing: n forwards of each layer on n tokens (every layer run on n copies of its input, in
  blocks); IG: its steps' forward + backward (the steps batched as the study batches them);
- faithfulness: per pair, IG's forward + backward of its steps (the largest part) - a lower
  bound: the removal curves' forwards are not counted;
- head importance: one forward per ablation above the ablated layer (L*H heads + L layers),
  computed from each layer's measured time on the eval set, plus one full forward;
- ABSA fine-tune (one epoch): the forward + backward of every training batch with the same
  trainable weights (no optimiser step).

Peak memory: the process's resident set sampled every 10 ms during the row (peak, and its rise
above the row's start), and ``torch.cuda.max_memory_allocated`` where CUDA exists.

    nice python -m bench.sizes.run --quick --sizes embedded,bert-base
    nice python -m bench.sizes.run --sizes bert-large --rows attention128,attention512

``reps_corpus`` and ``syntax_probe`` also run the path before issue 48 in the study's place
(scikit-learn's fits, a training loop per layer: bench/references/representations.py,
bench/references/syntax.py) and print the largest difference of their numbers.
    python -m bench.sizes.run --list

Data: ../shared/data (SemEval-2014 restaurants, UD English-EWT dev) and the bundled ABSA
sample; a row whose data is absent says so.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

from bench import harness
from bench.sizes import inputs
from bench.sizes.inputs import Peak, spec_of, timed
from bench.sizes.rows import ROW_FUNS

SIZES = ("embedded", "distilbert", "bert-base", "roberta-base", "bert-large")
ROWS = ("attention128", "attention512", "noop", "drift", "drift_long", "syntax_heads",
        "syntax_probe",
        "attribution128", "attribution512", "faithfulness", "importance", "reps_input",
        "reps_corpus", "finetune")
# importance: sentences of the bundled sample (5 aspect pairs each: 40 -> 200 pairs)
FULL = dict(noop=1000, drift=500, drift_long=300, syntax=500, faith=165, importance=40,
            reps=1000, finetune_epochs=1.0)
QUICK = dict(noop=64, drift=32, drift_long=20, syntax=32, faith=3, importance=2, reps=64,
             finetune_epochs=0.05)


# ---------------------------------------------------------------- driver

def measure(size, row, name, study, floor, what):
    with Peak() as pk:
        _, secs = timed(study)
    floor_s = floor() if floor is not None else None
    return {"size": size, "row": row, "what": name, "n": what, "seconds": secs,
            "floor_seconds": floor_s,
            "ratio": secs / floor_s if floor_s else None, "peak_rss_mib": pk.peak / 2**20,
            "rss_rise_mib": (pk.peak - pk.start) / 2**20,
            "gpu_peak_mib": pk.gpu / 2**20 if pk.gpu is not None else None}


def run_row(size, row, ctx) -> list[dict]:
    try:
        made = ROW_FUNS[row](ctx)
    except Exception as exc:
        first = str(exc).splitlines()[0][:160] if str(exc) else ""
        return [{"size": size, "row": row, "what": row,
                 "error": f"{type(exc).__name__}: {first}",
                 "traceback": traceback.format_exc(limit=-6)}]
    subrows = made if isinstance(made, list) else [(row, *made)]
    out = []
    for name, study, floor, what in subrows:
        if study is None:
            out.append({"size": size, "row": row, "what": name, "error": what})
            continue
        try:
            out.append(measure(size, row, name, study, floor, what))
        except Exception as exc:
            out.append({"size": size, "row": row, "what": name,
                        "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}",
                        "traceback": traceback.format_exc(limit=-6)})
        gc.collect()
    return out


def markdown(rows: list[dict]) -> str:
    gpu = any(r.get("gpu_peak_mib") is not None for r in rows)
    head = "| size | row | what | n | study s | floor s | ratio | peak RSS MiB | rise MiB |" + \
        (" GPU MiB |" if gpu else "")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['size']} | {r['row']} | {r['what']} | | **{r['error']}** | | | "
                         "| |" + (" |" if gpu else ""))
            continue
        fl = f"{r['floor_seconds']:.2f}" if r["floor_seconds"] is not None else "n/a"
        ra = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "n/a"
        lines.append(f"| {r['size']} | {r['row']} | {r['what']} | {r['n']} | {r['seconds']:.2f} "
                     f"| {fl} | {ra} | {r['peak_rss_mib']:,.0f} | {r['rss_rise_mib']:,.0f} |"
                     + (f" {r['gpu_peak_mib']:,.0f} |" if gpu else ""))
    return "\n".join(lines)


def environment(facts: dict) -> dict:
    """The harness's facts as this table's JSON has named them, with the versions and CUDA."""
    import torch

    env = {"date": facts["date"], "python": platform.python_version(),
           "torch": torch.__version__, "threads": torch.get_num_threads(),
           "cpus": facts["cores"], "load": facts["load"], "cuda": torch.cuda.is_available()}
    if env["cuda"]:
        env["gpu"] = torch.cuda.get_device_name(0)
    return env


def parse(argv):
    p = harness.parser(__doc__)
    p.add_argument("--sizes", default=",".join(SIZES), help=f"comma-separated ({','.join(SIZES)})")
    p.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated ({','.join(ROWS)})")
    p.add_argument("--quick", action="store_true", help="small counts (a development run)")
    p.add_argument("--root", default=None, help="stand-ins' folder (bench/sizes/standins.py)")
    p.add_argument("--work", default="/tmp/bench_sizes", help="scratch (fine-tune output)")
    p.add_argument("--list", action="store_true", help="print the sizes and rows")
    p.add_argument("--data", default=None, help="bench/sizes/cuda_prep.py's folder (.gpu) instead "
                   "of ../shared/data: its data/ files and minilm/ tokenizer (a GPU machine)")
    p.add_argument("--methods", default=None, help="attribution rows: only these methods "
                   "(comma-separated: attention,norm,norm_resln,alti,value_zeroing,"
                   "integrated_gradients)")
    p.add_argument("--max-minutes", type=float, default=None, help="start no row after this")
    p.add_argument("--count", action="append", default=[], metavar="KEY=N",
                   help=f"override one count ({', '.join(FULL)}); the table's n column says "
                   "what ran")
    return p.parse_args(argv)


def main(argv=None) -> int:
    from analysis.core.execution.threads import passive_waits

    passive_waits()  # before torch loads: its OpenMP threads wait as the app's and the CLI's
    args = parse(argv)
    if args.list:
        print("sizes:", ", ".join(SIZES))
        print("rows:", ", ".join(ROWS))
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.data:
        inputs.SEMEVAL = Path(args.data) / "data" / "semeval14_restaurants.xml"
        inputs.UD_DEV = Path(args.data) / "data" / "ud_ewt_dev.conllu"
        os.environ.setdefault("STANDIN_TOKENIZER", str(Path(args.data) / "minilm"))
    sizes = [s for s in args.sizes.split(",") if s]
    rows = [r for r in args.rows.split(",") if r]
    bad = [s for s in sizes if s not in SIZES] + [r for r in rows if r not in ROWS]
    if bad:
        print(f"unknown size or row: {', '.join(bad)}", file=sys.stderr)
        return 2
    n = dict(QUICK if args.quick else FULL)
    for item in args.count:
        key, _, value = item.partition("=")
        if key not in n:
            print(f"unknown count {key!r}: one of {', '.join(n)}", file=sys.stderr)
            return 2
        n[key] = float(value) if key == "finetune_epochs" else int(value)
    run = harness.start(args)
    env = environment(run.facts)
    print("environment:", json.dumps(env))
    results, t0 = run.rows, time.perf_counter()
    root = Path(args.root) if args.root else None
    for size in sizes:
        base, clf = spec_of(size, root)
        ctx = SimpleNamespace(size=size, base=base, clf=clf, n=n, quick=args.quick,
                              work=args.work, methods=args.methods and args.methods.split(","))
        for row in rows:
            if args.max_minutes and time.perf_counter() - t0 > 60 * args.max_minutes:
                results.append({"size": size, "row": row, "what": row,
                                "error": f"unmeasured: past --max-minutes {args.max_minutes:g}"})
                continue
            print(f"{size} {row} ...", flush=True)
            for r in run_row(size, row, ctx):
                results.append(r)
                print("  " + (r.get("error") or f"{r['what']}: {r['seconds']:.2f} s, floor "
                              f"{r['floor_seconds'] or 0:.2f} s, peak RSS "
                              f"{r['peak_rss_mib']:.0f} MiB"), flush=True)
                if "traceback" in r:
                    print(r["traceback"])
            # after each row, so that a run stopped at its time limit keeps its rows
            run.write(environment=env, quick=args.quick)
    print(f"\n{'--quick ' if args.quick else ''}{env['threads']} threads, "
          f"{time.perf_counter() - t0:.0f} s in all")
    run.done(environment=env, quick=args.quick)
    print("\n" + markdown(results))
    return 1 if any("error" in r and "unmeasured" not in r["error"]
                    and "skipped" not in r["error"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
