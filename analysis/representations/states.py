"""Hidden states of every layer (layer 0 = the embeddings) from the one forward path
(docs/METHODS.md section 13, "Vectors").

- One input: every token's vector, [CLS]/[SEP] included (:func:`input_states`).
- A treebank: every word's vector (the mean of its pieces) with its UPOS, through
  :func:`analysis.syntax.states.extract_word_states` (one batched pass).
- ABSA data: every (review, category present in it) pair in the example checkpoint's format
  (NLI-M, review first: ``analysis.aspects.gold.build_pairs``), one batched pass, and every
  review word's vector (the mean of its pieces) with its role for the asked category: the
  aspect term of that category, an opinion word of it, a term of another aspect, or other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from typing import Callable, Sequence

import numpy as np

from analysis.core.encoding import Encoding, encode
from analysis.core.errors import DataError, InputError
from analysis.core.forward import forward, forward_batches

ROLES = ("aspect", "opinion", "other aspect", "other")
ROLE_NAMES = {"aspect": "aspect term of the asked category", "opinion": "opinion word",
              "other aspect": "term of another aspect", "other": "other word"}
ABSA_TASK, ABSA_ORDER = "nli_m", "review-aux"  # the example checkpoint's recipe


def hidden_size(loaded) -> int:
    config = loaded.model.config
    return int(getattr(config, "hidden_size", None) or getattr(config, "dim", 0))


def check_same_shape(a, b) -> None:
    """Raise InputError unless the two models have as many layers and vectors of one size."""
    sa, sb = (a.n_layers, hidden_size(a)), (b.n_layers, hidden_size(b))
    if sa != sb:
        raise InputError(f"The models have different shapes ({a.n_layers} layers of {sa[1]} "
                         f"numbers against {b.n_layers} layers of {sb[1]}), so their vectors "
                         "cannot share one projection.")


CONTEXT_WORDS = 12  # hover text: at most this many words on each side of the marked one


def marked(words, k: int, window: int = CONTEXT_WORDS) -> str:
    """The words joined by spaces with word ``k`` between guillemets (hover text), at most
    ``window`` words on each side ("..." where more were left out)."""
    lo, hi = max(0, k - window), min(len(words), k + window + 1)
    text = " ".join(f"«{w}»" if i == k else str(w) for i, w in enumerate(words[lo:hi], lo))
    return ("... " if lo > 0 else "") + text + (" ..." if hi < len(words) else "")


@dataclass
class InputStates:
    """One input's tokens and their vectors ``layers`` [L+1, n, d]."""

    encoding: Encoding
    layers: np.ndarray

    @property
    def tokens(self) -> list[str]:
        return list(self.encoding.tokens)

    def contexts(self) -> list[str]:
        """For every token, the input's words with the token's word marked."""
        enc = self.encoding
        return [marked(enc.words, w) for w in enc.word_ids]


def encode_input(loaded, text: str, pair: str | None = None) -> Encoding:
    """The input's encoding; raises InputError for fewer than two real tokens."""
    enc = encode(loaded.tokenizer, text, pair, max_length=loaded.max_length)
    if int((~enc.special).sum()) < 2:
        raise InputError("The text has one token; a projection needs at least two (type a "
                         "few words).")
    return enc


def input_states(loaded, text: str, pair: str | None = None,
                 encoding: Encoding | None = None) -> InputStates:
    """Every layer's token vectors of one input from one forward."""
    enc = encoding if encoding is not None else encode_input(loaded, text, pair)
    fw = forward(loaded.model, loaded.tokenizer, [enc], attentions=False, hidden_states=True)
    return InputStates(enc, fw.hidden(0))


def check_same_tokens(a: InputStates, b: InputStates) -> None:
    if list(a.encoding.input_ids) != list(b.encoding.input_ids):
        raise InputError("The two models split the text into different tokens, so their "
                         "vectors cannot be compared token by token.")


@dataclass
class WordCorpus:
    """Word vectors of a corpus: ``layers[l]`` [N, D]; per word its form, its sentence
    (``groups``), its place ``(sentence, position)`` in ``sentences`` and its labels."""

    layers: list[np.ndarray]
    forms: list[str]
    groups: np.ndarray
    places: list[tuple[int, int]]
    sentences: list[list[str]]
    labels: dict[str, list[str]]
    kind: str
    n_sentences: int
    notes: list[str] = field(default_factory=list)
    sentence_labels: list[str] | None = None  # a labelled corpus: each sentence's label

    def context(self, i: int) -> str:
        s, p = self.places[i]
        return marked(self.sentences[s], p)


def concat_words(parts: Sequence[WordCorpus], offsets: Sequence[int]) -> WordCorpus:
    """One corpus from the shards' corpora in corpus order (``offsets``: each shard's first
    row in the whole corpus, added to its sentence numbers, so sentences stay apart); the
    notes are the first shard's with the counts summed where they are counts."""
    parts, offsets = list(parts), list(offsets)
    first = parts[0]
    if len(parts) == 1:
        return first
    layers = [np.concatenate([p.layers[l] for p in parts]) for l in range(len(first.layers))]
    forms, groups, places, sentences = [], [], [], []
    labels: dict[str, list[str]] = {k: [] for k in first.labels}
    for p, off in zip(parts, offsets):
        forms += p.forms
        groups.append(np.asarray(p.groups, dtype=np.int64) + int(off))
        places += [(s + len(sentences), q) for s, q in p.places]
        sentences += p.sentences
        for k in labels:
            labels[k] += list(p.labels[k])
    sent_labels = (sum((list(p.sentence_labels) for p in parts), [])
                   if first.sentence_labels is not None else None)
    return WordCorpus(layers, forms, np.concatenate(groups), places, sentences, labels,
                      first.kind, sum(p.n_sentences for p in parts),
                      merge_notes([p.notes for p in parts]), sent_labels)


