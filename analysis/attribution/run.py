"""One input's attributions by every method (docs/METHODS.md section 11): the function the
Attribution page and ``python -m analysis attribution --text`` both call.

:func:`attribute` encodes the text (or pair), runs ONE forward capturing what the mixing
methods need (attentions, hidden states, value vectors), computes the per-layer mixing
matrices, their aggregation through the layers, the input scores (the last aggregate's [CLS]
row) and, for a sequence classifier, the prediction and the gradient methods.
:meth:`Attribution.to_json` is the CLI's JSON (the README documents it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analysis.core import hooks
from analysis.attribution.gradients import (IG_STEPS, gradient_scores, has_task_head,
                                            no_head_message)
from analysis.attribution.l1 import FAST
from analysis.attribution.mixing import (DECOMPOSED, decomposed_mixing, head_mean,
                                         layer_inputs, rollout)
from analysis.attribution.zeroing import value_zeroing
from analysis.core.encoding import encode
from analysis.core.errors import InputError
from analysis.core.execution.threads import side_by_side
from analysis.core.forward import forward
from analysis.core.models import load_with_head
from analysis.core.study import Field, Schema, StudyResult

MIXING = ("attention", "norm", "norm_resln", "alti", "value_zeroing")
GRADIENT = ("grad_input", "integrated_gradients")
METHODS = MIXING + GRADIENT
# Methods whose layer matrix leaves the residual out: aggregated with Abnar & Zuidema's 0.5 I.
WITHOUT_RESIDUAL = ("attention", "norm")
NAMES = {"attention": "Raw attention", "norm": "Attention norms",
         "norm_resln": "Norms with residual and layer norm", "alti": "ALTI",
         "value_zeroing": "Value zeroing", "grad_input": "Gradient x input",
         "integrated_gradients": "Integrated gradients"}
MAX_TOKENS = 512
# ALTI's L1 distances in float32 summed in float64: within 1e-6 of the float64 definition on
# row-normalised matrices (tests/unit/test_attribution_mixing.py), no ranking of the held-out
# pairs changed (docs/METHODS.md section 20); 1.8x faster than float64 at BERT-base.
ALTI_PRECISION = FAST


@dataclass
class MethodResult:
    layers: np.ndarray | None  # [L, n, n] rows normalised
    rollout: np.ndarray | None  # [L, n, n] aggregate through layers 1..l
    input: np.ndarray  # [n]
    completeness_gap: float | None = None


@dataclass
class Attribution(StudyResult):
    """One input's attributions by every asked method; its JSON (the command's, the page's
    download): :data:`SCHEMA`, numbers rounded to 6 decimals."""

    SCHEMA = Schema((
        Field("tokens", "the word pieces, [CLS]/[SEP] included"),
        Field("prediction", "{label, probabilities: {label: p}} of a classifier; null without "
                            "a task head"),
        Field("methods", "method -> {layers: layers x tokens x tokens mixing (rows sum to 1; "
                         "null for the gradient methods), rollout: the same aggregated through "
                         "layers 1..l, input: per token score, completeness_gap (integrated "
                         "gradients only)}"),
    ))

    tokens: list[str]
    special: np.ndarray
    word_ids: list[int]
    words: list[str]
    prediction: dict | None  # {"label", "probabilities": {label: p}}
    methods: dict[str, MethodResult]
    notes: list[str] = field(default_factory=list)
    encoding: object = None  # the analysis.core.encoding.Encoding explained

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def json_fields(self) -> dict:
        """Tokens, prediction, and per method layers / rollout / input (and the completeness
        gap of integrated gradients); numbers rounded to 6 decimals."""
        methods = {}
        for name, r in self.methods.items():
            entry = {"layers": _rounded(r.layers), "rollout": _rounded(r.rollout),
                     "input": _rounded(r.input)}
            if name == "integrated_gradients":
                entry["completeness_gap"] = round(float(r.completeness_gap), 8)
            methods[name] = entry
        return {"tokens": list(self.tokens), "prediction": self.prediction, "methods": methods}

    @classmethod
    def from_json(cls, data: dict) -> "Attribution":
        """The scores back from their JSON, to 6 decimals. The JSON keeps no encoding: each
        token is its own word, and none is marked special."""
        cls.SCHEMA.check(data)

        def arr(v):
            return None if v is None else np.asarray(v, dtype=np.float64)

        methods = {name: MethodResult(arr(m["layers"]), arr(m["rollout"]), arr(m["input"]),
                                      m.get("completeness_gap"))
                   for name, m in data["methods"].items()}
        tokens = list(data["tokens"])
        return cls(tokens, np.zeros(len(tokens), dtype=bool), list(range(len(tokens))), tokens,
                   data["prediction"], methods)


def check_methods(methods, loaded=None) -> tuple[str, ...]:
    """The asked methods in the standard order; unknown names, and gradient methods for a
    model without a task head, raise InputError (one line), as does a model whose layers cannot
    be decomposed (DistilBERT, ALBERT). None: every method the model allows."""
    if loaded is not None:
        hooks.layer_parts(loaded.model)
    if methods is None:
        allowed = METHODS if loaded is None or has_task_head(loaded.model) else MIXING
        return tuple(allowed)
    methods = [m.strip() for m in methods if m and m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise InputError(f"Unknown method {unknown[0]!r}; choose from {', '.join(METHODS)}.")
    if not methods:
        raise InputError(f"No method asked; choose from {', '.join(METHODS)}.")
    if loaded is not None and not has_task_head(loaded.model) \
            and any(m in GRADIENT for m in methods):
        raise InputError(no_head_message(loaded.name))
    return tuple(m for m in METHODS if m in methods)


def encode_input(loaded, text, pair=None, max_tokens: int = MAX_TOKENS):
    """The encoding of one input; InputError (one line) for empty text or more tokens than
    ``max_tokens`` (and the model) allow."""
    limit = min(int(max_tokens), loaded.max_length)
    enc = encode(loaded.tokenizer, text, pair, max_length=limit)
    if enc.truncated:
        raise InputError(f"The input has {enc.n_tokens_full} tokens; attribution takes at most "
                         f"{limit}. Shorten the text.")
    return enc


def prediction_of(model, logits) -> dict:
    """{"label", "probabilities": {label: p}} of one example's logits [C]."""
    # lazy: imported when used: torch (heavy)
    import torch

    probs = torch.softmax(logits.detach().float().cpu(), -1).numpy().astype(float)
    id2label = getattr(model.config, "id2label", None) or {}
    labels = [str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}"))) for i in range(len(probs))]
    return {"label": labels[int(np.argmax(probs))],
            "probabilities": {lab: float(p) for lab, p in zip(labels, probs)}}


