"""The one forward pass: encodings in, what a study asks for out.

:func:`forward` pads a group of encodings (or takes ready inputs), runs the model once and
returns a :class:`Forward` holding the model's output (attentions, hidden states, logits,
loss) and what the asked captures recorded through :mod:`analysis.core.hooks`:

- ``"query"``, ``"key"``: each layer's query / key projection output [B, N, D];
- ``"value_norms"``: each layer's ``||f_h(x_j)||`` [B, H, N] (Kobayashi et al. 2020);
- ``"value_vectors"``: each layer's value projection output, bias included [B, N, D], and
  ``"attention_block"``: each layer's attention block output LN(W_O c + b_O + x) [B, N, D]
  (BERT-style layers only, :func:`analysis.core.hooks.layer_parts`; the attribution study);
- ``"context"``: each layer's heads' context vectors side by side, the input of its attention
  output projection [B, N, D] (head ``h`` is columns ``h*dh:(h+1)*dh``; the search and
  patching studies);

with heads masked when ``head_mask`` is given, and gradients only when ``grad`` is set.
Inputs go to the model's device (CUDA when :func:`analysis.core.models.pick_device` chose it);
without ``grad`` the output and the captures come back on the CPU, so every study reads CPU
tensors whatever the device (with ``grad`` they stay on the device for ``backward``).
:func:`forward_batches` runs a whole list of encodings through :func:`forward` in the batches
of :func:`analysis.core.batching.batches`. :func:`forward_ablations` runs one batch under several
head ablations at once (the batch replicated from the first ablated layer on, a different set
of heads disabled per copy) and :func:`gate_gradients` gives each example's ``dL/dxi`` for a
gate on every head's output (docs/METHODS.md section 12). For the attribution study,
:func:`rerun_layer` runs ONE encoder layer on given inputs (value vectors zeroed per batch
element) and :func:`rerun_after_attention` the part of a layer after its attention,
:func:`embed_words` gives the word embeddings of token ids and :func:`class_probabilities` the
classifier's probabilities from word embeddings (the function Captum differentiates). For the
patching study, the captures ``"context"`` (above), ``"attention_output"`` (``W_O c + b_O``, before
the residual and LayerNorm) and ``"mlp_output"`` (the feed-forward block's last projection,
before its residual and LayerNorm) give a run's activations, and :func:`forward_patched` reruns
one input with one site of one layer taken from another run, many patches at once (one per
batch row). For the features study, :func:`forward_spliced` runs a batch with the residual
stream at one layer replaced (a dictionary's reconstruction spliced in). Maps are
cropped to each example's own length, so a batch gives the same numbers as one example at a
time (docs/METHODS.md section 1).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from analysis.core import hooks
from analysis.core.batching import batches, collate
from analysis.core.errors import InputError

CAPTURES = ("query", "key", "value_norms", "value_vectors", "attention_block", "context",
            "attention_output", "mlp_output")
# Where the patching study swaps activations: (capture giving the source, module per layer)
PATCH_SITES = ("heads", "residual", "attention", "mlp")


class CaptureUnavailable(InputError):
    """The architecture has no modules for the asked capture (message is user-facing)."""


@dataclass
class Forward:
    """One forward over a padded batch."""

    output: object  # the transformers output: attentions, hidden_states, logits, loss
    lengths: list[int]
    captured: dict[str, list] = field(default_factory=dict)

    @property
    def attentions(self):
        return self.output.attentions

    @property
    def hidden_states(self):
        return self.output.hidden_states

    def maps(self, b: int) -> np.ndarray:
        """[L, H, n, n] float32 maps of example ``b``, cropped to its n tokens."""
        n = self.lengths[b]
        return np.stack([a[b, :, :n, :n].detach().float().cpu().numpy()
                         for a in self.output.attentions]).astype(np.float32, copy=False)

    def hidden(self, b: int) -> np.ndarray:
        """[L+1, n, d] hidden states of example ``b`` (embeddings first)."""
        n = self.lengths[b]
        return np.stack([h[b, :n].float().cpu().numpy() for h in self.output.hidden_states])


def capture_unavailable(model, name: str) -> str | None:
    """Why ``model`` cannot give the capture ``name`` (one plain line), or None when it can."""
    try:
        _capture_modules(model, name)
    except CaptureUnavailable as exc:
        return str(exc)
    return None


def _capture_modules(model, name: str):
    if name in ("query", "key"):
        mods = hooks.projection_modules(model, hooks.QUERY_NAMES if name == "query"
                                        else hooks.KEY_NAMES)
        if not mods:
            raise CaptureUnavailable(
                "This architecture has no separate query/key projections, so the neuron view "
                "cannot be shown for it.")
        return mods
    if name == "context":
        return hooks.attention_output_projections(model)
    if name in ("value_vectors", "attention_block"):
        parts = hooks.layer_parts(model)
        return [p.value if name == "value_vectors" else p.block for p in parts]
    if name in ("attention_output", "mlp_output"):
        return [p.dense if name == "attention_output" else p.layer.output.dense
                for p in hooks.layer_parts(model)]
    pairs = hooks.value_modules(model, model.config.num_hidden_layers)
    if pairs is None:
        raise CaptureUnavailable(
            f"Attention norms are not available for {model.config.model_type} models (the "
            "value/output projections were not found).")
    return pairs


def _device(model):
    """The device of the model's weights (None for a model object without parameters)."""
    params = getattr(model, "parameters", None)
    return next(params()).device if params is not None else None


