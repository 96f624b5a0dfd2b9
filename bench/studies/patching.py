"""Benchmark: causal patching of one pair (every head, every layer x position of the residual
stream, attention and MLP outputs) on the default-size model and on a BERT-base-size one, the
per-head map batched (all heads of a layer in one forward) against one forward per head.

    nice python -m bench.studies.patching [--skip-base]

Model: the example checkpoint when built (``python -m analysis aspects example``), else a
stand-in of the same size (the embedded encoder with a fresh NLI-M head, seed 0: the same
computation, so the same time); BERT-base size: a randomly initialised 12 x 12, 768-wide BERT
classifier (no download; the time does not depend on the weights). Targets (issue 32, idle 2
cores): every head of the embedded model for one pair <= 2 s; BERT-base per pair <= 15 s; the
corpus view on 165 pairs <= 3 min (``python -m analysis patching --model example --data
sample``). Wall-clock on a shared machine: read the ratio, and the load printed beside it.
"""

from __future__ import annotations

import numpy as np

from bench import harness
from bench.sizes.standins import bert_base_in_memory

TEXT, PAIR = "The pasta was delicious and the waiter was friendly.", "service"
COUNTER = TEXT.replace("friendly", "rude")


def example_or_stand_in():
    from analysis.absa.checkpoints import as_loaded
    from analysis.absa.example import example_ready, load_example
    from analysis.absa.finetune import make_classifier
    from analysis.core.models import load_model

    if example_ready():
        return load_example()[0], "the example checkpoint"
    base = load_model("default")
    return as_loaded(base, make_classifier(base, "nli_m", seed=0), "stand-in"), \
        "a stand-in (example not built): default encoder + fresh NLI-M head"


def one_per_head(loaded, text, pair, ctext, cpair) -> float:
    """The per-head map the slow way: one forward per head (baseline)."""
    from analysis.core.batching import collate
    from analysis.core.encoding import encode
    from analysis.core.forward import forward, forward_patched
    from analysis.patching.run import head_masks

    with harness.Timer() as t:
        encs = [encode(loaded.tokenizer, text, pair), encode(loaded.tokenizer, ctext, cpair)]
        inputs = [collate(loaded.tokenizer, [e]) for e in encs]
        src = forward(loaded.model, inputs=inputs[1], attentions=False,
                      capture=("context",)).captured["context"]
        T = encs[0].n_tokens
        for layer in range(loaded.n_layers):
            masks = head_masks(loaded.n_heads, T, src[layer].shape[-1])
            for m in masks:
                forward_patched(loaded.model, inputs[0], "heads", layer, src[layer][0],
                                m[None])
    return t.wall


def timed(loaded, sites):
    from analysis.patching import patch_pair

    r, t = harness.timed(lambda: patch_pair(loaded, TEXT, PAIR, COUNTER, PAIR, sites=sites))
    return t.wall, r


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--skip-base", action="store_true")
    args = ap.parse_args()
    run = harness.start(args)
    loaded, what = example_or_stand_in()
    timed(loaded, ("heads",))  # warm-up
    t_heads, r = timed(loaded, ("heads",))
    t_loop = one_per_head(loaded, TEXT, PAIR, COUNTER, PAIR)
    t_all, _ = timed(loaded, ("heads", "residual", "attention", "mlp"))
    print(f"{what}, {len(r.tokens)} tokens: every head batched {t_heads:.2f} s, one forward "
          f"per head {t_loop:.2f} s (x{t_loop / t_heads:.1f}); every head + layer x position "
          f"of 3 sites {t_all:.2f} s")
    run.ratio(f"{what}: one forward per head", t_loop, t_heads, "every head batched", digits=2)
    run.row(f"{what}: every head + layer x position of 3 sites", seconds=t_all)
    if not args.skip_base:
        base = bert_base_in_memory()
        timed(base, ("heads",))
        t_base, _ = timed(base, ("heads", "residual", "attention", "mlp"))
        print(f"BERT-base size (12 x 12, 768), {len(r.tokens)} tokens: every head + layer x "
              f"position of 3 sites {t_base:.2f} s")
        run.row("BERT-base size: every head + layer x position of 3 sites", seconds=t_base)
    print(f"max head effect {np.nanmax(r.heads):.3f}")
    run.done()


if __name__ == "__main__":
    main()
