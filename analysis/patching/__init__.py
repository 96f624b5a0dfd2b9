"""Causal patching (Vig et al. 2020; Meng et al. 2022; Wang et al. 2022; Zhang & Nanda 2024;
docs/METHODS.md, "Causal patching"): which heads, and which layers at which positions, carry a
classifier's decision from an input to a minimally changed counterfactual.

Modules: :mod:`.metric` (the normalised logit difference), :mod:`.run` (one pair: every head,
every layer x position of the residual stream, attention and MLP outputs), :mod:`.counterfactuals`
(ABSA counterfactuals: another aspect, the opposite opinion word), :mod:`.corpus` (the per-head
map over held-out ABSA pairs with bootstrap intervals, against Head importance), :mod:`.reading`
(plain words), :mod:`.study` (its inputs, plan, result and ``STUDY``: the study interface). The
forward work goes through :func:`analysis.core.forward.forward_patched`.
"""

from analysis.patching.run import PairPatching, patch_pair
from analysis.patching.study import STUDY

__all__ = ["STUDY", "PairPatching", "patch_pair"]
