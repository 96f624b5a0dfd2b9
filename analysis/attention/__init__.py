"""The Attention study: one text or sentence pair through the model, its maps at token or word
level (:mod:`analysis.core.maps`, core, shared with other studies), the interactive views' payloads
(:mod:`.views`) and the neuron view (:mod:`.neuron`); :mod:`.study` is its one interface
(:data:`STUDY`).

``attentions[l, h, i, j]``: layer ``l``, head ``h``, from query token ``i`` to key token ``j``;
every row sums to 1 (docs/METHODS.md section 1).
"""

from analysis.attention.study import STUDY
from analysis.core.maps import AttentionResult, attention_for, level_view

__all__ = ["STUDY", "AttentionResult", "attention_for", "level_view"]
