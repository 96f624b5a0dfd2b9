"""Heavy work on a shared machine (issue 48): a job's CPU seconds with a load generator beside it
against the same job alone, under the old thread policy and the new one, in one run.

    nice python -m bench.server.shared                       # every job, ~15 minutes idle
    nice python -m bench.server.shared --jobs drift --busy 10 --warmup 60
    python -m bench.server.shared --list

Jobs (each in a fresh interpreter, so that the OpenMP runtime reads its environment):

- ``build``: the example checkpoint's build (``analysis.absa.example.build_example``, the
  recipe) for ``--build-steps`` training steps, into a scratch folder;
- ``drift``: Fine-tuning drift (``analysis.drift.run.compare_models``) of the default model
  against the example checkpoint (the default model with three heads' queries scaled when the
  example is not built) over ``--lines`` lines of 2,000 characters of SemEval-2014 reviews
  (../shared/data; the bundled sample's otherwise) at the demo's token cap (256);
- ``attribution``: every mixing method and integrated gradients (``analysis.attribution.
  attribute``) on one pair of ``--tokens`` tokens, the default model with a seeded head.

Policies:

- ``old``: torch's default threads (the cores), OpenMP's default waiting (GNU OpenMP spins
  before it sleeps); what a job did before issue 48;
- ``new``: ``analysis.core.execution.threads``: passive OpenMP waits (``child_env``), the
  job's torch threads from the load and re-checked at its progress reports (``heavy_work``,
  ``following_load``), as the queue's worker thread and a child process run a job.

Each (job, policy) runs alone, then with ``--busy`` busy processes (pure-Python loops at the
job's niceness, started ``--warmup`` seconds before so that the load average shows them). The
table gives each run's CPU seconds (the child's user + system), wall seconds and the load
average, and the ratio loaded / alone of the CPU seconds (target for ``new``: at most 1.5 at
load 10 or more).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import harness

ROOT, SEMEVAL = harness.ROOT, harness.SEMEVAL
JOBS = ("build", "drift", "attribution")
POLICIES = ("old", "new")
NICE = 10  # the server's jobs' niceness (ui/server/settings.py job_nice)


# ---------------------------------------------------------------- the jobs (in the child)

def long_lines(n: int, chars: int = 2000) -> list[str]:
    """``n`` lines of ``chars`` characters of review text."""
    if SEMEVAL.is_file():
        sents = re.findall(r"<text>(.*?)</text>", SEMEVAL.read_text("utf-8"))
    else:
        from analysis.absa.readers import load_sample

        sents = list(load_sample()["text"])
    lines, cur, k = [], "", 0
    while len(lines) < n:
        cur += sents[k % len(sents)] + " "
        k += 1
        if len(cur) >= chars:
            lines.append(cur[:chars])
            cur = ""
    return lines


def job_build(args, progress):
    from analysis.absa.example import build_example

    out = Path(tempfile.mkdtemp(prefix="bench-shared-")) / "example"
    build_example(out, progress, max_steps=args.build_steps)
    return f"{args.build_steps} steps"


def job_drift(args, progress):
    from dataclasses import replace

    from analysis.core.encoding import encode_corpus
    from analysis.core.example import example_ready
    from analysis.core.models import load_model
    from analysis.drift.pair import load_pair
    from analysis.drift.run import compare_models

    if example_ready():
        before, after = load_pair("default", "example")
        which = "default vs example"
    else:
        import copy

        import torch

        before, after = load_model("default"), load_model("default")
        after = replace(after, model=copy.deepcopy(after.model))
        with torch.no_grad():
            for layer in (1, 3, 5):
                after.model.encoder.layer[layer].attention.self.query.weight.mul_(1.5)
        which = "default vs default with 3 layers' queries scaled"
    before = replace(before, max_length=256)  # the demo's token cap
    corpus = encode_corpus(before.tokenizer, long_lines(args.lines), max_length=256)
    compare_models(before, after, corpus, progress=lambda d, t: progress(d / t, ""))
    return f"{args.lines} lines of 2,000 characters, 256 tokens, {which}"


def job_attribution(args, progress):
    from bench.sizes import inputs

    from analysis.attribution import attribute
    from analysis.attribution.run import METHODS

    import torch
    from dataclasses import replace
    from transformers import AutoModelForSequenceClassification

    from analysis.core.models import load_model

    torch.manual_seed(0)
    base = load_model("default")
    model = AutoModelForSequenceClassification.from_pretrained(
        base.model.name_or_path, num_labels=5, attn_implementation="eager").eval()
    loaded = replace(base, model=model)
    inputs.SEMEVAL = SEMEVAL
    text, pair = inputs.pair_of_length(loaded.tokenizer, args.tokens)
    progress(0.0, "")
    attribute(loaded, text, pair, methods=list(METHODS), steps=args.ig_steps)
    progress(1.0, "")
    return f"every method, {args.tokens} tokens, {args.ig_steps} IG steps"


def child(args) -> None:
    """Run one job under one policy; print its JSON line."""
    fn = {"build": job_build, "drift": job_drift, "attribution": job_attribution}[args.child]
    os.nice(max(0, NICE - os.nice(0)))
    with harness.Timer() as t:
        if args.policy == "new":
            from analysis.core.execution.threads import following_load, heavy_work

            with heavy_work(None, process=True, load_torch=True) as follower:
                what = fn(args, following_load(lambda *a: None, follower))
                threads = follower.threads
        else:
            import torch

            threads = torch.get_num_threads()
            what = fn(args, lambda *a: None)
    print("RESULT " + json.dumps({"cpu": t.cpu, "wall": t.wall, "what": what,
                                  "threads_last": threads,
                                  "wait": os.environ.get("OMP_WAIT_POLICY", "default")}),
          flush=True)


# ---------------------------------------------------------------- the driver

def start_busy(n: int) -> list[subprocess.Popen]:
    """``n`` load generator processes: a pure-Python loop each, at the jobs' niceness."""
    code = "import os; os.nice(max(0, %d - os.nice(0)))\nwhile True: pass" % NICE
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def run_child(job: str, policy: str, args) -> dict:
    from analysis.core.execution.threads import child_env

    env = child_env() if policy == "new" else {k: v for k, v in os.environ.items()
                                               if k not in ("OMP_WAIT_POLICY",)}
    cmd = [sys.executable, "-m", __spec__.name, "--child", job, "--policy", policy,
           "--lines", str(args.lines), "--tokens", str(args.tokens),
           "--ig-steps", str(args.ig_steps), "--build-steps", str(args.build_steps)]
    load0 = harness.load()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
    if out.returncode or not line:
        return {"error": (out.stderr.strip().splitlines() or ["no output"])[-1][:160]}
    res = json.loads(line[-1][len("RESULT "):])
    res["load"] = (load0 + harness.load()) / 2
    return res