def _to_cpu(value):
    if hasattr(value, "cpu"):
        return value.cpu()
    if isinstance(value, (tuple, list)):
        return type(value)(_to_cpu(v) for v in value)
    return value


def _output_to_cpu(output):
    """The transformers output with every tensor on the CPU (in place; keys kept)."""
    for key in list(output.keys()):
        output[key] = _to_cpu(output[key])
    return output


def forward(model, tokenizer=None, encodings: Sequence | None = None, *, inputs: dict | None = None,
            attentions: bool = True, hidden_states: bool = False, capture: Sequence[str] = (),
            head_mask=None, grad: bool = False, labels=None, start_layer: int = 0,
            layer_inputs=None) -> Forward:
    """One forward of ``model`` over ``encodings`` (padded by :func:`collate`) or over ready
    ``inputs``; see the module docstring for the rest. With ``layer_inputs`` [B, N, D] (the
    inputs of encoder layer ``start_layer``, e.g. cached outputs of frozen lower layers), only
    the layers from ``start_layer`` on run (:func:`analysis.core.hooks.start_at_layer`); the
    attention maps and hidden states then cover those layers only."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    unknown = set(capture) - set(CAPTURES)
    if unknown:
        raise ValueError(f"Unknown capture {sorted(unknown)}: use {CAPTURES}.")
    device = _device(model)
    if inputs is None:
        inputs = collate(tokenizer, encodings, device)
        lengths = [e.n_tokens for e in encodings]
    else:
        inputs = {k: v.to(device) if device is not None else v for k, v in inputs.items()}
        lengths = inputs["attention_mask"].sum(-1).tolist()
    kwargs = dict(output_attentions=attentions, output_hidden_states=hidden_states)
    if labels is not None:
        kwargs["labels"] = labels.to(device) if device is not None else labels
    with contextlib.ExitStack() as stack:
        if head_mask is not None:
            stack.enter_context(hooks.masked_heads(model, head_mask))
        if layer_inputs is not None:
            stack.enter_context(hooks.start_at_layer(
                model, start_layer, layer_inputs.to(device) if device is not None
                else layer_inputs))
        stores = {}
        for name in capture:
            mods = _capture_modules(model, name)
            if name == "value_norms":
                stores[name] = (mods, stack.enter_context(hooks.capture([v for v, _ in mods])))
            elif name == "context":
                stores[name] = (mods, stack.enter_context(hooks.capture_inputs(mods)))
            else:
                stores[name] = (mods, stack.enter_context(hooks.capture(mods)))
        stack.enter_context(torch.enable_grad() if grad else torch.inference_mode())
        output = model(**inputs, **kwargs)
        captured = {}
        for name, (mods, store) in stores.items():
            if name == "value_norms":
                n_heads = model.config.num_attention_heads
                captured[name] = [hooks.head_value_norms(v, o, n_heads)
                                  for (_, o), v in zip(mods, store)]
            else:
                captured[name] = list(store)
    if not grad and device is not None and device.type != "cpu":
        output = _output_to_cpu(output)
        captured = {k: _to_cpu(v) for k, v in captured.items()}
    return Forward(output, lengths, captured)


def forward_batches(model, tokenizer, encodings: Sequence, batch_size: int = 16, *,
                    ascending: bool = False, bytes_per_token_pair: int = 0,
                    max_batch_mb: float = 256.0, **kwargs) -> Iterator[tuple[list[int], Forward]]:
    """``(indices, Forward)`` for every batch of :func:`analysis.core.batching.batches` over the
    encodings' lengths; ``kwargs`` go to :func:`forward`."""
    lengths = [e.n_tokens for e in encodings]
    for idx in batches(lengths, batch_size, ascending=ascending,
                       bytes_per_token_pair=bytes_per_token_pair, max_batch_mb=max_batch_mb):
        yield idx, forward(model, tokenizer, [encodings[i] for i in idx], **kwargs)


