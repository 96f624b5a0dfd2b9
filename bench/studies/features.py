"""Benchmark: the features study (issue 47).

    nice python -m bench.studies.features [--model default] [--tokens 50000] [--layer 3]
        [--m 0] [--epochs 0] [--threads 2]

1. *The floor*: the batched forward passes that collect the activations of ``--tokens``
   tokens (sentences of ../shared/data/ud_english_ewt/en_ewt-ud-dev.conllu, the bundled
   corpora where the shared data is absent, repeated until there are enough; the one forward
   path, hidden states, batch 32), timed alone.
2. *Training*: a top-k SAE on those activations at ``--layer`` (``--m`` features, 0: the
   default size for the corpus; k = 32; ``--epochs`` passes, 0: the default token budget),
   the whole ``train_sae`` call;
   then the held-out FVE, L0 and dead share of a 15% split, so a fast run is also a good one.
   Target: floor + training <= 2 minutes for the embedded model on 50,000 tokens (idle 2
   cores), <= 10 minutes for BERT-base (``--model bert-base``: the seeded stand-in with
   BERT-base's config, bench/sizes/standins.py, built once; its weights are random, so its
   FVE says nothing of a trained BERT-base, only its time counts; or a real BERT-base's id
   or folder where one is at hand).
3. *A feature's dashboard*: contexts, histogram and alignment of 20 random live features from
   the codes (what the page does when a feature is opened). Target: <= 1 s each.

The ratio (floor + training) / floor is printed beside the times; the load average too (a
shared machine's times are noisy).
"""

from __future__ import annotations

import sys

import numpy as np

from bench import harness

EWT = harness.EWT_DEV


def sentences() -> list[str]:
    if EWT.is_file():
        from analysis.syntax.treebank import read_conllu

        return [" ".join(r["words"]) for r in read_conllu(EWT)]
    from analysis.absa.readers import load_sample
    from analysis.core.corpus import sample_corpus

    return list(load_sample()["text"]) + list(sample_corpus()["text"])


def main() -> int:
    ap = harness.parser(__doc__, threads=2)
    ap.add_argument("--model", default="default",
                    help="a model spec, or a size of bench/sizes/standins.py (bert-base, ...)")
    ap.add_argument("--tokens", type=int, default=50_000)
    ap.add_argument("--layer", type=int, default=3)
    ap.add_argument("--m", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=0, help="0: the default (token budget)")
    args = ap.parse_args()
    run = harness.start(args)

    from analysis.core.encoding import encode
    from analysis.features.activations import Tokens
    from analysis.features.browser import codes, dashboard
    from analysis.features.quality import firing_counts, reconstruction_scores
    from analysis.features.train import TrainSettings, train_sae
    from analysis.core.forward import forward_batches
    from analysis.core.models import load_model

    from bench.sizes import standins

    spec = args.model
    if spec in standins.SHORT:  # a real size: its seeded stand-in with the real config
        spec = str(standins.build(standins.SHORT[spec])[0])
    loaded = load_model(spec)
    texts = sentences()
    encs, n = [], 0
    while n < args.tokens:
        for t in texts:
            e = encode(loaded.tokenizer, t, max_length=128)
            encs.append(e)
            n += e.n_tokens
            if n >= args.tokens:
                break
    print(f"{loaded.name}: {len(encs)} sentences, {n} tokens, layer {args.layer}, "
          f"{args.threads} threads; load {harness.load():.2f}")
    rows = []
    with harness.Timer() as t:
        for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encs, 32,
                                       attentions=False, hidden_states=True):
            for b in range(len(idx)):
                rows.append(fw.hidden_states[args.layer][b, :fw.lengths[b]].float().numpy())
        x = np.concatenate(rows)
    floor = t.wall
    print(f"floor (forwards collecting the activations): {floor:.1f} s; load {harness.load():.2f}")
    held = np.random.default_rng(0).random(len(x)) < 0.15
    sae, t = harness.timed(lambda: train_sae(x[~held], args.layer, TrainSettings(
        m=args.m or None, k=32, epochs=args.epochs or None)))
    train = t.wall
    q = reconstruction_scores(sae, x[held], x[~held].mean(0))
    dead = float((firing_counts(sae, x) == 0).mean())
    print(f"training: {train:.1f} s (m = {sae.m}, {sae.card['training']['epochs']} epochs, "
          f"{sae.card['training']['steps']} steps); "
          f"floor + training {floor + train:.1f} s = {(floor + train) / floor:.2f}x the floor; "
          f"load {harness.load():.2f}")
    print(f"held-out FVE {q['fve']:.3f}, L0 {q['l0']:.1f}, dead {100 * dead:.1f}%")
    run.ratio("floor + training", floor + train, floor, floor_seconds=floor,
              training_seconds=train, fve=q["fve"], l0=q["l0"], dead=dead)
    tokens = Tokens(np.repeat(np.arange(len(rows)), [len(r) for r in rows]).astype(np.int32),
                    np.concatenate([np.arange(len(r)) for r in rows]).astype(np.int32),
                    [t for e in encs for t in e.tokens],
                    np.concatenate([np.asarray(e.special, bool) for e in encs]), held)
    c = codes(sae, x, tokens)
    alive = np.flatnonzero(c.fires.any(0))
    times = []
    for f in np.random.default_rng(1).choice(alive, min(20, len(alive)), replace=False):
        with harness.Timer() as t:
            dashboard(c, int(f), {"special": ["yes" if s else "no" for s in tokens.special]})
        times.append(t.wall)
    print(f"a feature's dashboard: median {1000 * np.median(times):.0f} ms, max "
          f"{1000 * max(times):.0f} ms over {len(times)} features; load {harness.load():.2f}")
    run.row("a feature's dashboard", median_seconds=float(np.median(times)),
            max_seconds=max(times), features=len(times))
    run.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
