"""Benchmark: the representations study (issue 21), two models, same run, same machine.

    nice python -m bench.studies.representations [--sentences 1000] [--after example]
        [--repeats 5] [--threads-baseline]

Models: the embedded default (all-MiniLM-L6-v2, 7 hidden-state layers with the embeddings) and
``--after`` (default: the example checkpoint when it is built, else the default model again,
which the output says).

1. *One input of 128 tokens*: a review text cut to exactly 128 tokens; both models' forward
   passes first (timed apart), then every layer's projection for the two models with one fit
   (``pca`` and ``aligned``; median of ``--repeats``). Target: at most 1 s. Then ``tsne`` and
   ``umap`` (options without a target; UMAP's first call compiles its numba code, the only
   real UMAP run of the project's checks: the tests stand a recorder in for it).
2. *Corpus probes*: the first ``--sentences`` (1,000) sentences of
   ../shared/data/ud_english_ewt/en_ewt-ud-dev.conllu: word vectors of every layer from ONE
   batched pass per model (``treebank_words``), then the cross-validated UPOS probe (5 folds
   by sentence) at all 7 layers of both models, anisotropy and self-similarity. Target: the
   whole, passes included, in at most 2 minutes on 2 cores.
3. ``--threads-baseline``: layer 3's probe by scikit-learn (``references/representations.py``,
   the path before issue 48) with the BLAS/OpenMP threads left at their default instead of one (why
   :mod:`analysis.representations.threads` exists).
4. ``--shards K``: the corpus part as its map/merge job (``RepresentationsJob``) in one shard
   (``run_local``) and in K shards (``run_sharded``), both models, probes without the scatter:
   the wall time of each and the largest difference of their probe and curve values (the
   shards' batches are padded differently: float rounding only).

Times on a shared machine are noisy: the load average is printed beside them.
"""

from __future__ import annotations

from bench import harness

DATA = harness.EWT_DEV

TEXT = ("The pasta was superb and the tiramisu even better, but the waiter ignored us for "
        "twenty minutes, the bread arrived cold, and the bill had two drinks we never "
        "ordered. ")