def mixing_layers(loaded, enc, methods=MIXING, precision: str = ALTI_PRECISION
                  ) -> tuple[dict[str, np.ndarray], object]:
    """{method: [L, n, n]} of the asked mixing methods for one encoding, and the Forward.
    The layers' matrices are computed side by side on the calling thread's torch threads,
    each layer on one (the same numbers whatever the threads); ALTI's distances in
    ``precision`` (:mod:`analysis.attribution.l1`)."""
    # lazy: imported when used: torch (heavy)
    import torch

    parts = hooks.layer_parts(loaded.model)
    fw = forward(loaded.model, loaded.tokenizer, [enc], hidden_states=True,
                 capture=("value_vectors",))
    out: dict[str, list] = {m: [] for m in methods if m in MIXING}
    wanted = tuple(m for m in DECOMPOSED if m in out)
    lis = layer_inputs(fw, parts)
    workers = max(1, int(torch.get_num_threads()))

    def layer(li):
        torch.set_num_threads(1)  # this pool thread's own count: one layer, one thread
        mats = {"attention": head_mean(li.probs.numpy())} if "attention" in out else {}
        if wanted:
            mats.update(decomposed_mixing(li, wanted, precision))
        return mats

    try:
        with side_by_side(layer, lis, workers) as done:
            for mats in done:
                for name, mat in mats.items():
                    out[name].append(mat)
    finally:
        torch.set_num_threads(workers)  # threads started later take this count again
    if "value_zeroing" in out:
        n = enc.n_tokens
        states = [h[0, :n].float() for h in fw.hidden_states]
        out["value_zeroing"] = list(value_zeroing(loaded.model, lis, states))
    return {m: np.stack(v) for m, v in out.items()}, fw


def attribute(loaded, text: str, pair: str | None = None, methods=None,
              steps: int = IG_STEPS, max_tokens: int = MAX_TOKENS) -> Attribution:
    """Every asked method's attributions for one input (see the module docstring)."""
    methods = check_methods(methods, loaded)
    enc = encode_input(loaded, text, pair, max_tokens)
    mats, fw = mixing_layers(loaded, enc, methods)
    head = has_task_head(loaded.model)
    prediction = prediction_of(loaded.model, fw.output.logits[0]) if head else None
    results = {}
    for m in methods:
        if m in MIXING:
            roll = rollout(mats[m], residual=m in WITHOUT_RESIDUAL)
            results[m] = MethodResult(mats[m], roll, roll[-1, 0].copy())
    if any(m in GRADIENT for m in methods):
        g = gradient_scores(loaded, enc, steps=steps)
        if "grad_input" in methods:
            results["grad_input"] = MethodResult(None, None, g.grad_input)
        if "integrated_gradients" in methods:
            results["integrated_gradients"] = MethodResult(None, None, g.integrated_gradients,
                                                           g.completeness_gap)
    notes = list(enc.notices)
    if not head:
        notes.append(no_head_message(loaded.name))
    return Attribution(list(enc.tokens), np.asarray(enc.special), list(enc.word_ids),
                       list(enc.words), prediction, results, notes, enc)


def _rounded(a, digits: int = 6):
    return None if a is None else np.round(np.asarray(a, dtype=np.float64), digits).tolist()


def agreement(result: Attribution) -> tuple[list[str], np.ndarray]:
    """Spearman correlation [M, M] between the methods' input scores over the non-special
    tokens (NaN where a method's scores are constant)."""
    # lazy: imported when used: scipy (heavy)
    from scipy.stats import spearmanr

    names = list(result.methods)
    keep = ~np.asarray(result.special, dtype=bool)
    scores = np.stack([result.methods[m].input[keep] for m in names])
    out = np.eye(len(names))
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            if keep.sum() < 2 or np.ptp(scores[a]) == 0 or np.ptp(scores[b]) == 0:
                rho = np.nan
            else:
                rho = float(spearmanr(scores[a], scores[b]).statistic)
            out[a, b] = out[b, a] = rho
    return names, out


def load_for_attribution(spec: str):
    """The model of ``spec`` with its classification head when its checkpoint has one (the
    example checkpoint, a fine-tuned classifier), else the encoder alone
    (:func:`analysis.core.models.load_with_head`)."""
    return load_with_head(spec)
