"""Benchmark: the attribution study (issue 19), all numbers and ratios in one run.

    nice python -m bench.studies.attribution [--tokens 128] [--reps 3] [--max-examples N]
                                           [--skip-loop] [--skip-faithfulness]

1. Every mixing method for every layer of a --tokens pair (SemEval-2014 reviews from
   ../shared/data as segment A, "what about the service of it ?" as segment B, trimmed to exactly
   that many tokens; a fixed review when the folder is absent) on the embedded default model:
   the one forward with its captures, raw attention, attention norms, norms with residual and
   layer norm plus ALTI, value zeroing (batched), and all of them in one
   ``analysis.attribution.run.mixing_layers`` call (target: at most 3 s on 2 cores).
2. Value zeroing batched (all n zeroings of a layer in one pass: the rest of the layer after
   its attention on the n x n exact LayerNorm inputs; and the whole layer rerun on n copies)
   against the paper's one-token-at-a-time loop (``bench/references/attribution.py``): times,
   speed-ups, max differences.
3. Integrated gradients, 50 steps, on the same pair (target: at most 3 s): the example
   checkpoint when it is built, else the default encoder with a seeded untrained
   classification head (the same computation; said in the output).
4. Faithfulness of every method on the example checkpoint's held-out ABSA pairs (target: at
   most 3 minutes); skipped, saying so, when the checkpoint is not built.
5. ``--alti-precision [MODEL]`` (alone): ALTI with its L1 distances in float32 summed in
   float64 (the page's) against float64 (the definition to 1e-12) on every held-out pair
   (issue 48): pairs whose input-score ranking changed (target 0), the largest difference of
   any layer's matrix and of the input scores, and both paths' time.

Times are best of --reps (1 and 4: one run) wall-clock seconds; print ``uptime`` beside them.
"""

from __future__ import annotations

import numpy as np

from bench import harness

PAIR = "what about the service of it ?"
FALLBACK = ("The food was great but the service was slow, the waiter forgot our drinks twice "
            "and the dessert arrived cold. ")


def pair_text(tokenizer, n_tokens: int) -> str:
    """Segment A such that [CLS] A [SEP] PAIR [SEP] holds exactly ``n_tokens`` tokens (or as
    close as whole words allow)."""
    src = harness.SHARED
    words = []
    xml = sorted(src.glob("**/*Restaurants_Train*.xml")) if src.is_dir() else []
    if xml:
        import re

        text = xml[0].read_text(encoding="utf-8", errors="ignore")
        words = " ".join(re.findall(r"<text>(.*?)</text>", text)[:200]).split()
    if not words:
        words = (FALLBACK * 40).split()
    lo, hi = 1, len(words)
    while lo < hi:  # the most words that fit
        mid = (lo + hi + 1) // 2
        n = len(tokenizer(" ".join(words[:mid]), PAIR)["input_ids"])
        lo, hi = (mid, hi) if n <= n_tokens else (lo, mid - 1)
    return " ".join(words[:lo])


def best(fn, reps: int):
    r = harness.repeat(fn, reps)
    return r.best, r.last


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-examples", type=int, default=None)
    ap.add_argument("--skip-loop", action="store_true")
    ap.add_argument("--skip-faithfulness", action="store_true")
    ap.add_argument("--alti-precision", nargs="?", const="default", default=None,
                    metavar="MODEL", help="5. only: ALTI float32 vs float64 on the held-out "
                    "pairs (MODEL: default, example, a folder)")
    args = ap.parse_args()
    run = harness.start(args)
    if args.alti_precision:
        alti_precision(args.alti_precision, run)
        run.done()
        return

    from analysis.attribution.mixing import decomposed_mixing, head_mean, layer_inputs
    from analysis.attribution.run import MIXING, encode_input, mixing_layers
    from analysis.attribution.mixing import normalise_rows
    from analysis.attribution.zeroing import value_zeroing, value_zeroing_layer_rerun
    from analysis.core.forward import forward
    from analysis.core.hooks import layer_parts
    from analysis.core.models import load_model
    from bench.references.attribution import value_zeroing_loop

    loaded = load_model("default")
    text = pair_text(loaded.tokenizer, args.tokens)
    enc = encode_input(loaded, text, PAIR)
    print(f"input: {enc.n_tokens} tokens (pair), default model {loaded.shape}")
    parts = layer_parts(loaded.model)

    def one_forward():
        return forward(loaded.model, loaded.tokenizer, [enc], hidden_states=True,
                       capture=("value_vectors",))

    t_fw, fw = best(one_forward, args.reps)
    lis = layer_inputs(fw, parts)
    states = [h[0, :enc.n_tokens].float() for h in fw.hidden_states]
    rows = [("forward + captures", t_fw)]
    rows.append(("raw attention (6 layers)", best(lambda: [head_mean(li.probs.numpy())
                                                           for li in lis], args.reps)[0]))
    rows.append(("attention norms", best(lambda: [decomposed_mixing(li, ("norm",))
                                                  for li in lis], args.reps)[0]))
    rows.append(("norms with residual+LN and ALTI", best(
        lambda: [decomposed_mixing(li, ("norm_resln", "alti")) for li in lis], args.reps)[0]))
    t_vz, vz = best(lambda: value_zeroing(loaded.model, lis, states), args.reps)
    rows.append(("value zeroing, batched (rest of the layer)", t_vz))
    t_rr, rr = best(lambda: normalise_rows(np.stack([
        value_zeroing_layer_rerun(loaded.model, layer, states[layer], states[layer + 1])
        for layer in range(len(lis))])), args.reps)
    rows.append(("value zeroing, batched (whole layer rerun)", t_rr))
    t_all, _ = best(lambda: mixing_layers(loaded, enc, MIXING), args.reps)
    rows.append(("ALL mixing methods, every layer (one call)", t_all))
    for name, t in rows:
        print(f"  {name:45s} {t:8.3f} s")
        run.row(name, seconds=t)
    print(f"target: all mixing methods <= 3 s: {'met' if t_all <= 3 else 'NOT met'} "
          f"({t_all:.2f} s)")

    if not args.skip_loop:
        t_loop, ref = best(lambda: value_zeroing_loop(loaded.model, states), 1)
        print(f"value zeroing: loop {t_loop:.3f} s, batched {t_vz:.3f} s, speed-up "
              f"{t_loop / t_vz:.2f}x, max |diff| {np.abs(ref - vz).max():.2e}; whole-layer "
              f"rerun batched {t_rr:.3f} s ({t_loop / t_rr:.2f}x, max |diff| "
              f"{np.abs(ref - rr).max():.2e})")
        run.row("value zeroing, loop", seconds=t_loop, ratio=t_loop / t_vz,
                max_abs_diff=float(np.abs(ref - vz).max()))

    classifier, what = _classifier()
    from analysis.attribution.gradients import gradient_scores

    enc_c = encode_input(classifier, text, PAIR)
    t_ig, g = best(lambda: gradient_scores(classifier, enc_c, steps=50), args.reps)
    print(f"integrated gradients + gradient x input, 50 steps ({what}): {t_ig:.3f} s, "
          f"completeness gap {g.completeness_gap:.2e} ({100 * g.completeness_relative:.3f}% "
          f"of F(x) - F(x')); target <= 3 s: {'met' if t_ig <= 3 else 'NOT met'}")
    run.row(f"integrated gradients, 50 steps ({what})", seconds=t_ig)
    if not args.skip_faithfulness:
        faithfulness_part(args, classifier, what, run)
    run.done()


