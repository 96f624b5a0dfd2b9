"""Attention heads as dependency parsers (Clark et al. 2019, section 4; docs/METHODS.md
section 10, "Syntactic heads").

Per sentence, the token maps are pooled to words over [CLS] + words + [SEP]
(:func:`analysis.core.encoding.word_level`: to a word = sum of its pieces' columns, from a word =
mean of its pieces' rows), the diagonal is zeroed and [CLS]/[SEP] are dropped
(:func:`word_map`). For a dependent ``i`` (1-based) with head ``g != 0`` a head of the model
predicts ``argmax_j W[i, j]`` (``dep_to_head``) or ``argmax_j W[j, i]`` (``head_to_dep``)
(:func:`predictions`); its accuracy for a relation is the share of that relation's dependents
whose prediction is ``g`` (:func:`relation_hits`, :func:`relation_accuracy`). The baseline is the
best fixed offset (:func:`offset_baseline`). :func:`syntax_heads` streams a treebank through
the model once and keeps only counts: the totals, and per sentence the hits of every head and
offset for the relations it holds, from which the best head's lead over the baseline gets a
bootstrap 95% interval over sentences (:func:`gap_ci`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from analysis.core.encoding import word_level
from analysis.core.intervals import paired_ci
from analysis.core.study import Field, Schema, StudyResult
from analysis.syntax.reading import (compare_rows, example_sentences, reading,
                                     relation_rows)
from analysis.core.forward import forward
from analysis.syntax.words import encode_words

__all__ = ["ALL", "DIRECTIONS", "OFFSETS", "HeadsAccumulator", "RelationResult", "SyntaxResult",
           "best_head", "best_offset", "compare_rows", "example_sentences", "gap_ci",
           "offset_baseline",
           "offset_counts", "predictions", "reading", "relation_accuracy", "relation_hits",
           "relation_rows", "result_of", "sentence_attention", "word_map"]

DIRECTIONS = ("dep_to_head", "head_to_dep")
OFFSETS = (-1, 1, -2, 2, -3, 3, -4, 4, -5, 5)  # tie order: smaller |k| first, then negative
ALL = "all"


def word_map(attn_tokens: np.ndarray, word_ids) -> np.ndarray:
    """[..., T, T] token maps -> [..., n, n] word maps over the n treebank words: pooled over
    [CLS] + words + [SEP] (``word_ids`` from :func:`analysis.syntax.words.encode_words`),
    diagonal zeroed, [CLS] and [SEP] (first and last word) dropped."""
    W = word_level(np.asarray(attn_tokens), word_ids)
    n = W.shape[-1]
    W[..., np.arange(n), np.arange(n)] = 0.0
    return W[..., 1:-1, 1:-1]


def predictions(W: np.ndarray, direction: str) -> np.ndarray:
    """1-based predicted head of every word from word maps ``W`` [..., n, n]:
    ``dep_to_head`` = argmax_j W[i, j] (where word i looks), ``head_to_dep`` = argmax_j
    W[j, i] (who looks at word i most); ties go to the first word."""
    if direction == "dep_to_head":
        return np.argmax(W, axis=-1) + 1
    if direction == "head_to_dep":
        return np.argmax(W, axis=-2) + 1
    raise ValueError(f"Unknown direction {direction!r}: use one of {DIRECTIONS}.")


def _sentences(heads, deprels, preds=None):
    """One sentence or a list of them -> lists."""
    if len(heads) and isinstance(heads[0], (int, np.integer)):
        return [heads], [deprels], (None if preds is None else [preds])
    return list(heads), list(deprels), (None if preds is None else list(preds))


def relation_hits(preds: np.ndarray, heads, deprels) -> dict[str, tuple[np.ndarray, int]]:
    """For one sentence: ``{relation: (hits [...], n)}`` where ``preds`` [..., n] are 1-based
    predictions, hits count the relation's dependents whose prediction is their gold head and
    n counts those dependents; ``"all"`` pools every dependent whose head is not 0."""
    heads = np.asarray(heads)
    rels = np.asarray(deprels, dtype=object)
    dep = heads != 0
    correct = np.asarray(preds) == heads  # [..., n]
    out = {ALL: (correct[..., dep].sum(-1), int(dep.sum()))}
    for rel in sorted(set(rels[dep].tolist())):
        m = dep & (rels == rel)
        out[rel] = (correct[..., m].sum(-1), int(m.sum()))
    return out


def relation_accuracy(preds, heads, deprels, rel: str):
    """(accuracy [...], n) of predictions for relation ``rel`` (``"all"`` pools every
    dependent) over one sentence (``heads`` a list of ints, ``preds`` [..., n]) or a list of
    sentences; the accuracy is NaN when the relation has no dependent."""
    heads_l, rels_l, preds_l = _sentences(heads, deprels, preds)
    hits, n = 0, 0
    for p, h, r in zip(preds_l, heads_l, rels_l):
        got = relation_hits(p, h, r).get(rel)
        if got is not None:
            hits, n = hits + got[0], n + got[1]
    if n == 0:
        return np.full(np.shape(preds_l[0])[:-1], np.nan), 0
    return np.asarray(hits, dtype=float) / n, n


def offset_counts(heads, deprels) -> dict[str, Counter]:
    """For one sentence: ``{relation: Counter({k: dependents with head = i + k})}`` for
    1 <= |k| <= 5, plus ``"all"``."""
    out: dict[str, Counter] = {}
    for i, (g, rel) in enumerate(zip(heads, deprels), 1):
        if g == 0:
            continue
        k = int(g) - i
        for key in (rel, ALL):
            c = out.setdefault(key, Counter())
            if 1 <= abs(k) <= 5:
                c[k] += 1
    return out


def best_offset(counts: Counter, n: int) -> dict:
    """``{"offset", "accuracy"}``: the offset with most hits, ties to the smaller |k| then the
    negative k."""
    best_k, best_c = OFFSETS[0], -1
    for k in OFFSETS:
        if counts.get(k, 0) > best_c:
            best_k, best_c = k, counts.get(k, 0)
    return {"offset": int(best_k), "accuracy": float(best_c / n) if n else float("nan")}


def offset_baseline(heads, deprels, rel: str) -> dict:
    """The best fixed offset k (prediction i + k, 1 <= |k| <= 5) for relation ``rel`` over one
    sentence or a list of sentences: ``{"offset": k, "accuracy": share}``."""
    heads_l, rels_l, _ = _sentences(heads, deprels)
    total, n = Counter(), 0
    for h, r in zip(heads_l, rels_l):
        total.update(offset_counts(h, r).get(rel, Counter()))
        n += sum(1 for g, x in zip(h, r) if g != 0 and (rel == ALL or x == rel))
    return best_offset(total, n)


def best_head(dep_to_head: np.ndarray, head_to_dep: np.ndarray) -> dict:
    """``{"layer", "head" (0-indexed), "direction", "accuracy"}`` of the most accurate head;
    ties: ``dep_to_head`` first, then the lowest layer, then the lowest head."""
    best = None
    for direction, acc in (("dep_to_head", dep_to_head), ("head_to_dep", head_to_dep)):
        acc = np.nan_to_num(np.asarray(acc, dtype=float), nan=-1.0)
        flat = int(np.argmax(acc))
        layer, head = np.unravel_index(flat, acc.shape)
        if best is None or acc.flat[flat] > best["accuracy"]:
            best = {"layer": int(layer), "head": int(head), "direction": direction,
                    "accuracy": float(acc.flat[flat])}
    return best


def gap_ci(sentences: list[dict], rel: str, best: dict, offset: int
           ) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval (1000 resamples, seed 0) of the best head's accuracy
    minus the offset baseline's for ``rel``, the sentences holding it resampled (paired: one
    resample for both); ``sentences`` as kept by :class:`HeadsAccumulator` (per sentence
    ``{rel: (dep_to_head hits [L, H], head_to_dep hits [L, H], n, {offset: hits})}``). None
    with fewer than two such sentences."""
    rows = [s[rel] for s in sentences if rel in s]
    if len(rows) < 2:
        return None
    d = DIRECTIONS.index(best["direction"])
    words = [int(r[2]) for r in rows]
    right_head = [int(r[d][best["layer"], best["head"]]) for r in rows]
    right_base = [int(r[3].get(offset, 0)) for r in rows]
    return paired_ci(words, right_base, right_head)


