"""Gradient attributions of a sequence classifier's predicted class, through Captum
(docs/METHODS.md section 11):

- ``grad_input``: gradient x input on the word embeddings, the L2 norm per token
  (``captum.attr.InputXGradient``);
- ``integrated_gradients`` (Sundararajan et al. 2017): ``captum.attr.IntegratedGradients`` on
  the word embeddings, from the baseline where every non-special token is [PAD] (specials
  kept), 50 steps (Gauss-Legendre), the attribution of a token = the sum over its embedding
  dimensions (signed); the completeness gap ``|sum attr - (F(x) - F(x'))|`` is reported.

F is the softmax probability of the predicted class. Attributing to ``inputs_embeds`` is
the same as Captum's LayerIntegratedGradients on the word-embedding layer (a test checks it)
but registers no hook on the model, which the dashboard's sessions share.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from analysis.core.errors import InputError
from analysis.core.forward import class_probabilities, embed_words

IG_STEPS = 50
ACTIVATION_BUDGET = 2 * 2 ** 30  # bytes of attention activations one IG batch may hold


def has_task_head(model) -> bool:
    """Whether ``model`` is a sequence classifier (returns logits over labels)."""
    return type(model).__name__.endswith("ForSequenceClassification")


def no_head_message(name: str) -> str:
    return (f"Gradient methods explain a prediction, and {name} makes none: it has no "
            "classification head. Pick a fine-tuned classifier (e.g. the example checkpoint).")


@dataclass
class GradientScores:
    grad_input: np.ndarray  # [n] L2 norm of gradient x input per token
    integrated_gradients: np.ndarray  # [n] signed IG per token
    target: int  # the predicted class
    completeness_gap: float  # |sum IG - (F(x) - F(baseline))| (probability units)
    completeness_relative: float  # the gap over |F(x) - F(baseline)|
    delta_f: float  # F(x) - F(baseline)


def model_inputs(loaded, enc):
    """Tensors [1, n] (input ids, attention mask, token types or None) of one encoding."""
    # lazy: imported when used: torch (heavy)
    import torch

    ids = torch.tensor([enc.input_ids])
    mask = torch.ones_like(ids)
    use_tt = "token_type_ids" in getattr(loaded.tokenizer, "model_input_names", []) \
        and enc.token_type_ids is not None
    tt = torch.tensor([enc.token_type_ids]) if use_tt else None
    return ids, mask, tt


def baseline_ids(loaded, enc):
    """The IG baseline: every non-special token replaced by [PAD], specials kept."""
    # lazy: imported when used: torch (heavy)
    import torch

    pad = loaded.tokenizer.pad_token_id if loaded.tokenizer.pad_token_id is not None else 0
    ids = [pad if not s else i for i, s in zip(enc.input_ids, enc.special)]
    return torch.tensor([ids])


def _internal_batch(model, n: int, steps: int) -> int:
    cfg = model.config
    per_step = 3 * 4 * cfg.num_hidden_layers * cfg.num_attention_heads * n * n
    return max(1, min(steps, ACTIVATION_BUDGET // max(1, per_step)))


def gradient_scores(loaded, enc, steps: int = IG_STEPS, target: int | None = None
                    ) -> GradientScores:
    """Gradient x input and integrated gradients for one encoding, for ``target`` (default:
    the predicted class)."""
    # lazy: imported when used: captum (heavy, pulls torch)
    from captum.attr import InputXGradient, IntegratedGradients

    model = loaded.model
    if not has_task_head(model):
        raise InputError(no_head_message(loaded.name))
    ids, mask, tt = model_inputs(loaded, enc)
    device = next(model.parameters()).device
    mask = mask.to(device)
    tt = tt.to(device) if tt is not None else None
    emb = embed_words(model, ids)
    base = embed_words(model, baseline_ids(loaded, enc))
    fn = partial(class_probabilities, model)
    probs = fn(emb, mask, tt).detach()
    if target is None:
        target = int(probs[0].argmax())
    gxi = InputXGradient(fn).attribute(emb.clone().requires_grad_(), target=target,
                                       additional_forward_args=(mask, tt))
    ig, delta = IntegratedGradients(fn).attribute(
        emb, baselines=base, target=target, additional_forward_args=(mask, tt), n_steps=steps,
        internal_batch_size=_internal_batch(model, ids.shape[1], steps),
        return_convergence_delta=True)
    p_base = float(fn(base, mask, tt).detach()[0, target])
    delta_f = float(probs[0, target]) - p_base
    gap = abs(float(delta.detach().sum()))
    return GradientScores(
        grad_input=gxi.detach()[0].double().norm(dim=-1).cpu().numpy(),
        integrated_gradients=ig.detach()[0].double().sum(-1).cpu().numpy(),
        target=target, completeness_gap=gap,
        completeness_relative=gap / max(abs(delta_f), 1e-12), delta_f=delta_f)
