"""The CUDA path against the CPU path: every corpus study, in this process, through the one
forward path (``analysis.core.forward``) on the CPU and on CUDA (``DASHBOARD_DEVICE``, read by
``analysis.core.models.pick_device`` in every ``load_model``), over the same model and data, with
the library calls of the CLI (analysis/cli/*.py). Per study: CPU seconds, CUDA seconds, the
ratio and the largest absolute difference of the study's numbers (every number of its JSON but
timings), PASS when it is within ``--tol`` (1e-4). Also the example recipe's fine-tune
(``analysis.absa.example.build_example``, ``--finetune-steps`` steps) on both, in steps/s;
its CUDA checkpoint is the classifier of the studies that need one (noop gradients, drift's
"after", head importance, attribution faithfulness). Exit status 1 on any FAIL.

Prepared here by bench/sizes/cuda_prep.py (model as fp16, data, wheels in ``.gpu/``); on the GPU
machine (the coordinator's device call, ``carry: [".gpu"]``, timeout_s 420):

    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site \\
        .gpu/whl/*.whl && export PYTHONPATH=/tmp/site:$PWD &&
        PYTHONUNBUFFERED=1 python3 -m bench.sizes.cuda --data .gpu --json $OUT/cuda.json 2>&1 |
        tee $OUT/log.txt

Without CUDA (or with ``--cpu-only``) the second side runs on the CPU too, so the bench
compares CPU with CPU and says so (how it is tested on a CPU machine):

    python3 -m bench.sizes.cuda --data .gpu --small --json /tmp/cuda.json
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

from bench import harness
from bench.sizes.cuda_studies import NEEDS, STUDIES
from bench.sizes.inputs import timed

ROOT = Path(__file__).resolve().parents[2]

# JSON keys that are timings, dates or paths, not a study's numbers.
SKIP_KEYS = {"seconds", "examples_per_second", "train_seconds", "seconds_per_epoch", "created",
             "elapsed", "elapsed_s", "examples_per_s", "model", "spec", "data", "path"}
# sizes: the device run (16 cores + a GPU, < 5 minutes) and --small (a CPU machine's test)
SIZES = {"full": dict(corpus=400, grad=64, ud=300, importance=20, faith=32, reps=200,
                      steps=120, nodrop_steps=40),
         "small": dict(corpus=24, grad=8, ud=16, importance=6, faith=3, reps=24, steps=6,
                       nodrop_steps=4)}
DROPOUTS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout")


def numbers(obj, path: str = "") -> dict[str, float]:
    """Every numeric leaf of a JSON-like value by its path ("a.b[2]"); booleans count as 0/1,
    strings and None are skipped, and so are the keys of :data:`SKIP_KEYS`."""
    out: dict[str, float] = {}
    if isinstance(obj, bool):
        out[path] = float(obj)
    elif isinstance(obj, (int, float)):
        out[path] = float(obj)
    elif hasattr(obj, "tolist"):  # numpy arrays and scalars
        out.update(numbers(obj.tolist(), path))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if str(k) not in SKIP_KEYS:
                out.update(numbers(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out.update(numbers(v, f"{path}[{i}]"))
    return out


def compare(a, b, tol: float = 1e-4) -> dict:
    """The largest absolute difference between the numbers of ``a`` and ``b`` (same paths),
    where it is, how many numbers were compared and how many differ by more than ``tol`` (a
    flipped argmax moves a share by 1/n: few, in steps), and the paths only one side has. Two
    NaNs (or two equal infinities) agree; a NaN against a number is an infinite difference."""
    na, nb = numbers(a), numbers(b)
    worst, where, over = 0.0, "", []
    for key in sorted(na.keys() & nb.keys()):
        x, y = na[key], nb[key]
        if (math.isnan(x) and math.isnan(y)) or x == y:
            continue
        d = abs(x - y) if math.isfinite(x) and math.isfinite(y) else math.inf
        if d > tol:
            over.append((key, x, y))
        if d > worst:
            worst, where = d, key
    only = sorted(na.keys() ^ nb.keys())
    return {"max_abs_diff": worst, "where": where, "n_numbers": len(na.keys() & nb.keys()),
            "n_over_tol": len(over), "over_tol": over[:10],
            "only_one_side": only[:10], "n_only_one_side": len(only)}


def verdict(cmp: dict, tol: float) -> str:
    return "PASS" if cmp["max_abs_diff"] <= tol and not cmp["n_only_one_side"] else "FAIL"


def fp32_model(src: Path, dst: Path) -> Path:
    """The prep step's fp16 model folder cast back to fp32 in ``dst`` (the bench's model spec)."""
    from safetensors.torch import load_file, save_file

    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and f.name != "model.safetensors":
            shutil.copy2(f, dst / f.name)
    weights = load_file(str(src / "model.safetensors"))
    save_file({k: (v.float() if v.is_floating_point() else v).contiguous()
               for k, v in weights.items()}, str(dst / "model.safetensors"),
              metadata={"format": "pt"})
    return dst


def finetune(base: str, out: Path, steps: int, dropout: bool = True) -> dict:
    """The example recipe's fine-tune (analysis.absa.example.build_example) for ``steps``
    steps from ``base``, saved to ``out``: its losses, steps/s and held-out metrics. The CPU
    and CUDA draw different dropout masks from one seed, so only ``dropout=False`` (every
    dropout probability of the base's config set to 0 before the classifier is made from it)
    gives losses that can be compared."""
    from analysis.absa.checkpoints import read_card
    from analysis.absa.example import build_example
    from analysis.core.models import load_model

    if out.exists():
        shutil.rmtree(out)
    loaded = load_model(base)
    if not dropout:
        for name in DROPOUTS:
            if getattr(loaded.model.config, name, None) is not None:
                setattr(loaded.model.config, name, 0.0)
    losses: list[float] = []
    seconds: list[float] = []

    import analysis.absa.pipeline as pipeline
    real = pipeline.run_fine_tune

    def spy(*args, progress=None, **kwargs):  # the per-step losses, from the trainer's calls
        def step(p):
            losses.append(float(p.loss))
            if progress:
                progress(p)
        run = real(*args, progress=step, **kwargs)
        seconds.append(run.result.seconds)  # the training time (the card rounds it)
        return run

    pipeline.run_fine_tune = spy
    try:
        _, wall = timed(lambda: build_example(out, None, loaded=loaded, max_steps=steps))
    finally:
        pipeline.run_fine_tune = real
    card = read_card(out)
    train_s = seconds[0]
    return {"steps": len(losses), "train_seconds": train_s, "wall_seconds": wall,
            "steps_per_s": len(losses) / train_s if train_s else None, "losses": losses,
            "metrics": card.get("metrics", {})}


def finetune_row(name, base, work, steps, dropout, other, tol) -> dict:
    """One fine-tune on the CPU, then on ``other``, as a row of the table (INFO with dropout:
    the two sides draw different masks)."""
    tuned = {}
    for side, dev in (("cpu", "cpu"), ("other", other)):
        set_device(dev)
        print(f"{name} on {dev}: {steps} steps of the example recipe"
              f"{'' if dropout else ', dropout 0'} ...")
        tuned[side] = finetune(base, work / f"clf-{side}{'' if dropout else '-nodrop'}",
                               steps, dropout)
        print(f"  {tuned[side]['steps_per_s']:.2f} steps/s, final loss "
              f"{tuned[side]['losses'][-1]:.5f}")
    cmp = compare(tuned["cpu"]["losses"], tuned["other"]["losses"], tol)
    cpu_s, other_s = tuned["cpu"]["train_seconds"], tuned["other"]["train_seconds"]
    return {"study": name, "n": steps, "cpu_s": cpu_s, "other_s": other_s,
            "ratio": cpu_s / other_s if other_s else math.inf,
            "cpu_steps_per_s": tuned["cpu"]["steps_per_s"],
            "other_steps_per_s": tuned["other"]["steps_per_s"], **cmp,
            "verdict": "INFO" if dropout else verdict(cmp, tol),
            "losses": {k: v["losses"] for k, v in tuned.items()},
            "cards": {k: v["metrics"] for k, v in tuned.items()}}


def set_device(side: str) -> str:
    """Point every ``load_model`` at ``side`` ("cpu" or "cuda") through DASHBOARD_DEVICE."""
    os.environ["DASHBOARD_DEVICE"] = side
    from analysis.core.models import pick_device

    return pick_device()


def environment(facts: dict) -> dict:
    import importlib.metadata as md

    import torch

    env = {"python": platform.python_version(), "torch": torch.__version__,
           "cuda": torch.cuda.is_available(), "threads": torch.get_num_threads(),
           "cpus": facts["cores"], "matmul_precision": torch.get_float32_matmul_precision(),
           "load": facts["load"][0], "tf32_matmul": torch.backends.cuda.matmul.allow_tf32}
    if env["cuda"]:
        env["gpu"] = torch.cuda.get_device_name(0)
    for name in ("transformers", "datasets", "captum", "conllu", "scikit-learn", "numpy",
                 "pyarrow", "pandas", "fsspec"):
        try:
            env[name] = md.version(name)
        except md.PackageNotFoundError:
            env[name] = None
    return env


def table(rows: list[dict], second: str) -> str:
    head = f"{'study':16} {'n':>5} {'cpu s':>8} {second + ' s':>8} {'ratio':>7} " \
           f"{'max |diff|':>11} {'>tol':>6}/{'of':<6} verdict  where"
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['study']:16} ERROR {r['error']}")
            continue
        lines.append(f"{r['study']:16} {r['n']:>5} {r['cpu_s']:8.2f} {r['other_s']:8.2f} "
                     f"{r['ratio']:7.1f} {r['max_abs_diff']:11.2e} {r['n_over_tol']:>6}/"
                     f"{r['n_numbers']:<6} {r['verdict']:7}  "
                     + (f"steps/s {r['cpu_steps_per_s']:.1f} vs {r['other_steps_per_s']:.1f}"
                        if "cpu_steps_per_s" in r else r["where"]))
    return "\n".join(lines)


def run_study(name: str, ctx_for, tol: float) -> dict:
    import importlib.util

    need = NEEDS.get(name)
    if need and importlib.util.find_spec(need) is None:
        return {"study": name, "error": f"{need} is not installed (carry its wheel)"}
    out = {}
    for side in ("cpu", "other"):
        try:
            data, secs, n = STUDIES[name](ctx_for(side))
        except Exception as exc:  # one study's failure is reported, the others still run
            first = (str(exc).splitlines() or [""])[0][:200]
            hint = (" (an API our torch 2.13 / transformers 5.24 have and this machine's "
                    "versions, printed above, lack?)"
                    if isinstance(exc, (AttributeError, TypeError, ImportError)) else "")
            trace = traceback.format_exc(limit=-8)  # where, for a one-shot device run
            print(trace)
            return {"study": name, "error": f"{side}: {type(exc).__name__}: {first}{hint}",
                    "traceback": trace}
        out[side] = (data, secs, n)
    cmp = compare(out["cpu"][0], out["other"][0], tol)
    cpu_s, other_s = out["cpu"][1], out["other"][1]
    return {"study": name, "n": out["cpu"][2], "cpu_s": cpu_s, "other_s": other_s,
            "ratio": cpu_s / other_s if other_s else math.inf, **cmp,
            "verdict": verdict(cmp, tol)}


def main(argv=None) -> int:
    p = harness.parser("CPU vs CUDA: every corpus study, same numbers? (--json: every number)")
    p.add_argument("--data", default=".gpu", help="the folder of bench/sizes/cuda_prep.py (.gpu)")
    p.add_argument("--cpu-only", action="store_true", help="compare CPU with CPU")
    p.add_argument("--small", action="store_true", help="tiny sizes (a CPU machine's test)")
    p.add_argument("--tol", type=float, default=1e-4, help="largest allowed |diff| (1e-4)")
    p.add_argument("--finetune-tol", type=float, default=1e-3,
                   help="largest allowed |diff| of the fine-tune's per-step losses (1e-3)")
    p.add_argument("--studies", default=",".join(STUDIES), help="comma-separated subset")
    p.add_argument("--finetune-steps", type=int, default=None)
    p.add_argument("--no-warmup", action="store_true",
                   help="time each study's first call too (imports, one-time setup)")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="start no study after this many minutes (3.5; 60 with --small)")
    p.add_argument("--work", default="/tmp/bench_cuda", help="scratch folder (fp32 model, "
                   "checkpoints)")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local folders only: no hub look-ups
    run = harness.start(args)
    import torch

    n = dict(SIZES["small" if args.small else "full"])
    steps = args.finetune_steps or n["steps"]
    limit = args.max_minutes or (60 if args.small else 3.5)
    data, work = Path(args.data), Path(args.work)
    other = "cuda" if torch.cuda.is_available() and not args.cpu_only else "cpu"
    env = environment(run.facts)
    print("environment:", json.dumps(env))
    if other == "cpu":
        print("NOTE: no CUDA here (or --cpu-only): the second side runs on the CPU too, so "
              "this compares CPU with CPU.")
    base = str(fp32_model(data / "minilm", work / "minilm-fp32"))
    semeval = data / "data" / "semeval14_restaurants.xml"
    conllu = data / "data" / "ud_ewt_dev.conllu"
    report: dict = {"environment": env, "second_side": other, "sizes": n, "tol": args.tol,
                    "finetune_tol": args.finetune_tol, "rows": []}
    rows, t_start = report["rows"], time.perf_counter()
    run.rows = rows

    def save() -> None:  # after every row, so a run stopped at its time limit keeps its rows
        report["seconds"] = time.perf_counter() - t_start
        if torch.cuda.is_available():
            report["gpu_peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
        report["failed"] = [r["study"] for r in rows if r.get("verdict") not in ("PASS", "INFO")]
        run.write(**{k: v for k, v in report.items() if k != "rows"})

    # the fine-tunes: the recipe (timing; its second-side checkpoint is the classifier of the
    # studies) and a short one without dropout (the losses must agree)
    if not args.no_warmup:  # the trainer's first steps (allocations, kernels): untimed
        for dev in ("cpu", other):
            set_device(dev)
            finetune(base, work / "clf-warmup", 2)
    for name, n_steps, dropout in (("finetune", steps, True),
                                   ("finetune_nodrop", n["nodrop_steps"], False)):
        try:
            rows.append(finetune_row(name, base, work, n_steps, dropout, other,
                                     args.finetune_tol))
        except Exception as exc:
            rows.append({"study": name, "error": f"{type(exc).__name__}: {str(exc)[:200]}",
                         "traceback": traceback.format_exc(limit=-8)})
            print(rows[-1]["traceback"])
            print("  " + rows[-1]["error"])
        save()
    clf = str(work / "clf-other") if (work / "clf-other").is_dir() else str(work / "clf-cpu")

    def ctx_for(side, sizes=n):
        return SimpleNamespace(device=set_device("cpu" if side == "cpu" else other), base=base,
                               clf=clf, semeval=semeval, conllu=conllu, n=sizes)

    names = [s for s in args.studies.split(",") if s]
    if not args.no_warmup:  # imports, matplotlib's font cache (captum), first calls: untimed
        print("warm-up: every study on 2 examples, both sides (untimed) ...")
        tiny = {k: min(v, 2) for k, v in n.items()}
        report["warmup"] = [run_study(name, lambda side: ctx_for(side, tiny), args.tol)
                            for name in names]
        report["warmup_seconds"] = time.perf_counter() - t_start
    for name in names:
        if time.perf_counter() - t_start > 60 * limit:
            rows.append({"study": name, "error": f"skipped: past --max-minutes {limit:g}"})
        else:
            print(f"{name} ...")
            rows.append(run_study(name, ctx_for, args.tol))
        r = rows[-1]
        print("  " + (r.get("error") or f"cpu {r['cpu_s']:.2f}s, {other} {r['other_s']:.2f}s, "
                      f"max |diff| {r['max_abs_diff']:.2e} ({r['where']}): {r['verdict']}"))
        for key, x, y in r.get("over_tol", []):  # what differs, to tell a flipped count apart
            print(f"    over the tolerance: {key}: cpu {x!r}, {other} {y!r}")
        save()
    print(f"\nCPU vs {other.upper()} (tolerance {args.tol:g}; fine-tune losses without "
          f"dropout {args.finetune_tol:g}); {report['seconds']:.0f} s in all")
    print(table(rows, other))
    run.done(**{k: v for k, v in report.items() if k != "rows"})
    if args.json:
        print(f"wrote {args.json}")
    print("FAIL: " + ", ".join(report["failed"]) if report["failed"] else "ALL PASS")
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