def forward_ablations(model, inputs: dict, disabled, method: str = "mask") -> np.ndarray:
    """Logits [R, B, C] (float32, CPU) of the classifier ``model`` on the padded batch
    ``inputs`` (B rows) under R ablations at once: ``disabled`` [R, L, H] (bool) names the heads
    disabled in ablation r (:func:`analysis.core.hooks.ablated_heads`, ``method`` "mask" or
    "uniform"). The layers below the first layer any ablation touches run once on the B rows;
    from that layer on the batch is replicated R times (:func:`analysis.core.hooks.fan_out`)."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    disabled = np.asarray(disabled, dtype=bool)
    R = disabled.shape[0]
    touched = np.flatnonzero(disabled.any(axis=(0, 2)))
    if not touched.size:
        logits = forward(model, inputs=inputs, attentions=False).output.logits
        return np.repeat(logits.float().numpy()[None], R, axis=0)
    B = inputs["input_ids"].shape[0]
    rows = torch.from_numpy(np.repeat(disabled, B, axis=0))  # row r * B + b: ablation r
    token_mask = inputs["attention_mask"].repeat(R, 1)
    with hooks.fan_out(model, int(touched[0]), R), \
            hooks.ablated_heads(model, rows, method, token_mask):
        logits = forward(model, inputs=inputs, attentions=False).output.logits
    return logits.float().numpy().reshape(R, B, -1)


def gate_gradients(model, inputs: dict, labels) -> tuple[np.ndarray, np.ndarray]:
    """(per-example cross-entropy losses [B], ``dL_b/dxi[b, l, h]`` [B, L, H]) of the classifier
    ``model`` on the padded batch ``inputs`` with gold ``labels`` [B], for gates ``xi = 1`` on
    every head's output (:func:`analysis.core.hooks.head_gates`, one gate per example, so the
    gradient of the summed loss is each example's own). The model's weights get no gradient."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    device = _device(model)
    B = inputs["input_ids"].shape[0]
    n_layers = len(hooks.attention_output_projections(model))
    dtype = next(model.parameters()).dtype
    gates = torch.ones((B, n_layers, model.config.num_attention_heads), dtype=dtype,
                       device=device, requires_grad=True)
    labels = torch.as_tensor(np.asarray(labels), dtype=torch.long, device=device)
    with hooks.head_gates(model, gates):
        logits = forward(model, inputs=inputs, attentions=False, grad=True).output.logits
        losses = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
        (grad,) = torch.autograd.grad(losses.sum(), gates)
    return losses.detach().double().cpu().numpy(), grad.double().cpu().numpy()


def rerun_layer(model, layer: int, hidden, *, zero_values=None, attention_mask=None):
    """Run encoder layer ``layer`` (0-based) of a BERT-style model alone on ``hidden``
    [B, N, D] (that layer's inputs), with the value vectors of token ``zero_values[b]`` set to
    zero in every head for batch element ``b`` (:func:`analysis.core.hooks.zeroed_values`; None
    zeroes nothing). ``attention_mask`` is an additive mask broadcastable to [B, H, N, N] (None:
    every token sees every token). Returns the layer's output [B, N, D] on the CPU."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    part = hooks.layer_parts(model)[layer]
    device = _device(model)
    hidden = hidden.to(device) if device is not None else hidden
    if attention_mask is not None and device is not None:
        attention_mask = attention_mask.to(device)
    with contextlib.ExitStack() as stack:
        if zero_values is not None:
            stack.enter_context(hooks.zeroed_values(part.value, zero_values))
        stack.enter_context(torch.inference_mode())
        out = part.layer(hidden, attention_mask)
    out = out[0] if isinstance(out, (tuple, list)) else out
    return out.cpu()


def embed_words(model, input_ids):
    """The word (token) embeddings of ``input_ids`` [B, N] -> [B, N, D], without position or
    segment embeddings (what ``inputs_embeds`` replaces), detached, on the model's device."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    device = _device(model)
    with torch.inference_mode():
        emb = model.get_input_embeddings()(input_ids.to(device) if device is not None
                                           else input_ids)
    return emb.clone()


