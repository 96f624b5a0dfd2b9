"""Forward hooks: the one place that attaches code to a model's modules.

A loaded model is shared by every Streamlit session (one thread each), so every hook here acts
only on forwards run by the thread that registered it (:func:`this_thread_only`), and is
removed when its ``with`` block ends. What the hooks serve:

- :func:`capture`: keep a module's output per layer (query and key projections for the neuron
  view, value projections for attention norms); :func:`capture_inputs`: a module's first
  input per layer (the heads' context vectors at the attention output projection);
- :func:`masked_heads`: zero heads' slices of the context vector before the attention output
  projection (what transformers' removed ``head_mask`` did; docs/METHODS.md section 7);
- :func:`head_value_norms`: Kobayashi et al.'s ``||f_h(x_j)||`` from captured values
  (docs/METHODS.md section 4);
- :func:`ablated_heads`: disable heads per batch row, Michel's way (output zeroed) or
  Kovaleva's (attention replaced by the uniform distribution over the row's real tokens);
  :func:`fan_out`: replicate a batch at the input of one encoder layer, so that several
  ablations share the layers below it; :func:`head_gates`: Michel's gates ``xi_h`` on each
  head's output, per row, for ``dL/dxi`` (docs/METHODS.md section 12).
- :func:`layer_parts`: the parts of every BERT-style layer that the attribution study
  decomposes (value projection, output projection, LayerNorm), and :func:`zeroed_values`:
  zero one token's value vectors per batch element (value zeroing, docs/METHODS.md section 11).
- :func:`capture_inputs`: keep a module's first input per layer (the heads' context vectors);
  :func:`patched`: replace a module's output (or first input) per batch row with another run's
  activation where a mask is set (activation patching, docs/METHODS.md section 15).
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass

import numpy as np

from analysis.core.errors import InputError

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
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

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


def layer_parts(model) -> list[LayerParts]:
    """The :class:`LayerParts` of every layer of a BertModel-family encoder (BERT, RoBERTa,
    ELECTRA, with or without a task head); InputError (one line) for a layer this study
    cannot decompose (DistilBERT, ALBERT's shared layers, non-encoders)."""
    kind = getattr(getattr(model, "config", None), "model_type", "") or type(model).__name__
    try:
        layers = encoder_layers(model)
    except InputError:
        layers = []
    parts = []
    for layer in layers:
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
def capture_inputs(modules, transform=lambda x: x.detach()):
    """As :func:`capture`, for each call's first input instead of its output (a forward
    pre-hook): the input of the attention output projection is every head's context vector
    side by side (the search and patching studies)."""
    store: list = []
    handles = []
    for mod in {id(m): m for m in modules}.values():
        def hook(module, args):
            store.append(transform(args[0]))
        handles.append(mod.register_forward_pre_hook(this_thread_only(hook)))
    yield from _holding(handles, store)


@contextlib.contextmanager
def masked_heads(model, head_mask):
    """Within the block, heads with ``head_mask[l, h] == 0`` contribute nothing."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

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
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    B, N, D = values.shape
    dh = D // n_heads
    vh = values.double().reshape(B, N, n_heads, dh)  # [B, N, H, dh]
    wo = out_proj.weight.detach().double().reshape(out_proj.weight.shape[0], n_heads, dh)
    gram = torch.einsum("ohd,ohe->hde", wo, wo)  # [H, dh, dh]: ||v W_O^h||^2 = v^T G v
    sq = torch.einsum("bnhd,hde,bnhe->bhn", vh, gram, vh).clamp_min(0.0)
    return sq.sqrt().float()


# ---------------------------------------------------------------------------------------------
# Head ablations, fan-out and gates (docs/METHODS.md section 12)

ABLATION_METHODS = ("uniform", "mask")


def encoder_layers(model) -> list:
    """The encoder's layer modules in order (BERT/RoBERTa/ELECTRA and DistilBERT layouts)."""
    base = getattr(model, getattr(model, "base_model_prefix", ""), model)
    if hasattr(base, "encoder") and hasattr(base.encoder, "layer"):
        return list(base.encoder.layer)
    if hasattr(base, "transformer") and hasattr(base.transformer, "layer"):  # DistilBERT
        return list(base.transformer.layer)
    raise InputError("Head ablation is not supported for this architecture.")


def _repeat_rows(value, rows: int, times: int):
    """``value`` repeated ``times`` along dim 0 when it is a tensor with ``rows`` rows."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    if isinstance(value, torch.Tensor) and value.dim() >= 2 and value.shape[0] == rows:
        return value.repeat(times, *([1] * (value.dim() - 1)))
    return value


@contextlib.contextmanager
def fan_out(model, layer: int, times: int):
    """Within the block, a forward whose batch has B rows runs layers below ``layer`` on those
    B rows and layers from ``layer`` on on ``times`` copies of them (row ``r * B + b`` is copy
    ``r`` of row ``b``): the hidden states and every other per-row input of the layer (the
    attention mask) are repeated at the input of ``layer``, and the per-row inputs of the later
    layers follow. ``times == 1`` changes nothing."""
    layers = encoder_layers(model)
    if not 0 <= layer < len(layers):
        raise InputError(f"fan_out: layer must be from 0 to {len(layers) - 1}.")
    handles = []
    if times > 1:
        state = {}

        def first(module, args, kwargs):
            hidden = args[0] if args else next(iter(kwargs.values()))
            rows = state["rows"] = hidden.shape[0]
            return (tuple(_repeat_rows(a, rows, times) for a in args),
                    {k: _repeat_rows(v, rows, times) for k, v in kwargs.items()})

        def later(module, args, kwargs):
            rows = state.get("rows")
            if rows is None:
                return None
            # the hidden states (first) already have the copies; a per-row mask has not
            return (tuple(_repeat_rows(a, rows, times) if i else a for i, a in enumerate(args)),
                    {k: _repeat_rows(v, rows, times) for k, v in kwargs.items()})

        handles.append(layers[layer].register_forward_pre_hook(
            this_thread_only(first), with_kwargs=True))
        for mod in layers[layer + 1:]:
            handles.append(mod.register_forward_pre_hook(this_thread_only(later),
                                                         with_kwargs=True))
    yield from _holding(handles, model)


@contextlib.contextmanager
def ablated_heads(model, disabled, method: str = "mask", token_mask=None):
    """Within the block, on forwards of this thread whose batch has ``N = len(disabled)`` rows,
    head ``h`` of layer ``l`` is disabled in row ``n`` where ``disabled[n, l, h]`` (bool
    tensor [N, L, H]):

    - ``"mask"`` (Michel et al. 2019): the head's context vector is zeroed before the attention
      output projection, ``c_h <- 0`` (as :func:`masked_heads`);
    - ``"uniform"`` (Kovaleva et al. 2019): the head's attention map is replaced by the uniform
      distribution over the row's real tokens (``token_mask`` [N, T], 1 = real), so every
      query's context vector becomes the mean of the value vectors over those tokens,
      ``c_h(i) <- (1/n) sum_{j real} v_h(j)`` (the value projection's output, bias included,
      is captured in the same forward).

    Forwards with another number of rows (the layers below a :func:`fan_out`) are left alone."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    if method not in ABLATION_METHODS:
        raise InputError(f"Unknown ablation method {method!r}; use uniform or mask.")
    projs = attention_output_projections(model)
    n_heads = model.config.num_attention_heads
    disabled = torch.as_tensor(disabled, dtype=torch.bool)
    if disabled.dim() != 3 or tuple(disabled.shape[1:]) != (len(projs), n_heads):
        raise InputError(f"disabled must have shape (rows, {len(projs)}, {n_heads}).")
    rows = disabled.shape[0]
    values = None
    if method == "uniform":
        if token_mask is None or len(token_mask) != rows:
            raise InputError("Uniform ablation needs the token mask of every row.")
        pairs = value_modules(model, len(projs))
        if pairs is None:
            raise InputError("Uniform attention is not supported for this architecture (the "
                             "value projections were not found).")
        values = [v for v, _ in pairs]
    handles, store = [], {}
    for layer, proj in enumerate(projs):
        dis = disabled[:, layer]
        if not dis.any():
            continue
        if values is not None:
            def keep(module, args, output, layer=layer):
                if output.shape[0] == rows:
                    store[layer] = output
            handles.append(values[layer].register_forward_hook(this_thread_only(keep)))

        def hook(module, args, dis=dis, layer=layer):
            x = args[0]
            if x.shape[0] != rows:
                return None
            B, T, D = x.shape
            xh = x.reshape(B, T, n_heads, D // n_heads)
            d = dis.to(x.device)[:, None, :, None]
            if values is None:
                out = xh * (~d).to(x.dtype)
            else:
                v = store.pop(layer).reshape(B, T, n_heads, D // n_heads)
                m = torch.as_tensor(token_mask, device=x.device).to(x.dtype)[:, :T, None, None]
                mean = (v * m).sum(1, keepdim=True) / m.sum(1, keepdim=True).clamp_min(1)
                out = torch.where(d, mean.expand_as(xh), xh)
            return (out.reshape(B, T, D),) + tuple(args[1:])

        handles.append(proj.register_forward_pre_hook(this_thread_only(hook)))
    yield from _holding(handles, model)


@contextlib.contextmanager
def head_gates(model, gates):
    """Within the block, each head's context vector is multiplied by its gate, per row:
    ``c_h <- xi[n, l, h] * c_h`` for ``gates`` [N, L, H] (a tensor that may require grad;
    Michel et al. 2019 take ``dL/dxi`` at ``xi = 1``)."""
    projs = attention_output_projections(model)
    n_heads = model.config.num_attention_heads
    if gates.dim() != 3 or tuple(gates.shape[1:]) != (len(projs), n_heads):
        raise InputError(f"gates must have shape (rows, {len(projs)}, {n_heads}).")
    handles = []
    for layer, proj in enumerate(projs):
        def hook(module, args, layer=layer):
            x = args[0]
            B, T, D = x.shape
            g = gates[:, layer].to(x.device, x.dtype)[:, None, :, None]
            out = x.reshape(B, T, n_heads, D // n_heads) * g
            return (out.reshape(B, T, D),) + tuple(args[1:])

        handles.append(proj.register_forward_pre_hook(this_thread_only(hook)))
    yield from _holding(handles, model)
@contextlib.contextmanager
def zeroed_values(value_module, positions):
    """Within the block, in every forward of this thread through ``value_module`` (a layer's
    value projection, output [B, N, D]), batch element ``b`` has the value vectors of token
    ``positions[b]`` set to zero in every head (Mohebbi et al. 2023); ``positions[b] < 0``
    leaves element ``b`` as it is."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

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


@contextlib.contextmanager
def start_at_layer(model, layer: int, hidden):
    """Within the block, a forward runs only encoder layers ``layer..`` on ``hidden`` [B, N, D]
    (their input): the layers below are out of the encoder meanwhile (a model no thread shares)."""
    stack = getattr(getattr(model, getattr(model, "base_model_prefix", ""), model), "encoder", None)
    full = getattr(stack, "layer", None)
    if full is None or not 0 <= layer <= len(full):
        raise InputError("Starting at a layer is not supported for this architecture.")
    handle = stack.register_forward_pre_hook(this_thread_only(
        lambda module, args: (hidden,) + tuple(args[1:])))
    stack.layer = type(full)(list(full)[layer:])
    try:
        yield model
    finally:
        stack.layer = full
        handle.remove()


# ---------------------------------------------------------------------------------------------
# Activation patching (docs/METHODS.md, "Causal patching")


def _first_tensor(value):
    return value[0] if isinstance(value, (tuple, list)) else value


@contextlib.contextmanager
def patched(module, source, mask, *, on_input: bool = False):
    """Within the block, in the forwards of this thread through ``module`` whose activation (its
    output, or its first input with ``on_input``) has ``R = len(mask)`` rows, row ``r`` becomes
    ``where(mask[r], source, x[r])``: ``source`` [T, D] (or [R, T, D]) is the activation taken
    from another run (the counterfactual's), ``mask`` a bool tensor [R, T, D] or broadcastable
    ([R, T, 1]: whole positions). Forwards with another number of rows (the layers below a
    :func:`fan_out`) are left alone. A tuple output keeps its other elements."""
    # lazy: imported when used: torch (heavy)
    import torch

    mask = torch.as_tensor(mask, dtype=torch.bool)
    rows = mask.shape[0]

    def swap(x):
        if x.shape[0] != rows:
            return None
        src = source.to(x.device, x.dtype)
        return torch.where(mask.to(x.device), src.expand_as(x), x)

    if on_input:
        def pre(module, args):
            new = swap(args[0])
            return None if new is None else (new,) + tuple(args[1:])

        handle = module.register_forward_pre_hook(this_thread_only(pre))
    else:
        def post(module, args, output):
            new = swap(_first_tensor(output))
            if new is None:
                return None
            return (new,) + tuple(output[1:]) if isinstance(output, (tuple, list)) else new

        handle = module.register_forward_hook(this_thread_only(post))
    yield from _holding([handle], module)


def residual_site(model, layer: int):
    """(module, on_input) whose activation is ``hidden_states[layer]`` of the residual stream
    (0 = the embeddings): the output of encoder layer ``layer - 1``, or for 0 the input of
    encoder layer 0 (the features study splices a dictionary's reconstruction there)."""
    layers = encoder_layers(model)
    if not 0 <= layer <= len(layers):
        raise InputError(f"The layer must be from 0 (the embeddings) to {len(layers)}, "
                         f"not {layer}.")
    return (layers[0], True) if layer == 0 else (layers[layer - 1], False)


@contextlib.contextmanager
def replaced(module, fn, *, on_input: bool = False):
    """Within the block, in the forwards of this thread through ``module``, its activation
    (its output, or its first input with ``on_input``) ``x`` [B, N, D] becomes ``fn(x)``
    (same shape): a dictionary's reconstruction spliced in, or zeros (zero-ablation). A tuple
    output keeps its other elements."""
    if on_input:
        def pre(module, args):
            return (fn(args[0]),) + tuple(args[1:])

        handle = module.register_forward_pre_hook(this_thread_only(pre))
    else:
        def post(module, args, output):
            new = fn(_first_tensor(output))
            return (new,) + tuple(output[1:]) if isinstance(output, (tuple, list)) else new

        handle = module.register_forward_hook(this_thread_only(post))
    yield from _holding([handle], module)
