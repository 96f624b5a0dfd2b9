"""The plain reference for the no-op statistics (docs/METHODS.md section 3): one forward per
example, then :func:`analysis.noop.example_stats` (the definition, numpy) on its map. The
benchmark times the streaming pipeline against it and the tests check that both agree."""

from __future__ import annotations

import numpy as np

from analysis.core.encoding import encode_dataset
from analysis.core.forward import forward
from analysis.noop import example_stats


def corpus_stats_loop(loaded, dataset) -> dict[str, np.ndarray]:
    """{name: [L, H]} means over the corpus's examples, one example at a time."""
    encs = encode_dataset(loaded.tokenizer, dataset, loaded.max_length).encodings
    sums = None
    for enc in encs:
        st = example_stats(forward(loaded.model, loaded.tokenizer, [enc]).maps(0), enc)
        sums = st if sums is None else {k: sums[k] + st[k] for k in st}
    return {k: v / len(encs) for k, v in sums.items()}
