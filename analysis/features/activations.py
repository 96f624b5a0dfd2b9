"""A corpus's residual-stream activations at chosen layers, through the one forward path
(:mod:`analysis.encoding` -> :mod:`analysis.batching` -> :mod:`analysis.forward`, hidden
states; layer 0 = the embeddings), in length-sorted batches (docs/METHODS.md section 19).

Which tokens count (a stated choice): every real token of every input, [CLS] and [SEP]
included, since the model reads them and a splice replaces them too (the classifier reads its
answer from [CLS]); padding never (each example is cropped to its own length). The browser
marks [CLS] and [SEP] so that a feature that fires only on them reads as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.core.encoding import Encoding, encode
from analysis.core.errors import DataError, InputError
from analysis.features.corpus import FeatureCorpus
from analysis.core.forward import forward_batches

Progress = Callable[[int, int], None]


@dataclass
class Tokens:
    """Every kept token of a corpus, in input order: which input (``example``, an index into
    the corpus), its position there, its text, whether it is [CLS]/[SEP], whether its input is
    held out, and its labels."""

    example: np.ndarray  # [N] int32
    position: np.ndarray  # [N] int32
    token: list[str]
    special: np.ndarray  # [N] bool
    heldout: np.ndarray  # [N] bool
    labels: dict[str, list[str]] = field(default_factory=dict)
    encodings: list[Encoding] = field(default_factory=list)  # per kept input
    inputs: list[int] = field(default_factory=list)  # the corpus index of each kept input

    def __len__(self) -> int:
        return len(self.token)


@dataclass
class Activations:
    """``x[layer]`` [N, d] float32 for each collected layer, and the tokens they belong to."""

    x: dict[int, np.ndarray]
    tokens: Tokens
    notes: list[str] = field(default_factory=list)


def encode_corpus(tokenizer, corpus: FeatureCorpus, max_length: int) -> tuple[list, list[int]]:
    """(encodings, corpus indices) of the inputs the tokenizer can read."""
    encs, kept = [], []
    for i in range(len(corpus)):
        try:
            encs.append(encode(tokenizer, corpus.texts[i], corpus.pairs[i],
                               max_length=max_length))
        except InputError:
            continue
        kept.append(i)
    if not encs:
        raise DataError("No input of the corpus has a token the model can read.")
    return encs, kept


def token_table(corpus: FeatureCorpus, encs: Sequence[Encoding], kept: Sequence[int]) -> Tokens:
    """The :class:`Tokens` of the kept inputs (every real token, in input order)."""
    example, position, token, special, held = [], [], [], [], []
    labels: dict[str, list[str]] = {name: [] for name in corpus.label_names}
    for e, i in zip(encs, kept):
        per = corpus.piece_labels(i, e)
        for t in range(e.n_tokens):
            example.append(i)
            position.append(t)
            token.append(e.tokens[t])
            special.append(bool(e.special[t]))
            held.append(bool(corpus.heldout[i]))
            for name in labels:
                labels[name].append(per[name][t])
    return Tokens(np.asarray(example, np.int32), np.asarray(position, np.int32), token,
                  np.asarray(special, bool), np.asarray(held, bool), labels, list(encs),
                  list(kept))


def check_layers(loaded, layers: Sequence[int]) -> None:
    n_layers = int(loaded.n_layers)
    bad = [layer for layer in layers if not 0 <= int(layer) <= n_layers]
    if bad:
        raise InputError(f"The layer must be from 0 (the embeddings) to {n_layers}, not "
                         f"{bad[0]}.")


def token_cap(loaded, corpus: FeatureCorpus) -> int:
    """The tokens each input is cut to: the corpus's cap (a card's), never above the model's."""
    return min(int(corpus.max_length or loaded.max_length), int(loaded.max_length))


def hidden_rows(loaded, encs: Sequence[Encoding], layers: Sequence[int], batch_size: int = 32,
                progress: Progress | None = None) -> dict[int, list[np.ndarray]]:
    """``{layer: [n_tokens, d] float32 per encoding}``: each encoding's real tokens' hidden
    states, through the one batched forward path (length-sorted batches, cropped to length)."""
    per: dict[int, list] = {int(layer): [None] * len(encs) for layer in layers}
    done = 0
    for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encs, batch_size,
                                   attentions=False, hidden_states=True):
        for b, i in enumerate(idx):
            n = fw.lengths[b]
            for layer in per:
                per[layer][i] = fw.hidden_states[layer][b, :n].float().numpy()
        done += len(idx)
        if progress is not None:
            progress(done, len(encs))
    return per


def assemble(corpus: FeatureCorpus, encs: Sequence[Encoding], kept: Sequence[int],
             per: dict[int, list[np.ndarray]], cap: int) -> Activations:
    """The :class:`Activations` of the kept inputs from their per-input hidden states."""
    notes = list(corpus.notes)
    if len(encs) < len(corpus):
        notes.append(f"Skipped {len(corpus) - len(encs)} input(s) with no token the model can "
                     "read.")
    cut = sum(e.truncated for e in encs)
    if cut:
        notes.append(f"{cut} input(s) longer than {cap} tokens were cut.")
    x = {layer: np.ascontiguousarray(np.concatenate(v), np.float32) for layer, v in per.items()}
    return Activations(x, token_table(corpus, encs, kept), notes)


def collect(loaded, corpus: FeatureCorpus, layers: Sequence[int], batch_size: int = 32,
            progress: Progress | None = None, encodings=None) -> Activations:
    """The activations of ``corpus`` at ``layers`` (hidden-states indices) for ``loaded``
    (``encodings``: the (encodings, kept) of :func:`encode_corpus`, e.g. another model's with
    the same tokenizer, so that two models' tokens line up), in this process (on a Ray
    cluster: :func:`analysis.features.job.collect_on`)."""
    check_layers(loaded, layers)
    cap = token_cap(loaded, corpus)
    encs, kept = encodings or encode_corpus(loaded.tokenizer, corpus, cap)
    return assemble(corpus, encs, kept, hidden_rows(loaded, encs, layers, batch_size, progress),
                    cap)
