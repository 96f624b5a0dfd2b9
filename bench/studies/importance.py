"""Benchmark: every single-head and single-layer ablation (72 + 6 on the default-size model)
on 200 held-out ABSA pairs, batched against one evaluation per ablation, in one run.

    nice python -m bench.studies.importance [--pairs 200] [--method uniform|mask|both]
    nice python -m bench.studies.importance --pairs 40 --method mask \
        --model ~/.cache/attention-dashboard/standins/bert-base-uncased-clf

``--model``: any classifier checkpoint folder with its card (``load_checkpoint``), e.g. a
stand-in of bench/sizes/standins.py (BERT-base: 144 heads + 12 layers). Each line gives the wall
time and the process's CPU seconds (every thread) of both runs.

Model: the example checkpoint (``python -m analysis aspects example``); when it is not built,
a stand-in of the same size and task (the embedded encoder with a freshly initialised NLI-M
classifier head, seed 0: the same computation, so the same time) and the output says so.
Pairs: SemEval-2014 restaurant sentences from ../shared/data (never seen by the example, which
is trained on the bundled sample) as NLI-M pairs, 5 per sentence; without the shared data, the
example's held-out sentences of the bundled sample.

- *batched*: :func:`analysis.importance.ablate.run_ablations` (pairs tokenised and padded once;
  ablations grouped by first layer, the batch replicated from that layer on, several ablations
  per forward up to ``--max-tokens`` rows x tokens);
- *loop*: :func:`bench.references.importance.ablations_loop`, one evaluation per ablation.

Prints both times, the speed-up and the largest logit difference (target: batched <= 180 s on
2 cores, difference <= 1e-4). Wall-clock on a shared machine: read the ratio, and the load
printed beside it.
"""

from __future__ import annotations

import numpy as np

from bench import harness

DATA = harness.SEMEVAL


def model_and_pairs(n_pairs: int, folder: str | None = None):
    from analysis.absa.example import example_ready, load_example, split_sample
    from analysis.absa.finetune import make_classifier
    from analysis.absa.readers import load_absa
    from analysis.absa.checkpoints import as_loaded
    from analysis.absa.tasks import build_examples
    from analysis.core.models import load_model

    if folder:
        from analysis.absa.checkpoints import load_checkpoint

        loaded, card = load_checkpoint(folder)
        what = f"{folder} ({loaded.n_layers} x {loaded.n_heads})"
    elif example_ready():
        loaded, card = load_example()
        what = "the example checkpoint"
    else:
        base = load_model("default")
        loaded = as_loaded(base, make_classifier(base, "nli_m", seed=0), "stand-in")
        card = {"task": "nli_m", "pair_order": "review-aux", "max_length": 64}
        what = "a stand-in (example not built): default encoder + fresh NLI-M head"
    sentences = load_absa(str(DATA)) if DATA.is_file() else split_sample()[1]
    examples = build_examples(sentences.select(range(min(len(sentences), n_pairs // 5 + 1))),
                              card["task"], card["pair_order"])[:n_pairs]
    return loaded, card, examples, what


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--method", choices=("uniform", "mask", "both"), default="both")
    ap.add_argument("--max-tokens", type=int, default=None)
    ap.add_argument("--skip-loop", action="store_true", help="time the batched runner only")
    ap.add_argument("--model", default=None, help="a classifier checkpoint folder (default: "
                    "the example checkpoint)")
    args = ap.parse_args()
    run = harness.start(args)

    from analysis.absa.finetune import _tokenize
    from analysis.importance.ablate import MAX_TOKENS, run_ablations, single_ablations
    from analysis.importance.evalset import EvalSet
    from analysis.importance.scoring import AbsaScorer
    from bench.references.importance import ablations_loop

    loaded, card, examples, what = model_and_pairs(args.pairs, args.model)
    enc = _tokenize(loaded.tokenizer, examples, int(card["max_length"]))
    ev = EvalSet("bench", {k: list(enc[k]) for k in enc.keys()},
                 np.array([e.label for e in examples]), np.array([e.sentence for e in examples]),
                 AbsaScorer(examples, card["task"]))
    disabled = single_ablations(loaded.n_layers, loaded.n_heads)[1:]  # every head + layer
    max_tokens = args.max_tokens or MAX_TOKENS
    print(f"model: {what}; {len(examples)} pairs, {len(disabled)} ablations, max_tokens "
          f"{max_tokens}")
    for method in (("uniform", "mask") if args.method == "both" else (args.method,)):
        fast, t = harness.timed(lambda: run_ablations(loaded, ev, disabled, method,
                                                      max_tokens=max_tokens))
        t_fast, c_fast = t.wall, t.cpu
        line = f"{method:8s} batched {t_fast:7.1f} s ({c_fast:.0f} CPU-s)"
        numbers = {"seconds": t_fast, "cpu_seconds": c_fast}
        if not args.skip_loop:
            slow, t = harness.timed(lambda: ablations_loop(loaded, examples, disabled, method,
                                                           int(card["max_length"])))
            t_loop, c_loop = t.wall, t.cpu
            diff = float(np.abs(fast - slow).max())
            line += (f"   loop {t_loop:7.1f} s ({c_loop:.0f} CPU-s)   speed-up "
                     f"{t_loop / t_fast:4.2f}x wall, {c_loop / c_fast:4.2f}x CPU   max |diff| "
                     f"{diff:.1e}")
            numbers.update(loop_seconds=t_loop, loop_cpu_seconds=c_loop,
                           ratio=t_loop / t_fast, ratio_cpu=c_loop / c_fast, max_abs_diff=diff)
        print(line + f"   (load {harness.load():.2f})", flush=True)
        run.row(f"{method} batched", **numbers)
    run.done()


if __name__ == "__main__":
    main()
