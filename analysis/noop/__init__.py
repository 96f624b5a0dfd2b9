"""No-op statistics (Clark et al. 2019), attention norms (Kobayashi et al. 2020) and gradient
importance: where each head puts its attention across a corpus, and whether attention to
[SEP]/[CLS] is a no-op (docs/METHODS.md sections 3, 4 and 5).

Modules: :mod:`analysis.core.measures` (the statistics of one map and of a padded batch; core, as
the Drift study uses them too), :mod:`.corpus`
(streaming a corpus), :mod:`.gradients` (a real loss and ``|dL/dA|`` per key category),
:mod:`.reading` (tables and plain sentences from the numbers), :mod:`.study` (the study's one
interface: :data:`STUDY`, and :data:`GRADIENTS` for the page's gradient tab).
"""

from analysis.noop.corpus import CorpusStats, corpus_stats
from analysis.noop.gradients import GradientImportance, LossHead, gradient_importance, loss_head
from analysis.core.measures import (CATEGORIES, CLI_METRICS, LABELS, NORM_METRICS, PUNCT,
                               WEIGHT_METRICS, batch_stats, example_norm_stats,
                               example_stats, selectors)
from analysis.noop.reading import noop_heads, positional_heads, reading
from analysis.noop.study import GRADIENTS, STUDY

__all__ = ["CATEGORIES", "CLI_METRICS", "GRADIENTS", "LABELS", "NORM_METRICS", "PUNCT", "STUDY",
           "WEIGHT_METRICS",
           "CorpusStats", "GradientImportance", "LossHead", "batch_stats", "corpus_stats",
           "example_norm_stats", "example_stats", "gradient_importance", "loss_head",
           "noop_heads", "positional_heads", "reading", "selectors"]
