"""Benchmark: before/after comparison pipeline vs a plain per-example loop.

Corpus: the first 1,000 sentences of SemEval-2014 restaurants train (../shared/data).
"After": the default model with the queries of a few heads perturbed, saved to a temp folder
and loaded back like any fine-tuned checkpoint.

- pipeline: ``analysis.drift.compare_models`` - both models on the same length-sorted
  batches, every measure (per-head cosine, RSA, CKA, no-op statistics, pattern features)
  accumulated per batch.
- baseline: for each example, one forward of each model and the per-head cosine of the
  cropped maps (``head_cosine``): the same cosine map and nothing else.
- batched, cosine only: ``bench.references.drift.batched_head_cosine``, the pipeline's batches
  and masks computing only that cosine map (the loop's work, batched).

Prints examples/s of both, the ratio, and the max abs difference of the per-example cosine
maps (must be <= 1e-4), and the time of the same batched forwards with nothing else (the
floor of any batched pipeline here, so loop / forwards-only is the largest ratio this machine
allows). Run with ``nice python -m bench.studies.drift [--n 1000]``. Runs go
pipeline, loop, pipeline; the pipeline's time is the mean of its two runs.
"""

from __future__ import annotations

import copy
import resource
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from analysis.core.corpus import read_corpus
from analysis.core.encoding import Corpus, encode_dataset
from analysis.core.forward import forward, forward_batches
from analysis.core.models import load_model
from analysis.drift import compare_models, head_cosine, load_pair
from bench import harness
from bench.references.drift import batched_head_cosine

DATA = harness.SEMEVAL


def perturbed_copy(base, folder: Path) -> str:
    """Save the default model with the queries of three heads (layers 4-6) scaled."""
    model = copy.deepcopy(base.model)
    dh = model.config.hidden_size // base.n_heads
    with torch.no_grad():
        for layer, head, scale in ((3, 1, 1.5), (4, 7, 2.0), (5, 2, 3.0)):
            model.encoder.layer[layer].attention.self.query.weight[
                head * dh:(head + 1) * dh] *= scale
    model.save_pretrained(folder)
    base.tokenizer.save_pretrained(folder)
    return str(folder)


def plain_loop(before, after, encodings) -> np.ndarray:
    out = np.zeros((len(encodings), before.n_layers, before.n_heads))
    for i, enc in enumerate(encodings):
        mb = forward(before.model, before.tokenizer, [enc]).maps(0)
        ma = forward(after.model, after.tokenizer, [enc]).maps(0)
        out[i] = head_cosine(mb, ma)
    return out


def forwards_only(before, after, encodings, batch_size: int) -> None:
    """The pipeline's batches through both models (attentions and hidden states) and nothing
    else: the floor of any batched pipeline on this machine."""
    runs = [forward_batches(m.model, before.tokenizer, encodings, batch_size, hidden_states=True)
            for m in (before, after)]
    for _ in zip(*runs):
        pass


def main() -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    if not DATA.is_file():
        print(f"skip: {DATA} not found")
        return 0
    run = harness.start(args)
    base = load_model("default")
    with tempfile.TemporaryDirectory() as tmp:
        before, after = load_pair("default", perturbed_copy(base, Path(tmp) / "after"))
        ds = read_corpus(DATA, max_examples=args.n)
        corpus = encode_dataset(before.tokenizer, ds, max_examples=args.n)
        n = len(corpus.encodings)
        n_tok = sum(e.n_tokens for e in corpus.encodings)
        print(f"{n} SemEval-2014 sentences, {n_tok} tokens (mean {n_tok / n:.1f})")
        # warm-up
        compare_models(before, after, Corpus(corpus.encodings[:8], list(range(8))))
        plain_loop(before, after, corpus.encodings[:8])

        # pipeline, loop, pipeline: the pipeline's time is the mean of the runs around the
        # loop, so that load from other processes on a shared machine hits both alike.
        def pipeline():
            return compare_models(before, after, corpus, batch_size=args.batch_size)

        result, t1 = harness.timed(pipeline)
        ref, t = harness.timed(lambda: plain_loop(before, after, corpus.encodings))
        t_loop = t.wall
        _, t2 = harness.timed(pipeline)
        t_pipe = [t1.wall, t2.wall]
        quick, t = harness.timed(lambda: batched_head_cosine(before, after, corpus.encodings,
                                                             args.batch_size))
        t_quick = t.wall
        _, t = harness.timed(lambda: forwards_only(before, after, corpus.encodings,
                                                   args.batch_size))
        t_fwd = t.wall
        print(f"runs (s): pipeline {t_pipe[0]:.1f}, loop {t_loop:.1f}, pipeline {t_pipe[1]:.1f}, "
              f"batched cosine only {t_quick:.1f}, forwards only {t_fwd:.1f}")
        t_pipe = sum(t_pipe) / 2

    diff = float(np.abs(result.cosine_examples - ref).max())
    diff_q = float(np.abs(quick - ref).max())
    print(f"pipeline (all measures, batch {args.batch_size}): {t_pipe:7.1f} s  "
          f"{n / t_pipe:7.1f} examples/s")
    print(f"plain per-example loop (cosine only):  {t_loop:7.1f} s  {n / t_loop:7.1f} examples/s")
    print(f"ratio pipeline / loop: {t_loop / t_pipe:.2f}x   max abs diff of per-example cosine "
          f"maps: {diff:.2e} ({'ok' if diff <= 1e-4 else 'FAIL'} <= 1e-4)")
    print(f"batched, cosine only (the loop's work):  {t_quick:7.1f} s  {n / t_quick:7.1f} "
          f"examples/s  ratio {t_loop / t_quick:.2f}x  max abs diff {diff_q:.2e}")
    print(f"the batched forwards alone take {t_fwd:.1f} s ({t_fwd / t_pipe:.0%} of the pipeline): "
          f"no pipeline of these forwards can beat the loop by more than {t_loop / t_fwd:.2f}x "
          "here")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    run.ratio("pipeline (all measures)", t_pipe, t_fwd, "the forwards alone",
              examples_per_s=n / t_pipe, max_abs_diff=diff)
    run.ratio("plain per-example loop (cosine only)", t_loop, t_fwd, "the forwards alone",
              examples_per_s=n / t_loop)
    run.ratio("batched, cosine only", t_quick, t_fwd, "the forwards alone",
              examples_per_s=n / t_quick, max_abs_diff=diff_q)
    cos = result.cosine
    low = np.dstack(np.unravel_index(np.argsort(cos, axis=None)[:3], cos.shape))[0]
    print("most changed heads (layer-head, 1-indexed): " +
          ", ".join(f"{l + 1}-{h + 1} {cos[l, h]:.3f}" for l, h in low))
    print(f"RSA per layer: {np.round(result.rsa, 4).tolist()}")
    print(f"CKA per layer: {np.round(result.cka, 4).tolist()}")
    run.done()
    return 0 if max(diff, diff_q) <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