@dataclass
class RelationResult:
    """One relation: n dependents, accuracy of every head in both directions ([L, H]), the
    best head and the offset baseline; ``gap_ci`` the 95% interval of best - baseline."""

    n: int
    dep_to_head: np.ndarray
    head_to_dep: np.ndarray
    best: dict
    baseline: dict
    gap_ci: tuple[float, float] | None = None

    def to_json(self) -> dict:
        out = {"n": int(self.n),
               "dep_to_head": np.asarray(self.dep_to_head, dtype=float).tolist(),
               "head_to_dep": np.asarray(self.head_to_dep, dtype=float).tolist(),
               "best": dict(self.best), "baseline": dict(self.baseline)}
        if self.gap_ci is not None:
            out["gap_ci"] = [float(x) for x in self.gap_ci]
        return out


@dataclass
class SyntaxResult(StudyResult):
    """Head accuracies per relation over a treebank (``"all"`` first, then by n); its JSON
    (the ``syntax`` command's, the page's download): :data:`SCHEMA`."""

    SCHEMA = Schema((
        Field("n_sentences", "sentences analysed"),
        Field("skipped", "sentences skipped (longer than the model's maximum)"),
        Field("relations", "relation ('all' first, then by count) -> {n: dependents, "
                           "dep_to_head / head_to_dep: layers x heads (0-indexed) accuracy, "
                           "best: {layer, head, direction, accuracy} (0-indexed), baseline: "
                           "{offset, accuracy}, gap_ci: the 95% interval of best - baseline "
                           "(absent under two sentences)}"),
    ))

    n_sentences: int
    skipped: int
    relations: dict[str, RelationResult]
    model: str = ""
    n_layers: int = 0
    n_heads: int = 0
    rows: list[int] = field(default_factory=list)  # dataset row of each analysed sentence
    ids: list[str] = field(default_factory=list)
    words: list[list[str]] = field(default_factory=list)
    heads: list[list[int]] = field(default_factory=list)
    deprels: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def json_fields(self) -> dict:
        return {"n_sentences": int(self.n_sentences), "skipped": int(self.skipped),
                "relations": {k: v.to_json() for k, v in self.relations.items()}}

    @classmethod
    def from_json(cls, data: dict) -> "SyntaxResult":
        """The accuracies back from their JSON (without the sentences, which it does not
        keep)."""
        cls.SCHEMA.check(data)
        relations = {k: RelationResult(
            v["n"], np.asarray(v["dep_to_head"], dtype=float),
            np.asarray(v["head_to_dep"], dtype=float), dict(v["best"]), dict(v["baseline"]),
            tuple(v["gap_ci"]) if v.get("gap_ci") is not None else None)
            for k, v in data["relations"].items()}
        shape = next(iter(relations.values())).dep_to_head.shape if relations else (0, 0)
        return cls(data["n_sentences"], data["skipped"], relations, n_layers=shape[0],
                   n_heads=shape[1])