def main(argv=None) -> int:
    p = harness.parser(__doc__, torch=False)
    p.add_argument("--jobs", default=",".join(JOBS))
    p.add_argument("--policies", default=",".join(POLICIES))
    p.add_argument("--busy", type=int, default=10, help="busy processes beside the loaded run")
    p.add_argument("--warmup", type=float, default=60.0,
                   help="seconds the busy processes run before the loaded run starts")
    p.add_argument("--lines", type=int, default=60, help="drift: lines of 2,000 characters")
    p.add_argument("--tokens", type=int, default=256, help="attribution: tokens of the pair")
    p.add_argument("--ig-steps", type=int, default=20)
    p.add_argument("--build-steps", type=int, default=60)
    p.add_argument("--list", action="store_true")
    p.add_argument("--child", choices=JOBS, help=argparse.SUPPRESS)
    p.add_argument("--policy", choices=POLICIES, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args)
        return 0
    if args.list:
        print("jobs:", ", ".join(JOBS), "| policies:", ", ".join(POLICIES))
        return 0
    jobs = [j for j in args.jobs.split(",") if j]
    policies = [q for q in args.policies.split(",") if q]
    run = harness.start(args)
    print(f"loaded runs beside {args.busy} busy processes", flush=True)
    rows = []
    for job in jobs:
        for policy in policies:
            alone = run_child(job, policy, args)
            print(f"{job} {policy} alone: {alone}", flush=True)
            busy = start_busy(args.busy)
            try:
                time.sleep(args.warmup)
                loaded = run_child(job, policy, args)
            finally:
                for proc in busy:
                    proc.kill()
                    proc.wait()
            print(f"{job} {policy} loaded: {loaded}", flush=True)
            rows.append((job, policy, alone, loaded))
            time.sleep(args.warmup / 2)  # the load average settles before the next alone run
    print("\n| job | policy | alone CPU-s | alone wall s (load) | loaded CPU-s | loaded wall s "
          "(load) | CPU ratio |\n|---|---|---:|---:|---:|---:|---:|")
    for job, policy, a, b in rows:
        if "error" in a or "error" in b:
            print(f"| {job} | {policy} | {a.get('error', '')} | | {b.get('error', '')} | | |")
            continue
        print(f"| {job} | {policy} | {a['cpu']:.1f} | {a['wall']:.1f} ({a['load']:.1f}) | "
              f"{b['cpu']:.1f} | {b['wall']:.1f} ({b['load']:.1f}) | {b['cpu'] / a['cpu']:.2f}x |")
        run.row(f"{job} {policy}", alone=a, loaded=b, cpu_ratio=b["cpu"] / a["cpu"])
    run.done()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
