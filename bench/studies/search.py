"""Benchmark: the search study (issue 33), embedded default model (all-MiniLM-L6-v2).

    nice python -m bench.studies.search [--sentences 500] [--tokens 100000] [--queries 200]
        [--hnsw]

1. *Build vs the batched forward pass*: the first ``--sentences`` sentences of
   ../shared/data/ud_english_ewt/en_ewt-ud-dev.conllu (the bundled treebank sample where the
   shared data is absent): the batched forward pass alone (``forward_batches`` with hidden
   states, batch 32, the same batches) against the whole index build (encode, the forward
   with the heads' context vectors captured, unit float16 vectors, labels, files written);
   their ratio (target: about 1, the build at the forward's speed). Then the index's size on
   disk per 10,000 pieces.
2. *Query over 100,000 pieces x 7 layers*: the real vectors of step 1 tiled to ``--tokens``
   pieces (each copy with a little Gaussian noise, renormalised: no two rows alike), written
   as an index (every layer exact: 100,000 x 384 is under the exact cap) and queried
   ``--queries`` times at a random layer with a random piece's vector plus noise: the search
   alone (the layer's faiss index built once, on the first query of that layer, timed apart)
   and the whole page query (the query text's forward, then the search). Target: p95 <= 100 ms.
   Each search is checked against numpy brute force on a sample (same neighbours).
3. ``--hnsw``: one layer of the same 100,000 pieces as an HNSW graph: build time, recall@50
   against exact search, query p95.

Times on a shared machine are noisy: the load average is printed beside them.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import harness

DATA = harness.EWT_DEV


def p95(xs) -> float:
    return harness.percentile(xs, 95)


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--sentences", type=int, default=500)
    ap.add_argument("--tokens", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--hnsw", action="store_true")
    args = ap.parse_args()
    args.threads = args.threads or int(os.environ.get("OMP_NUM_THREADS", "2"))
    run = harness.start(args)

    from analysis.core.models import load_model
    from analysis.syntax.treebank import read_conllu, sample_treebank

    loaded = load_model("default")
    ds = read_conllu(DATA, max_sentences=args.sentences) if DATA.exists() else sample_treebank()
    print(f"corpus: {len(ds)} sentences of {'EWT dev' if DATA.exists() else 'the sample'}")
    texts, layers, n = build_vs_forward(loaded, ds, run)
    rng = np.random.default_rng(0)
    big = queries(loaded, texts, layers, n, args, rng, run)
    if args.hnsw:
        hnsw(big, args.queries, rng)
    run.done()
    return 0


def build_vs_forward(loaded, ds, run):
    """1. (the module docstring): the corpus's texts, the index's layer vectors, its size."""
    from analysis.core.encoding import encode
    from analysis.core.forward import forward_batches
    from analysis.search import build_index
    from analysis.search.corpus import search_corpus
    from analysis.search.job import model_info

    corpus = search_corpus(ds)
    encs = [encode(loaded.tokenizer, t, max_length=loaded.max_length) for t in corpus.texts]
    with harness.Timer() as t:
        for _ in forward_batches(loaded.model, loaded.tokenizer, encs, 32, attentions=False,
                                 hidden_states=True):
            pass
    t_fwd = t.wall
    model_info(loaded)  # the weights hash, once per model (kept on the model object)
    with tempfile.TemporaryDirectory() as tmp:
        index, t = harness.timed(lambda: build_index(loaded, ds, Path(tmp) / "ix"))
        t_build = t.wall
        n, size = index.n, index.size_bytes()
        print(f"forward pass alone: {t_fwd:.2f} s ({n / t_fwd:,.0f} pieces/s); index build: "
              f"{t_build:.2f} s ({n / t_build:,.0f} pieces/s); ratio build/forward "
              f"{t_build / t_fwd:.2f} (load {harness.load():.2f})")
        run.ratio("index build", t_build, t_fwd, "the forward pass alone", digits=2,
                  pieces=n)
        print(f"size on disk: {size / 2 ** 20:.1f} MiB for {n:,} pieces = "
              f"{size / n * 10000 / 2 ** 20:.1f} MiB per 10,000 pieces")
        layers = np.asarray(index.layers, np.float32)
    return corpus.texts, layers, n


def queries(loaded, texts, layers, n: int, args, rng, run):
    """2. (the module docstring): the tiled vectors of --tokens pieces x 7 layers."""
    from analysis.search import exact_search, write_index
    from analysis.search.index import IndexData, unit_rows
    from analysis.search.job import query_vector

    reps = -(-args.tokens // n)
    big = np.concatenate([unit_rows(layers + (0.02 if r else 0.0) *
                                    rng.normal(size=layers.shape).astype(np.float32))
                          for r in range(reps)], axis=1)[:, :args.tokens].astype(np.float16)
    N = big.shape[1]
    data = IndexData(tokens=["x"] * N, sentence=np.arange(N, dtype=np.int32),
                     position=np.ones(N, np.int32), word=np.ones(N, np.int32), labels={},
                     numbers=list(range(N)), texts=["x"] * N, pairs=[None] * N, layers=big,
                     heads=np.zeros((big.shape[0] - 1, 1, N, 1), np.float16))
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ix = write_index(data, Path(tmp) / "big", {"name": "bench", "hash": "0"}, "bench")
        print(f"\n{N:,} pieces x {big.shape[0]} layers written in "
              f"{time.perf_counter() - t0:.1f} s; backends: "
              f"{sorted({v['backend'] for v in ix.meta['sets'].values()})}")
        firsts = []
        for layer in range(big.shape[0]):
            t0 = time.perf_counter()
            ix.searcher(layer)
            firsts.append(time.perf_counter() - t0)
        print(f"first query of a layer builds its IndexFlatIP: median "
              f"{1000 * statistics.median(firsts):.0f} ms, max {1000 * max(firsts):.0f} ms")
        times, checked, same = [], 0, []
        for k in range(args.queries):
            layer = int(rng.integers(0, big.shape[0]))
            q = np.asarray(big[layer, rng.integers(0, N)], np.float32) + \
                0.05 * rng.normal(size=big.shape[2]).astype(np.float32)
            t0 = time.perf_counter()
            matches = ix.search(q, layer, None, 50)
            times.append(time.perf_counter() - t0)
            if k % 20 == 0:  # noisy copies of one piece tie to float rounding: scores agree
                ref_s, ref = exact_search(np.asarray(big[layer], np.float32),
                                          unit_rows(q[None]), 50)
                assert np.allclose([m.score for m in matches], ref_s[0], atol=1e-3)
                same.append(len({m.row for m in matches} & set(ref[0].tolist())) / 50)
                checked += 1
        print(f"search alone (k=50, warm): p50 {1000 * statistics.median(times):.1f} ms, "
              f"p95 {1000 * p95(times):.1f} ms over {len(times)} queries ({checked} checked "
              f"against numpy brute force: scores equal to 1e-3, {100 * np.mean(same):.0f}% "
              f"the same rows) (load {harness.load():.2f})")
        run.row("search alone (k=50, warm)", p50_seconds=statistics.median(times),
                p95_seconds=p95(times), queries=len(times), pieces=N)
        whole = []
        texts = texts[:50]
        for k in range(min(args.queries, 100)):
            layer = int(rng.integers(0, big.shape[0]))
            t0 = time.perf_counter()
            qv = query_vector(loaded, texts[k % len(texts)], 1, layer)
            ix.search(qv.vector, layer, None, 20)
            whole.append(time.perf_counter() - t0)
        print(f"whole query (forward of the query text + search, k=20): p50 "
              f"{1000 * statistics.median(whole):.1f} ms, p95 {1000 * p95(whole):.1f} ms "
              f"(load {harness.load():.2f})")
        run.row("whole query (forward + search, k=20)", p50_seconds=statistics.median(whole),
                p95_seconds=p95(whole), queries=len(whole), pieces=N)
    return big


def hnsw(big, n_queries: int, rng) -> None:
    """3. (the module docstring): one layer of the tiled vectors as an HNSW graph."""
    from analysis.search.index import recall_at, tuned_hnsw, unit_rows

    vecs, N = big[3], big.shape[1]
    (index, info), t = harness.timed(lambda: tuned_hnsw(vecs))
    t_h = t.wall
    times = []
    for _ in range(n_queries):
        q = unit_rows(np.asarray(vecs[rng.integers(0, N)], np.float32)[None])
        t0 = time.perf_counter()
        index.search(q, 50)
        times.append(time.perf_counter() - t0)
    print(f"\nHNSW (M=32, fp16) of one layer, {N:,} pieces: built and tuned in {t_h:.1f} s, "
          f"efSearch {info.ef_search}, recall@50 {info.recall:.3f} (again, other queries: "
          f"{recall_at(index, vecs, seed=5):.3f}); search p95 {1000 * p95(times):.1f} ms")


if __name__ == "__main__":
    raise SystemExit(main())
