"""The two checkpoints of a drift study: loading (the after one with its classification head
when it has one) and the checks that they can be compared head by head
(docs/METHODS.md section 9)."""

from __future__ import annotations

from typing import Callable

from analysis.core.errors import InputError
from analysis.core.models import (LoadedModel, ModelLoadError, load_model, load_with_head,
                                  normalise_spec)

PROBE = "Hello, WORLD! The café's crème brûlée wasn't cheap."


class DriftError(InputError):
    """Two checkpoints cannot be compared (message is user-facing, one line)."""


def load_pair(before_spec: str, after_spec: str,
              loader: Callable[[str], LoadedModel] = load_model,
              after_loader: Callable[[str], LoadedModel] | None = None
              ) -> tuple[LoadedModel, LoadedModel]:
    """Load both checkpoints (the after one with its classification head if any) and check that
    they can be compared. ``loader`` loads a plain encoder, ``after_loader`` the after one
    (default: :func:`analysis.core.models.load_with_head` with ``loader``); the UI passes its
    cached loaders."""
    try:
        before = loader(normalise_spec(before_spec))
    except ModelLoadError as exc:
        raise ModelLoadError(f"Before model: {exc}") from exc
    try:
        after_spec = normalise_spec(after_spec)
        after = (after_loader(after_spec) if after_loader
                 else load_with_head(after_spec, loader))
    except ModelLoadError as exc:
        raise ModelLoadError(f"After model: {exc}") from exc
    check_compatible(before, after)
    return before, after


def _vocab(tokenizer) -> dict:
    try:
        return dict(tokenizer.get_vocab())
    except Exception:  # pragma: no cover - every HF tokenizer has get_vocab
        return {}


def check_compatible(before: LoadedModel, after: LoadedModel) -> list[str]:
    """Raise DriftError when the two checkpoints cannot be compared head by head: another
    shape, another vocabulary, or another split of a probe pair. Returns notices (e.g.
    different model types with the same shape)."""
    if (before.n_layers, before.n_heads) != (after.n_layers, after.n_heads):
        raise DriftError(
            f"The models have different shapes: before has {before.shape}, after has "
            f"{after.shape}; heads can only be compared between checkpoints of one architecture."
        )
    vb, va = _vocab(before.tokenizer), _vocab(after.tokenizer)
    if vb != va:
        only_b = len(set(vb) - set(va))
        only_a = len(set(va) - set(vb))
        raise DriftError(
            f"The models use different tokenizers (vocabularies of {len(vb)} and {len(va)} "
            f"pieces, {only_b} only in before, {only_a} only in after), so their maps are over "
            "different tokens and cannot be compared."
        )
    pb = before.tokenizer(PROBE, "pair")["input_ids"]
    pa = after.tokenizer(PROBE, "pair")["input_ids"]
    if list(pb) != list(pa):
        raise DriftError(
            "The models' tokenizers split the same text differently (casing or normalisation "
            "differs), so their maps are over different tokens and cannot be compared."
        )
    notices = []
    if before.model_type != after.model_type:
        notices.append(f"Model types differ ({before.model_type} vs {after.model_type}).")
    return notices


def _encoder(model):
    return getattr(model, "base_model", model)


def identical_weights(before: LoadedModel, after: LoadedModel) -> bool:
    """True when every encoder parameter of the two checkpoints is equal."""
    # lazy: imported when used: torch (heavy)
    import torch

    sb = _encoder(before.model).state_dict()
    sa = _encoder(after.model).state_dict()
    if sb.keys() != sa.keys():
        return False
    return all(sb[k].shape == sa[k].shape and torch.equal(sb[k], sa[k]) for k in sb)
