"""The No-op statistics page's state, named once: its widget keys (those bound to the URL are
its parameters), its job keys and :class:`StatsKey`, what the statistics are cached on (the
charts built from them are cached on the same key)."""

from __future__ import annotations

from dataclasses import astuple, dataclass

from ui.common.frame.state import CorpusKeys

CORPUS = CorpusKeys("noop")
BATCH = "noop_batch"
NORMS = "noop_norms"
GRADIENTS = "noop_grads"
GRADIENT_EXAMPLES = "noop_ngrad"
COPY = "noop_copy"
TAB = "noop_tab"
JSON = "noop_json"
TABLE_NOOP = "noop_table_noop"
TABLE_POSITIONAL = "noop_table_pos"
TABLE_LAYERS = "noop_table_layers"
RANK = "noop_rank"  # what the no-op heads' table ranks by: cls+sep | sep | cls
RANKS = {"cls+sep": "[CLS] + [SEP]", "sep": "[SEP]", "cls": "[CLS]"}


@dataclass(frozen=True)
class StatsKey:
    """What one corpus-statistics result is cached on: the model, the corpus, its size, the
    settings and the token limit."""

    spec: str
    fingerprint: str
    n_examples: int
    batch_size: int
    norms: bool
    token_limit: int

    def chart_key(self, name: str) -> tuple:
        """A chart built from this result (``ui.common.chart_cache.cached_chart``)."""
        return ("noop " + name, *astuple(self))

    @property
    def job_key(self) -> str:
        return f"noop-stats-{self.fingerprint}"


def gradients_chart_key(spec: str, fingerprint: str, n_examples: int, token_limit: int) -> tuple:
    return ("noop_gradients", spec, fingerprint, n_examples, token_limit)

# -- chart download and "Add to report" keys -------------------------------------------------
ADD_READING = "noop-reading"
CHART_FIG2 = "noop-fig2"
CHART_MAPS = "noop-maps"
CHART_ENTROPY_MAPS = "noop-ent-maps"
CHART_NORM_MAPS = "noop-norm-maps"
CHART_ENTROPY = "noop-ent"
CHART_NORMS = "noop-norm"
CHART_GRADIENTS = "noop-grad"
ADD_TABLE_NOOP = "noop-table-noop"
ADD_TABLE_POSITIONAL = "noop-table-pos"


# -- keys with a part: TEMPLATE.format(part) -----------------------------------------------
JOB_GRADIENTS = "noop-grad-{}"