def _f(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def models(after: str):
    from analysis.core.example import example_ready
    from analysis.core.models import load_model

    a = load_model("default")
    if after == "example" and not example_ready():
        print("note: the example checkpoint is not built; the second model is the default "
              "again (python -m analysis aspects example builds it)")
        return a, load_model("default")
    return a, load_model(after)


def text_of(tokenizer, n: int = 128) -> str:
    """A text that encodes to exactly ``n`` tokens with [CLS] and [SEP]."""
    ids = tokenizer(TEXT * 8, add_special_tokens=False)["input_ids"][: n - 2]
    return tokenizer.decode(ids)


def one_input(a, b, repeats: int, run) -> None:
    from analysis.representations.single import states_projection
    from analysis.representations.states import encode_input, input_states

    text = text_of(a.tokenizer)
    enc = encode_input(a, text)
    print(f"\n1. one input: {enc.n_tokens} tokens, {a.name} vs {b.name}")
    with harness.Timer() as c:
        sa = input_states(a, text, encoding=enc)
        sb = input_states(b, text, encoding=encode_input(b, text))
    print(f"   forward passes (both models)          {c}")
    states_projection(sa, sb, "pca")  # imports and first-call costs out of the timing
    for method in ("pca", "aligned"):
        r = harness.repeat(lambda: states_projection(sa, sb, method), repeats)
        print(f"   {method:8s} every layer, two models   median {r.median:.3f} s "
              f"(min {r.best:.3f}, max {r.worst:.3f}; target <= 1 s)  "
              f"[load {harness.load():.2f}]")
        run.row(f"one input: {method}, every layer, two models", seconds=r.median,
                min_seconds=r.best, max_seconds=r.worst)
    for method in ("tsne", "umap"):  # options, no target: first call (UMAP compiles) and next
        with harness.Timer() as first:
            states_projection(sa, sb, method)
        with harness.Timer() as again:
            states_projection(sa, sb, method)
        print(f"   {method:8s} every layer, two models   first call {first.wall:.2f} s, then "
              f"{again.wall:.2f} s  [load {harness.load():.2f}]")
        run.row(f"one input: {method}, every layer, two models", seconds=again.wall,
                first_call_seconds=first.wall)


def corpus(a, b, n_sentences: int, threads_baseline: bool, run) -> None:
    from analysis.representations.corpus import model_side
    from analysis.representations.states import treebank_words
    from analysis.syntax.treebank import read_conllu

    if not DATA.exists():
        print(f"\n2. corpus: {DATA} is absent; skipped")
        return
    ds = read_conllu(DATA, max_sentences=n_sentences)
    print(f"\n2. corpus probes: {len(ds)} sentences of EWT dev")
    total = 0.0
    sides, words = [], []
    for m in (a, b):
        with harness.Timer() as c:
            w = treebank_words(m, ds)
        total += c.wall
        words.append(w)
        print(f"   one batched pass ({m.name[:28]:28s}) {c}  {len(w.forms)} words")
    for m, w in zip((a, b), words):
        with harness.Timer() as c:
            side = model_side(m, w, ("upos",))
        total += c.wall
        sides.append(side)
        curve = side.probes["upos"]
        print(f"   probes x{len(w.layers)} layers + geometry        {c}  best layer "
              f"{curve.best_layer()} {curve.layers[curve.best_layer()]:.3f} "
              f"(majority {curve.majority:.3f})")
    print(f"   whole corpus part, two models         {total:7.1f} s (target <= 120 s)  "
          f"[load {harness.load():.2f}]")
    run.row("whole corpus part, two models", seconds=total)
    for side in sides:
        print("   " + side.name[:30] + ": upos " +
              " ".join(f"{x:.3f}" for x in side.probes["upos"].layers) +
              " | aniso " + " ".join(_f(x) for x in side.anisotropy) +
              " | selfsim " + " ".join(_f(x) for x in side.self_similarity))
    if threads_baseline:
        import numpy as np

        from analysis.representations.probes import _folds
        from bench.references.representations import probe_accuracy

        labels = np.asarray(words[0].labels["upos"])
        keep = labels != "_"
        x = words[0].layers[3][keep]
        splits, _ = _folds(words[0].groups[keep], 5)
        with harness.Timer() as c1:
            probe_accuracy(x, labels[keep], splits)
        with harness.Timer() as c2:
            probe_accuracy(x, labels[keep], splits, one=False)
        print(f"\n3. layer 3 probe: one thread {c1}; default threads {c2} "
              f"(x{c2.wall / max(c1.wall, 1e-9):.1f})  [load {harness.load():.2f}]")


def shards(a, b, n_sentences: int, k: int) -> None:
    import numpy as np

    from analysis.representations.run import corpus_job
    from analysis.core.execution.corpus import run_local, run_sharded, shard_bounds
    from analysis.syntax.treebank import read_conllu

    if not DATA.exists():
        print(f"\n4. shards: {DATA} is absent; skipped")
        return
    ds = read_conllu(DATA, max_sentences=n_sentences)
    job, ds = corpus_job(a, ds, b, scatter=False)
    with harness.Timer() as c1:
        one = run_local(job, (a, b), ds)
    with harness.Timer() as c2:
        many = run_sharded(job, (a, b), ds, shard_bounds(len(ds), k))
    diff = 0.0
    for s1, s2 in ((one.model, many.model), (one.compare, many.compare)):
        for name in s1.probes:
            diff = max(diff, float(np.max(np.abs(np.subtract(s1.probes[name].layers,
                                                             s2.probes[name].layers)))))
        for v1, v2 in ((s1.anisotropy, s2.anisotropy), (s1.self_similarity,
                                                         s2.self_similarity)):
            diff = max([diff] + [abs(x - y) for x, y in zip(v1, v2)
                                 if x is not None and y is not None])
    print(f"\n4. corpus job, {len(ds)} sentences, two models: one shard {c1}; {k} shards "
          f"{c2}; largest difference {diff:.2e}  [load {harness.load():.2f}]")


def main() -> None:
    p = harness.parser(__doc__)
    p.add_argument("--sentences", type=int, default=1000)
    p.add_argument("--after", default="example")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads-baseline", action="store_true")
    p.add_argument("--shards", type=int, default=0, help="4. the corpus job in K shards")
    p.add_argument("--only-shards", action="store_true", help="run part 4 alone")
    args = p.parse_args()
    run = harness.start(args)
    a, b = models(args.after)
    if not args.only_shards:
        one_input(a, b, args.repeats, run)
        corpus(a, b, args.sentences, args.threads_baseline, run)
    if args.shards:
        shards(a, b, args.sentences, args.shards)
    run.done()


if __name__ == "__main__":
    main()