def faithfulness_part(args, classifier, what: str, run) -> None:
    """4. (see the module docstring)."""
    if what != "example checkpoint":
        print("faithfulness: skipped (the example checkpoint is not built: "
              "python -m analysis aspects example)")
        return
    from analysis.attribution.data import heldout_examples
    from analysis.attribution.faithfulness import faithfulness

    texts, pairs, notes = heldout_examples(args.max_examples)
    f, t = harness.timed(lambda: faithfulness(classifier, texts, pairs))
    t_f = t.wall
    run.row(f"faithfulness, every method, {f.n_examples} held-out pairs", seconds=t_f)
    print(f"faithfulness, every method, {f.n_examples} held-out pairs: {t_f:.1f} s "
          f"({t_f / f.n_examples:.2f} s per example); target <= 180 s: "
          f"{'met' if t_f <= 180 else 'NOT met'}")
    print(f"  {'method':22s} {'comp AOPC':>10s} {'suff AOPC':>10s} {'LOO rho':>8s}")
    for name, v in list(f.methods.items()) + [("random", f.random)]:
        print(f"  {name:22s} {v['comprehensiveness']['mean']:10.4f} "
              f"{v['sufficiency']['mean']:10.4f} {v['loo_spearman']['mean']:8.3f}")
    print(f.to_json()["reading"])


def alti_precision(spec: str, run) -> None:
    """5. (see the module docstring)."""
    from analysis.attribution import load_for_attribution
    from analysis.attribution.data import heldout_examples
    from analysis.attribution.mixing import rollout
    from analysis.attribution.run import encode_input, mixing_layers

    loaded = load_for_attribution(spec)
    texts, pairs, _ = heldout_examples()
    changed, worst_m, worst_s, secs = 0, 0.0, 0.0, {"float64": 0.0, "float32": 0.0}
    for text, pair in zip(texts, pairs):
        enc = encode_input(loaded, text, pair)
        mats = {}
        for p in secs:
            out, t = harness.timed(lambda: mixing_layers(loaded, enc, ("alti",), precision=p))
            mats[p] = out[0]["alti"]
            secs[p] += t.wall
        a, b = rollout(mats["float64"], False)[-1, 0], rollout(mats["float32"], False)[-1, 0]
        changed += not (np.argsort(-a, kind="stable") == np.argsort(-b, kind="stable")).all()
        worst_m = max(worst_m, float(np.abs(mats["float64"] - mats["float32"]).max()))
        worst_s = max(worst_s, float(np.abs(a - b).max()))
    print(f"ALTI float32 vs float64, {loaded.name}, {len(texts)} held-out pairs: "
          f"{changed} input-score rankings changed (target 0); largest difference: layer "
          f"matrices {worst_m:.1e}, input scores {worst_s:.1e}; time float64 "
          f"{secs['float64']:.1f} s, float32 {secs['float32']:.1f} s  [load {harness.load():.2f}]")
    run.row("ALTI float32 vs float64", changed=changed, largest_matrix_diff=worst_m,
            largest_score_diff=worst_s, seconds_float64=secs["float64"],
            seconds_float32=secs["float32"])


def _classifier():
    """The example checkpoint with its head, else the default encoder with a seeded,
    untrained classification head (5 labels, as the example)."""
    from analysis.absa.example import example_ready
    from analysis.attribution import load_for_attribution

    if example_ready():
        return load_for_attribution("example"), "example checkpoint"
    import torch
    from transformers import AutoModelForSequenceClassification

    from analysis.core.models import load_model

    torch.manual_seed(0)
    base = load_model("default")
    model = AutoModelForSequenceClassification.from_pretrained(
        base.model.name_or_path, num_labels=5, attn_implementation="eager").eval()
    from dataclasses import replace

    return replace(base, model=model), "default encoder + untrained head"


if __name__ == "__main__":
    main()
