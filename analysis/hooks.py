"""Forward hooks: the one place that attaches code to a model's modules.

A loaded model is shared by every Streamlit session (one thread each), so every hook here acts
only on forwards run by the thread that registered it (:func:`this_thread_only`), and is
removed when its ``with`` block ends. What the hooks serve:

- :func:`capture`: keep a module's output per layer (query and key projections for the neuron
  view, value projections for attention norms);
- :func:`masked_heads`: zero heads' slices of the context vector before the attention output
  projection (what transformers' removed ``head_mask`` did; docs/METHODS.md section 7);
- :func:`head_value_norms`: Kobayashi et al.'s ``||f_h(x_j)||`` from captured values
  (docs/METHODS.md section 4);
- :func:`encoder_layers`: the parts of every BERT-style layer that the attribution study
  decomposes (value projection, output projection, LayerNorm), and :func:`zeroed_values`:
  zero one token's value vectors per batch element (value zeroing, docs/METHODS.md section 11).
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass

import numpy as np

from analysis.errors import InputError

QUERY_NAMES = ("query", "q_lin", "query_proj", "q")
KEY_NAMES = ("key", "k_lin", "key_proj", "k")

_VALUE_PATTERNS = (
    # (value projection, attention output projection) relative names per layer index
    (re.compile(r"^(.*\.)?layer\.(\d+)\.attention\.self\.value$"), "attention.self.value",
     "attention.output.dense"),
    (re.compile(r"^(.*\.)?layer\.(\d+)\.attention\.v_lin$"), "attention.v_lin",
     "attention.out_lin"),
)


def this_thread_only(hook):
    """Wrap a forward (pre-)hook so that it acts only on forwards run by the thread that
    registers it: a hook one session adds must neither see nor change another session's
    forward running at the same time. Returning None leaves the module's input or output as
    it is."""
    owner = threading.get_ident()

    def wrapped(*args, **kwargs):
        if threading.get_ident() != owner:
            return None
        return hook(*args, **kwargs)

    return wrapped


# ---------------------------------------------------------------------------------------------
# Finding modules


def projection_modules(model, names) -> list:
    """Linear modules inside the attention blocks whose last name is one of ``names``, in
    model order (one per layer for the query or key projection)."""
    import torch

    found, seen = [], set()
    for full, mod in model.named_modules():
        leaf = full.rsplit(".", 1)[-1]
        if (leaf in names and isinstance(mod, torch.nn.Linear) and "attention" in full
                and id(mod) not in seen):
            seen.add(id(mod))
            found.append(mod)
    return found


def value_modules(model, n_layers: int):
    """[(value Linear, output Linear)] per layer for BERT/RoBERTa/ELECTRA-style and
    DistilBERT-style encoders, or None when the layout is unknown."""
    mods = dict(model.named_modules())
    for pattern, vname, oname in _VALUE_PATTERNS:
        found = {}
        for name in mods:
            m = pattern.match(name)
            if m:
                prefix = name[: -len(vname)]
                found[int(m.group(2))] = (mods[name], mods.get(prefix + oname))
        if len(found) == n_layers and all(o is not None for _, o in found.values()):
            return [found[i] for i in range(n_layers)]
    return None


def attention_output_projections(model) -> list:
    """The attention output projection of every layer (the input of which is the
    concatenation of the heads' context vectors)."""
    base = getattr(model, getattr(model, "base_model_prefix", ""), model)
    if hasattr(base, "encoder") and hasattr(base.encoder, "layer"):
        return [layer.attention.output.dense for layer in base.encoder.layer]
    if hasattr(base, "transformer") and hasattr(base.transformer, "layer"):  # DistilBERT
        return [layer.attention.out_lin for layer in base.transformer.layer]
    raise InputError("Head masking is not supported for this architecture.")


@dataclass(frozen=True)
class LayerParts:
    """One BERT-style encoder layer and the modules the attribution study reads: the value
    projection (its output, bias included, is every head's value vectors), the attention
    output projection W_O, the LayerNorm after the residual, and the attention block
    (value/output/LayerNorm together; its output is LN(W_O c + b_O + x))."""

    layer: object
    value: object
    dense: object
    layer_norm: object
    block: object


DECOMPOSABLE = "BERT, RoBERTa or ELECTRA"


def encoder_layers(model) -> list[LayerParts]:
    """The :class:`LayerParts` of every layer of a BertModel-family encoder (BERT, RoBERTa,
    ELECTRA, with or without a task head); InputError (one line) for a layer this study
    cannot decompose (DistilBERT, ALBERT's shared layers, non-encoders)."""
    base = getattr(model, getattr(model, "base_model_prefix", ""), model)
    kind = getattr(getattr(model, "config", None), "model_type", "") or type(model).__name__
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    parts = []
    for layer in layers if layers is not None else ():
        att = getattr(layer, "attention", None)
        sa, out = getattr(att, "self", None), getattr(att, "output", None)
        value, dense = getattr(sa, "value", None), getattr(out, "dense", None)
        ln = getattr(out, "LayerNorm", None)
        if value is None or dense is None or ln is None or not hasattr(layer, "output"):
            parts = []
            break
        parts.append(LayerParts(layer, value, dense, ln, out))
    if not parts:
        raise InputError(f"Attribution cannot decompose the layers of {kind} models; it works "
                         f"for {DECOMPOSABLE} encoders.")
    return parts


# ---------------------------------------------------------------------------------------------
# Hooks


def _holding(handles, value):
    """Yield ``value`` while the hooks are registered; remove them afterwards, whatever
    happened in the block."""
    try:
        yield value
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def capture(modules, transform=lambda out: out.detach()):
    """Within the block, every call of one of ``modules`` by this thread appends
    ``transform(output)`` to the yielded list, in call order: one entry per layer for one
    forward, also where layers share one module (ALBERT)."""
    store: list = []
    handles = []
    for mod in {id(m): m for m in modules}.values():
        def hook(module, args, output):
            store.append(transform(output))
        handles.append(mod.register_forward_hook(this_thread_only(hook)))
    yield from _holding(handles, store)


@contextlib.contextmanager
def masked_heads(model, head_mask):
    """Within the block, heads with ``head_mask[l, h] == 0`` contribute nothing."""
    import torch

    mask = np.asarray(head_mask, dtype=np.float32)
    projs = attention_output_projections(model)
    n_heads = model.config.num_attention_heads
    if mask.shape != (len(projs), n_heads):
        raise InputError(f"head_mask must have shape ({len(projs)}, {n_heads}).")
    handles = []
    for layer, proj in enumerate(projs):
        if mask[layer].all():
            continue
        width = proj.in_features // n_heads
        scale = torch.tensor(np.repeat(mask[layer], width))

        def hook(module, args, scale=scale):
            return (args[0] * scale.to(args[0].device, args[0].dtype),) + tuple(args[1:])

        handles.append(proj.register_forward_pre_hook(this_thread_only(hook)))
    yield from _holding(handles, model)


def head_value_norms(values, out_proj, n_heads: int):
    """||f_h(x_j)|| [B, H, N] for one layer from its captured value projection output
    ``values`` [B, N, D]: f_h(x) = (x W_V + b_V)_h W_O^h, the head's slice of the attention
    output projection, bias excluded (Kobayashi et al. 2020). Computed through a dh x dh Gram
    matrix per head instead of materialising f (B x H x N x D_out)."""
    import torch

    B, N, D = values.shape
    dh = D // n_heads
    vh = values.double().reshape(B, N, n_heads, dh)  # [B, N, H, dh]
    wo = out_proj.weight.detach().double().reshape(out_proj.weight.shape[0], n_heads, dh)
    gram = torch.einsum("ohd,ohe->hde", wo, wo)  # [H, dh, dh]: ||v W_O^h||^2 = v^T G v
    sq = torch.einsum("bnhd,hde,bnhe->bhn", vh, gram, vh).clamp_min(0.0)
    return sq.sqrt().float()


@contextlib.contextmanager
def zeroed_values(value_module, positions):
    """Within the block, in every forward of this thread through ``value_module`` (a layer's
    value projection, output [B, N, D]), batch element ``b`` has the value vectors of token
    ``positions[b]`` set to zero in every head (Mohebbi et al. 2023); ``positions[b] < 0``
    leaves element ``b`` as it is."""
    import torch

    pos = torch.as_tensor(list(positions), dtype=torch.long)

    def hook(module, args, output):
        if output.shape[0] != len(pos):
            raise ValueError("zeroed_values: one position per batch element is needed.")
        keep = torch.ones(output.shape[:2], dtype=output.dtype, device=output.device)
        rows = torch.nonzero(pos >= 0).flatten()
        keep[rows, pos[rows]] = 0
        return output * keep.unsqueeze(-1)

    handle = value_module.register_forward_hook(this_thread_only(hook))
    yield from _holding([handle], value_module)
