"""Benchmark: the predictions study's answers (issue 46) against the floor, a bare batched
forward of the same model on the same pre-encoded, length-sorted, padded batches, in the same
run, and the study's other costs beside them.

    nice python -m bench.studies.predictions [--n 2000] [--tokens 40] [--size default|base]
                                           [--threads 2] [--repeats 3]

Data: N labelled examples of about ``--tokens`` tokens (sentences of the bundled ABSA sample
joined until the length is reached, a label drawn with seed 0), written as a .csv and read by
the study's own reader (:func:`analysis.predictions.data.load_labelled`: encoded once).
Model: the embedded encoder with a fresh 5-label classifier head (seed 0), or (``--size base``)
a randomly initialised BERT-base-size classifier (12 x 12, 768 wide; the time does not depend on
the weights; no download).

Timed, interleaved ``--repeats`` times, the best of each printed:

- *floor*: ``model(**inputs)`` under ``torch.inference_mode()`` for every batch of
  :func:`analysis.core.batching.batches` (64 rows, longest first), the padded tensors made
  before the clock starts;
- *predictions*: :func:`analysis.predictions.predict.predict` (padding each batch, the forward,
  softmax, losses): the answers the table shows; target within 1.3x of the floor, and at least
  300 examples/s for the embedded model on 2 idle cores;
- *study*: the whole study without counterfactuals (answers, per-row counts, every slice's
  metrics with 1000 bootstrap resamples), and the reading + encoding of the data, for scale.

Wall-clock on a shared machine: read the ratio, and the load printed beside it.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

from bench import harness
from bench.sizes.standins import bert_base_in_memory


def classifier(size: str):
    from analysis.absa.checkpoints import as_loaded
    from analysis.absa.finetune import make_classifier
    from analysis.core.models import load_model

    if size == "default":
        base = load_model("default")
        return as_loaded(base, make_classifier(base, "nli_m", seed=0), "embedded + head")
    return bert_base_in_memory()


def write_data(loaded, n: int, tokens: int, folder: Path) -> Path:
    """A labelled .csv of ``n`` texts of about ``tokens`` tokens (ABSA sample sentences)."""
    import numpy as np

    from analysis.absa.readers import load_sample

    sentences = list(load_sample()["text"])
    rng = np.random.default_rng(0)
    names = [loaded.model.config.id2label[i] for i in range(loaded.model.config.num_labels)]
    path = folder / "bench.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        for k in range(n):
            text, j = "", k
            while len(loaded.tokenizer(text)["input_ids"]) < tokens:
                text = (text + " " + sentences[j % len(sentences)]).strip()
                j += 7
            w.writerow([text, names[int(rng.integers(len(names)))]])
    return path


def floor(loaded, data, batch_size: int = 64) -> float:
    import torch

    from analysis.core.batching import batches, pad_features

    prepared = [pad_features(loaded.tokenizer, data.ev.features, idx)
                for idx in batches(data.ev.lengths, batch_size)]
    with harness.Timer() as t, torch.inference_mode():
        for inputs in prepared:
            loaded.model(**inputs)
    return t.wall


def main(argv=None) -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--tokens", type=int, default=40)
    ap.add_argument("--size", choices=("default", "base"), default="default")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    bench = harness.start(args)

    from analysis.predictions.data import load_labelled
    from analysis.predictions.predict import predict
    from analysis.predictions.run import Inputs, Models, run

    loaded = classifier(args.size)
    print(f"model: {loaded.name}")
    with tempfile.TemporaryDirectory(prefix="bench-predictions-") as tmp:
        path = write_data(loaded, args.n, args.tokens, Path(tmp))
        data, t = harness.timed(lambda: load_labelled(loaded, None, str(path)))
        read_s = t.wall
    mean_tokens = sum(data.ev.lengths) / data.n
    print(f"data: {data.n} examples, {mean_tokens:.1f} tokens on average (with [CLS] and "
          f"[SEP]); read and encoded once in {read_s:.2f} s")
    floor(loaded, data)  # warm-up: the first forward allocates
    best = {"floor": float("inf"), "predictions": float("inf"), "study": float("inf")}
    for _ in range(args.repeats):  # interleaved, the best of each
        best["floor"] = min(best["floor"], floor(loaded, data))
        _, t = harness.timed(lambda: predict(loaded, data))
        best["predictions"] = min(best["predictions"], t.wall)
        _, t = harness.timed(lambda: run(Inputs(data, robustness=False), Models(loaded)))
        best["study"] = min(best["study"], t.wall)
    for name, secs in best.items():
        bench.ratio(f"{name} ({data.n / secs:.1f} examples/s)", secs, best["floor"], digits=3,
                    examples_per_s=data.n / secs)
    ratio = best["predictions"] / best["floor"]
    print(f"predictions / floor = {ratio:.2f} (target <= 1.3)")
    bench.done()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
