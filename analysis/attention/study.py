"""The Attention study's one interface (:mod:`analysis.core.study`): one text or sentence pair
through the model, its maps (:class:`analysis.core.maps.AttentionResult`). The page and
``python -m analysis attention`` make this call."""

from __future__ import annotations

from dataclasses import dataclass, replace

from analysis.core import maps
from analysis.core.maps import AttentionResult
from analysis.core.models import load_model
from analysis.core.study import StudyDef


@dataclass(frozen=True)
class Inputs:
    """The text (segment A), the optional pair (segment B), the model's spec and the token cap
    (None: the model's own maximum)."""

    spec: str
    text: str
    pair: str | None = None
    max_length: int | None = None


def plan(inputs: Inputs, models=None):
    """Light work on one input (``models``: the loaded model, or None: loaded by its spec)."""
    loaded = models if models is not None else load_model(inputs.spec)
    loaded = replace(loaded, max_length=inputs.max_length) if inputs.max_length else loaded

    def work(progress) -> AttentionResult:
        progress(0.0, "Running the model...")
        return maps.attention_for(loaded, inputs.text, inputs.pair)  # looked up when run

    return work


STUDY = StudyDef(name="attention", title="Attention", inputs=Inputs, result=AttentionResult,
                 plan=plan)