class HeadsAccumulator:
    """Running hit counts per relation and direction ([L, H]) and offset counts; fed one
    batch at a time by :func:`analysis.syntax.passes.treebank_pass`."""

    def __init__(self, encoded, n_layers: int, n_heads: int):
        self.encoded = encoded
        self.shape = (n_layers, n_heads)
        self.hits = {d: {} for d in DIRECTIONS}
        self.n: Counter = Counter()
        self.offsets: dict[str, Counter] = {}
        # per sentence index: {rel: (d2h hits [L, H], h2d hits [L, H], n, {offset: hits})}
        self.sentence_at: dict[int, dict] = {}

    @property
    def sentences(self) -> list[dict]:
        """The per-sentence records in the treebank's order (batches may run in another)."""
        return [self.sentence_at[k] for k in sorted(self.sentence_at)]

    def add(self, maps: np.ndarray, word_ids, heads, deprels, index: int | None = None) -> None:
        """One sentence: ``maps`` [L, H, T, T] token maps; ``index`` its place in the
        treebank (default: after the sentences added so far)."""
        W = word_map(maps, word_ids)
        per: dict[str, list] = {}
        for d in DIRECTIONS:
            for rel, (hits, n) in relation_hits(predictions(W, d), heads, deprels).items():
                store = self.hits[d]
                store[rel] = store.get(rel, 0) + hits
                per.setdefault(rel, []).append(np.asarray(hits, dtype=np.uint16))
                if d == DIRECTIONS[0]:
                    self.n[rel] += n
                    per[rel].append(n)
        offs = offset_counts(heads, deprels)
        for rel, c in offs.items():
            self.offsets.setdefault(rel, Counter()).update(c)
        self.sentence_at[len(self.sentence_at) if index is None else int(index)] = {
            rel: (v[0], v[2], v[1], dict(offs.get(rel, {}))) for rel, v in per.items()}

    def __call__(self, idx, fw) -> None:
        enc = self.encoded
        for b, s in enumerate(idx):
            self.add(fw.maps(b), enc.encodings[s].word_ids, enc.heads[s], enc.deprels[s],
                     index=s)

    def relations(self) -> dict[str, RelationResult]:
        """Every relation with a dependent, and ``"all"`` always (first): with no dependent at
        all (a treebank of one-word sentences) its n is 0 and its accuracies are NaN."""
        order = sorted((r for r in self.n if self.n[r] > 0),
                       key=lambda r: (r != ALL, -self.n[r], r))
        out = {}
        if ALL not in order:
            nan = np.full(self.shape, np.nan)
            out[ALL] = RelationResult(0, nan, nan.copy(), {
                "layer": 0, "head": 0, "direction": DIRECTIONS[0], "accuracy": float("nan")},
                best_offset(Counter(), 0))
        for rel in order:
            n = self.n[rel]
            d2h = np.asarray(self.hits["dep_to_head"][rel], dtype=float) / n
            h2d = np.asarray(self.hits["head_to_dep"][rel], dtype=float) / n
            best, base = best_head(d2h, h2d), best_offset(self.offsets.get(rel, Counter()), n)
            out[rel] = RelationResult(n, d2h, h2d, best, base,
                                      gap_ci(self.sentences, rel, best, base["offset"]))
        return out


def result_of(acc: HeadsAccumulator, loaded, seconds: float = 0.0) -> SyntaxResult:
    """The :class:`SyntaxResult` of a filled accumulator."""
    enc = acc.encoded
    return SyntaxResult(
        n_sentences=len(enc), skipped=enc.skipped, relations=acc.relations(),
        model=loaded.spec, n_layers=loaded.n_layers, n_heads=loaded.n_heads,
        rows=list(enc.rows), ids=list(enc.ids), words=list(enc.words), heads=list(enc.heads),
        deprels=list(enc.deprels), notes=list(enc.notes), seconds=seconds)


def sentence_attention(loaded, words):
    """(Encoding, token maps [L, H, T, T], word maps [L, H, n, n]) of one treebank sentence,
    for drawing an example (the word maps are :func:`word_map`'s)."""
    enc = encode_words(loaded.tokenizer, words, loaded.max_length)
    maps = forward(loaded.model, loaded.tokenizer, [enc]).maps(0)
    return enc, maps, word_map(maps, enc.word_ids)
