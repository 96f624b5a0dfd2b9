"""Patching one input against its counterfactual (docs/METHODS.md, "Causal patching"; Vig et al.
2020, Meng et al. 2022): every head of every layer (all heads of one layer in one batched
forward), and every layer x position of the residual stream, the attention output and the MLP
output, in one direction (noising: the counterfactual's activation into the run on the input;
denoising: the input's into the run on the counterfactual). One call for the page and the CLI."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from analysis.core.batching import collate
from analysis.core.encoding import Encoding, encode
from analysis.core.errors import InputError
from analysis.core.forward import PATCH_SITES, forward, forward_patched
from analysis.patching.metric import DIRECTIONS, MIN_GAP, Contrast, contrast, logit_diff, \
    normalised, softmax
from analysis.absa.data import CATEGORIES
from analysis.absa.tasks import build_examples
from analysis.core.hooks import layer_parts
from analysis.importance.evalset import check_classifier
from analysis.patching.counterfactuals import opinion_pool, opinion_suggestions

POSITION_SITES = ("residual", "attention", "mlp")


def check_same_length(enc: Encoding, counter: Encoding) -> None:
    """Refuse (one line) a counterfactual with another number of tokens."""
    if enc.n_tokens != counter.n_tokens:
        raise InputError(
            f"The input has {enc.n_tokens} tokens and the counterfactual {counter.n_tokens}: "
            "patching swaps activations position by position, so both need the same number "
            "of tokens (change words for words that split into as many pieces).")


@dataclass
class Runs:
    """The clean and counterfactual runs: logits and the activations of every site."""

    logits: np.ndarray  # [C]
    acts: dict  # site -> list per layer of [T, D] tensors


def _run(model, tokenizer, enc: Encoding) -> tuple[dict, Runs]:
    inputs = collate(tokenizer, [enc])
    out = forward(model, inputs=inputs, attentions=False, hidden_states=True,
                  capture=("context", "attention_output", "mlp_output"))
    acts = {"heads": [c[0] for c in out.captured["context"]],
            "residual": [h[0] for h in out.hidden_states[1:]],
            "attention": [c[0] for c in out.captured["attention_output"]],
            "mlp": [c[0] for c in out.captured["mlp_output"]]}
    return inputs, Runs(out.output.logits[0].double().numpy(), acts)


def head_masks(n_heads: int, n_tokens: int, width: int) -> np.ndarray:
    """[H, T, D] bool: row h selects head h's slice of the concatenated context vectors at
    every position."""
    mask = np.zeros((n_heads, n_tokens, width), dtype=bool)
    dh = width // n_heads
    for h in range(n_heads):
        mask[h, :, h * dh:(h + 1) * dh] = True
    return mask


def position_masks(n_tokens: int) -> np.ndarray:
    """[T, T, 1] bool: row i selects position i."""
    return np.eye(n_tokens, dtype=bool)[:, :, None]


@dataclass
class PairPatching:
    """Everything the page shows and the CLI writes for one input and its counterfactual."""

    tokens: list[str]
    counter_tokens: list[str]
    class_names: list[str]
    contrast: Contrast
    direction: str
    clean_logits: np.ndarray
    counter_logits: np.ndarray
    heads: np.ndarray  # [L, H] normalised effect
    heads_prob: np.ndarray  # [L, H] change of P(clean class)
    positions: dict[str, np.ndarray]  # site -> [L, n] normalised effect
    positions_prob: dict[str, np.ndarray]
    differs: list[int]  # positions whose token differs between the two inputs
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    # the two answers' names, where the logits are not at hand (read back from the JSON)
    answers: tuple[str, str] | None = None

    @property
    def classes(self) -> tuple[str, str]:
        return self.class_names[self.contrast.a], self.class_names[self.contrast.b]

    @property
    def predictions(self) -> tuple[str, str]:
        """(the input's answer, the counterfactual's answer)."""
        if self.answers is not None:
            return self.answers
        return (self.class_names[int(np.argmax(self.clean_logits))],
                self.class_names[int(np.argmax(self.counter_logits))])

    @property
    def weak(self) -> bool:
        return abs(self.contrast.gap) < MIN_GAP

    def to_json(self) -> dict:
        def nested(a):
            a = np.asarray(a, dtype=np.float64)
            return [nested(x) for x in a] if a.ndim else (None if not np.isfinite(a)
                                                          else float(a))

        c = self.contrast
        return {"tokens": list(self.tokens), "counter_tokens": list(self.counter_tokens),
                "classes": list(self.classes),
                "predictions": dict(zip(("clean", "counter"), self.predictions)),
                "clean": c.clean, "counter": c.counter, "direction": self.direction,
                "heads": nested(self.heads), "heads_probability": nested(self.heads_prob),
                "residual": nested(self.positions["residual"]),
                "attention": nested(self.positions["attention"]),
                "mlp": nested(self.positions["mlp"]), "differs": list(self.differs),
                "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: dict) -> PairPatching:
        """One pair's result back from its JSON: the two classes compared, both answers, the
        shares per head and position and the heads' probability changes (the positions'
        probability changes and the logits are not in the JSON: NaN and None)."""
        def arr(x):
            return np.array([[np.nan if v is None else v for v in row] for row in x],
                            dtype=float)

        a, b = data["classes"]
        names = [a] if a == b else [a, b]
        positions = {s: arr(data[s]) for s in POSITION_SITES}
        return cls(list(data["tokens"]), list(data["counter_tokens"]), names,
                   Contrast(0, names.index(b), float(data["clean"]), float(data["counter"])),
                   data["direction"], None, None, arr(data["heads"]),
                   arr(data["heads_probability"]), positions,
                   {s: np.full_like(m, np.nan) for s, m in positions.items()},
                   [int(i) for i in data["differs"]], 0.0, list(data["notes"]),
                   (data["predictions"]["clean"], data["predictions"]["counter"]))


def class_names(model) -> list[str]:
    n = int(model.config.num_labels)
    names = getattr(model.config, "id2label", None) or {}
    return [str(names.get(i, names.get(str(i), i))) for i in range(n)]


def _layer_parts_or_refuse(model) -> None:
    try:
        layer_parts(model)
    except InputError:
        kind = getattr(model.config, "model_type", type(model).__name__)
        raise InputError(f"Patching reads the layers of BERT, RoBERTa or ELECTRA encoders; "
                         f"{kind} layers are not supported.") from None


def patch_pair(loaded, text: str, pair: str | None, counter_text: str,
               counter_pair: str | None, *, direction: str = "noising",
               sites=PATCH_SITES, max_length: int | None = None,
               progress: Callable[[float, str], None] | None = None) -> PairPatching:
    """Patch every head, and every layer x position of ``sites``, between (text, pair) and
    (counter_text, counter_pair) on the classifier ``loaded`` in ``direction``."""
    check_classifier(loaded)
    if direction not in DIRECTIONS:
        raise InputError(f"Unknown direction {direction!r}: use noising or denoising.")
    unknown = set(sites) - set(PATCH_SITES)
    if unknown:
        raise InputError(f"Unknown site(s) {sorted(unknown)}: use {', '.join(PATCH_SITES)}.")
    model, tok = loaded.model, loaded.tokenizer
    _layer_parts_or_refuse(model)
    t0 = time.perf_counter()
    say = progress or (lambda f, t: None)
    max_length = int(max_length or loaded.max_length)
    enc = encode(tok, text, pair, max_length=max_length)
    cenc = encode(tok, counter_text, counter_pair, max_length=max_length)
    check_same_length(enc, cenc)
    if enc.input_ids == cenc.input_ids:
        raise InputError("The counterfactual is the same as the input: change a word (keeping "
                         "the number of tokens).")
    clean_inputs, clean = _run(model, tok, enc)
    counter_inputs, counter = _run(model, tok, cenc)
    c = contrast(clean.logits, counter.logits)
    base_inputs, source = (clean_inputs, counter) if direction == "noising" else \
        (counter_inputs, clean)
    base_logits = clean.logits if direction == "noising" else counter.logits
    L, H, T = loaded.n_layers, loaded.n_heads, enc.n_tokens
    p_base = softmax(base_logits)[c.a]
    heads = np.full((L, H), np.nan)
    heads_p = np.full((L, H), np.nan)
    positions = {s: np.full((L, T), np.nan) for s in POSITION_SITES if s in sites}
    positions_p = {s: np.full((L, T), np.nan) for s in positions}
    jobs = [(s, l) for s in sites for l in range(L)]
    for k, (site, layer) in enumerate(jobs):
        src = source.acts[site][layer]
        mask = head_masks(H, T, src.shape[-1]) if site == "heads" else position_masks(T)
        logits = forward_patched(model, base_inputs, site, layer, src, mask)
        eff = normalised(logit_diff(logits, c.a, c.b), c, direction)
        dp = softmax(logits)[:, c.a] - p_base
        if site == "heads":
            heads[layer], heads_p[layer] = eff, dp
        else:
            positions[site][layer], positions_p[site][layer] = eff, dp
        say((k + 1) / len(jobs), f"{site}, layer {layer + 1}")
    differs = [i for i, (a, b) in enumerate(zip(enc.input_ids, cenc.input_ids)) if a != b]
    notes = list(dict.fromkeys(enc.notices + cenc.notices))
    if abs(c.gap) < MIN_GAP:
        notes.append(f"The counterfactual moves the logit difference by only {c.gap:+.2f}: "
                     "normalised effects divide by that, so they are unstable here.")
    return PairPatching(enc.tokens, cenc.tokens, class_names(model), c, direction,
                        clean.logits, counter.logits, heads, heads_p, positions, positions_p,
                        differs, time.perf_counter() - t0, notes)





def pair_max_length(loaded, card: dict | None) -> int:
    """The token cap the classifier was trained with (an ABSA card's), else the model's."""
    return int((card or {}).get("max_length") or loaded.max_length)


def answers(loaded, pairs, max_length: int | None = None) -> list[int]:
    """The classifier's predicted class of each (text, pair) (one batched forward)."""
    encs = [encode(loaded.tokenizer, t, p, max_length=int(max_length or loaded.max_length))
            for t, p in pairs]
    out = forward(loaded.model, loaded.tokenizer, encs, attentions=False)
    return [int(i) for i in out.output.logits.argmax(-1)]


def default_pair(loaded, ev, max_length: int | None = None) -> tuple[int, str]:
    """(sentence index, category) the page opens on: the first pair of ``ev``'s sentences with
    a positive or negative gold label whose opposite-opinion counterfactual changes the
    classifier's answer (the sentiment flips: a clear contrast), else the first with an
    opposite-opinion counterfactual, else the first sentence's first category."""
    pool = opinion_pool(ev.sentences)
    first = None
    for i in range(len(ev.sentences)):
        row = ev.sentences[i]
        for ex in build_examples(ev.sentences.select([i]), ev.task, ev.pair_order):
            if ex.gold not in ("positive", "negative") or ex.row > 0:
                continue
            found = opinion_suggestions(loaded.tokenizer, row, ex, pool,
                                        int(max_length or loaded.max_length), limit=1)
            if not found:
                continue
            first = first or (i, ex.category)
            s = found[0]
            clean, counter = answers(loaded, [(ex.text_a, ex.text_b), (s.text, s.pair)],
                                     max_length)
            if clean != counter:
                return i, ex.category
    return first or (0, CATEGORIES[0])