_COUNT = re.compile(r"\d+")


def merge_notes(notes: Sequence[Sequence[str]]) -> list[str]:
    """Notes of several shards as one: notes that differ only in their first number are one
    note with those numbers summed ("Skipped 2 ..." + "Skipped 1 ..." -> "Skipped 3 ...")."""
    out: dict[str, int | None] = {}
    for part in notes:
        for note in part:
            m = _COUNT.search(note)
            shape = _COUNT.sub("\x00", note, count=1) if m else note
            n = int(m.group()) if m else None
            out[shape] = n if shape not in out or n is None else out[shape] + n
    return [k.replace("\x00", str(v)) if v is not None else k for k, v in out.items()]


def treebank_words(loaded, dataset, max_sentences: int | None = None, batch_size: int = 32,
                   progress: Callable[[int, int], None] | None = None) -> WordCorpus:
    """Word vectors and UPOS of a treebank Dataset (one batched pass)."""
    # lazy: keeps this module, loaded at `python -m analysis` start, light
    from analysis.syntax.states import extract_word_states

    ws = extract_word_states(loaded, dataset, max_sentences=max_sentences,
                             batch_size=batch_size, progress=progress)
    forms, groups, places, upos = [], [], [], []
    for s, (words, tags) in enumerate(zip(ws.words, ws.upos)):
        forms += words
        upos += tags
        groups += [s] * len(words)
        places += [(s, p) for p in range(len(words))]
    return WordCorpus(ws.layers, forms, np.asarray(groups), places,
                      [list(w) for w in ws.words], {"upos": upos}, "treebank",
                      ws.n_sentences, list(ws.notes))


def _role(w: int, sets: dict) -> str:
    terms = set(sets.get("aspect", ()))
    if w in terms:
        return "aspect"
    if w in set(sets.get("aspect_sentiment", ())):
        return "opinion"
    if w in set(sets.get("opposite", ())):
        return "other aspect"
    return "other"


def absa_pairs(loaded, dataset, max_sentences: int | None = None):
    """(encodings, PairGold) of every pair whose category has terms in the review."""
    # lazy: keeps this module, loaded at `python -m analysis` start, light
    from analysis.aspects.gold import build_pairs

    encs, golds = build_pairs(loaded.tokenizer, dataset, ABSA_TASK, ABSA_ORDER,
                              max_length=loaded.max_length, max_sentences=max_sentences)
    keep = [i for i, g in enumerate(golds) if g.sets.get("aspect")]
    if not keep:
        raise DataError("No review of the data has an aspect term with a category, so there "
                        "is nothing to colour or probe by aspect role.")
    return [encs[i] for i in keep], [golds[i] for i in keep]


def word_layers(loaded, encs, words: Sequence[Sequence[int]], batch_size: int = 32,
                progress: Callable[[int, int], None] | None = None,
                real: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """Per layer (0 = embeddings), the vectors of the words ``words[i]`` (word ids, in order) of
    every encoding ``encs[i]``, each the mean of its pieces' vectors (only the positions where
    ``real[i]`` is True, when given), stacked in corpus order [n_words, d] (one batched pass)."""
    chunks: dict[int, list[np.ndarray]] = {}
    done = 0
    for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encs, batch_size,
                                   attentions=False, hidden_states=True):
        for b, i in enumerate(idx):
            h = fw.hidden(b)  # [L+1, n, d]
            wid = np.asarray(encs[i].word_ids)
            pool = wid[None, :] == np.asarray(words[i])[:, None]
            if real is not None:
                pool &= np.asarray(real[i], bool)[None, :]
            pool = pool.astype(np.float32)
            pool /= pool.sum(1, keepdims=True)
            chunks[i] = [pool @ h[l] for l in range(h.shape[0])]
        done += len(idx)
        if progress is not None:
            progress(done, len(encs))
    return [np.concatenate([chunks[i][l] for i in range(len(encs))]).astype(np.float32)
            for l in range(len(chunks[0]))]


def absa_words(loaded, dataset, max_sentences: int | None = None, batch_size: int = 32,
               progress: Callable[[int, int], None] | None = None) -> WordCorpus:
    """Review-word vectors of every (review, category present) pair with their roles."""
    encs, golds = absa_pairs(loaded, dataset, max_sentences)
    per_layer = word_layers(loaded, encs, [g.review for g in golds], batch_size, progress)
    forms, groups, places, roles, sentences = [], [], [], [], []
    for i, g in enumerate(golds):
        words = [g.words[w] for w in g.review]
        sentences.append(words + [f"(asked: {g.category})"])
        for p, w in enumerate(g.review):
            forms.append(g.words[w])
            groups.append(g.sentence)
            places.append((i, p))
            roles.append(_role(w, g.sets))
    aspect = ["aspect term" if r == "aspect" else "other" for r in roles]
    n_sent = len({g.sentence for g in golds})
    return WordCorpus(per_layer, forms, np.asarray(groups), places, sentences,
                      {"role": roles, "aspect": aspect}, "absa", n_sent)


def pairs_note(words: WordCorpus) -> list[str]:
    """ABSA data: how many (review, category) pairs the words come from."""
    if words.kind != "absa":
        return []
    return [f"{len(words.sentences)} (review, category) pairs from {words.n_sentences} "
            "reviews, in the NLI-M format (review, then the category's name)."]