def class_probabilities(model, inputs_embeds, attention_mask=None, token_type_ids=None):
    """Softmax over a sequence classifier's logits [B, C] from word embeddings
    ``inputs_embeds`` [B, N, D] (position and segment embeddings are added by the model), with
    gradients enabled: the function :mod:`captum` differentiates (analysis.attribution)."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    kwargs = {"inputs_embeds": inputs_embeds}
    if attention_mask is not None:
        kwargs["attention_mask"] = attention_mask
    if token_type_ids is not None:
        kwargs["token_type_ids"] = token_type_ids
    with torch.enable_grad():
        logits = model(**kwargs).logits
    return torch.softmax(logits.float(), dim=-1)


def rerun_after_attention(model, layer: int, pre_ln):
    """The rest of encoder layer ``layer`` (0-based) of a BERT-style model from the input of
    its attention block's LayerNorm ``pre_ln`` [B, N, D] (= W_O c + b_O + x): that LayerNorm,
    then the feed-forward block with its residual and LayerNorm. Returns the layer's output
    [B, N, D] on the CPU. Value zeroing changes only ``c``, so it reruns this part alone
    (docs/METHODS.md section 11)."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    part = hooks.layer_parts(model)[layer]
    device = _device(model)
    pre_ln = pre_ln.to(device) if device is not None else pre_ln
    with torch.inference_mode():
        out = part.layer.feed_forward_chunk(part.layer_norm(pre_ln))
    return out.cpu()


def patch_site_module(model, site: str, layer: int):
    """The module whose activation ``site`` of ``layer`` (0-based) is: the attention output
    projection (its input, the heads' context vectors: ``heads``), the encoder layer
    (``residual``: the stream after the layer), the attention output projection (its output
    ``W_O c + b_O``: ``attention``) or the feed-forward block's last projection (``mlp``);
    and whether its input (not its output) is patched."""
    if site == "heads":
        return hooks.attention_output_projections(model)[layer], True
    if site == "residual":
        return hooks.encoder_layers(model)[layer], False
    if site in ("attention", "mlp"):
        part = hooks.layer_parts(model)[layer]
        return (part.dense if site == "attention" else part.layer.output.dense), False
    raise ValueError(f"Unknown patching site {site!r}: use {PATCH_SITES}.")


def forward_patched(model, inputs: dict, site: str, layer: int, source, mask) -> np.ndarray:
    """Logits [R, C] (float64, CPU) of the classifier ``model`` on ONE input (``inputs``, one
    unpadded row) under R patches at once: row ``r`` runs the input with the activation of
    ``site`` at ``layer`` replaced by ``source`` [T, D] (from another run of the same length)
    where ``mask[r]`` ([T, D] or [T, 1], bool) is set (:func:`analysis.core.hooks.patched`). The
    layers below ``layer`` run once, the rest on R copies (:func:`analysis.core.hooks.fan_out`)."""
    mask = np.asarray(mask, dtype=bool)
    R = mask.shape[0]
    if inputs["input_ids"].shape[0] != 1:
        raise ValueError("forward_patched takes one input row.")
    module, on_input = patch_site_module(model, site, layer)
    # lazy: imported when used: torch (heavy)
    import torch

    with hooks.fan_out(model, layer, R), hooks.patched(module, torch.as_tensor(source),
                                                       torch.from_numpy(mask),
                                                       on_input=on_input):
        logits = forward(model, inputs=inputs, attentions=False).output.logits
    return logits.double().cpu().numpy()


def forward_spliced(model, inputs: dict, layer: int, fn, **kwargs) -> Forward:
    """One :func:`forward` of the padded batch ``inputs`` with the residual stream at
    ``hidden_states[layer]`` (0 = the embeddings) replaced by ``fn(h)`` ([B, N, D] in, the same
    shape out: a dictionary's reconstruction, or zeros) for the layers above it
    (:func:`analysis.hooks.replaced`; the features study's splice fidelity)."""
    module, on_input = hooks.residual_site(model, layer)
    with hooks.replaced(module, fn, on_input=on_input):
        return forward(model, inputs=inputs, **kwargs)
