"""Fine-tuning drift: what fine-tuning changed in each head and layer, over a corpus
(docs/METHODS.md section 9).

- Per-head cosine (Kovaleva et al. 2019) of each example's before/after maps on its real tokens;
  the mean over examples is a layers x heads map where a low value means the head changed most.
- RSA (Merchant et al. 2020) per layer (embeddings included) and example: the Pearson r of the
  upper triangles of the two models' token-by-token cosine-similarity matrices.
- Linear CKA (Kornblith et al. 2019) per layer over all real tokens of the corpus, streamed.
- No-op drift: the Clark et al. statistics (attention to [CLS], [SEP], punctuation; section 3)
  before and after, and their difference per head.
- Pattern types (Kovaleva's five classes) from three transparent features per map, with
  visible, adjustable thresholds.

Modules: :mod:`.similarity` (one example's cosine, streamed CKA), :mod:`.batched` (the
per-batch torch measures), :mod:`.patterns` (types, shares, transitions, gallery),
:mod:`.pair` (loading and checking the two checkpoints), :mod:`.run` (:func:`compare_models`
and its :class:`DriftResult`), :mod:`.study` (its inputs, plan, the JSON's
:class:`~analysis.drift.study.DriftSummary` and ``STUDY``: the study interface).
"""

from analysis.drift.batched import BatchMasks, batch_cosine, batch_features, batch_rsa
from analysis.drift.pair import DriftError, check_compatible, identical_weights, load_pair
from analysis.drift.patterns import (PATTERN_TYPES, PatternThresholds, classify_patterns, gallery,
                                     pattern_shares, pattern_transitions)
from analysis.drift.run import DriftResult, compare_models, example_maps
from analysis.drift.similarity import CKAAccumulator, head_cosine
from analysis.drift.study import STUDY

__all__ = [
    "STUDY", "BatchMasks", "CKAAccumulator", "DriftError", "DriftResult", "PATTERN_TYPES",
    "PatternThresholds", "batch_cosine", "batch_features", "batch_rsa", "check_compatible",
    "classify_patterns", "compare_models", "example_maps", "gallery", "head_cosine",
    "identical_weights", "load_pair", "pattern_shares",
    "pattern_transitions",
]
