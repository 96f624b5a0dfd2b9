"""Aspect-head discovery (DESIGN.md section 5), at word level.

For a (review, category) pair in the auxiliary-sentence format of a task, Q is the aspect word
of the auxiliary sentence (e.g. ``food`` in ``what do you think of the food of it ?``). Gold
sets in the review come from data that links them:

- ``aspect``            T: words of the aspect terms of that category (category present);
- ``aspect_sentiment``  T or O: the terms and their opinion words (needs linked opinions);
- ``opposite``          X: words of the terms of other categories, in pairs whose own category
                        is present (an absent category's pairs belong to ``noop``: with them,
                        X would mostly be "the aspect that is there", e.g. every SemEval-14
                        sentence whose terms all have one category);
- ``noop``              the [SEP] word(s), when the category is absent (label none).

For each layer and head, on the word-level map W (Clark pooling: to = sum, from = mean):
``score`` = mean over Q of sum_{j in gold} W[q, j], averaged over pairs; ``accuracy`` = share of
pairs whose most-attended candidate word (mean row over Q; candidates = review words, plus the
[SEP]s for ``noop``) is in the gold set. Bootstrap 95% intervals resample pairs. Baselines:
a random head (mean over all heads), the best fixed position, the most frequent word, uniform
attention over the candidates. Causal check: mask the top-k heads of a kind and re-evaluate.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.absa import (ASPECT_WORDS, LABELS, NONE, auxiliary_sentence, default_pair_order,
                           evaluate, gold_polarities, is_binary)
from analysis.absa_data import CATEGORIES
from analysis.attention import batch_attentions, clean_text, encode, word_level
from analysis.errors import DataError

KINDS = ("aspect", "aspect_sentiment", "opposite", "noop")
KIND_TITLES = {"aspect": "Aspect heads (T)", "aspect_sentiment": "Aspect-sentiment heads (T or O)",
               "opposite": "Opposite-aspect heads (X)", "noop": "No-op heads ([SEP] when absent)"}


# ---------------------------------------------------------------------------------------------
# Pure scoring over word-level maps


def query_row(word_maps: np.ndarray, q: Sequence[int]) -> np.ndarray:
    """Mean attention row over the query words: [L, H, W, W] -> [L, H, W]."""
    return np.asarray(word_maps, dtype=np.float64)[..., list(q), :].mean(-2)


def set_mass(rows: np.ndarray, gold: Sequence[int]) -> np.ndarray:
    """Attention mass on the gold words: [..., W] -> [...]."""
    return rows[..., list(gold)].sum(-1)


def argmax_hit(rows: np.ndarray, candidates: Sequence[int], gold: Sequence[int]) -> np.ndarray:
    """1 where the most-attended candidate word is in the gold set (ties: the first), else 0."""
    cand = np.asarray(list(candidates))
    best = cand[np.argmax(rows[..., cand], axis=-1)]
    return np.isin(best, np.asarray(list(gold))).astype(np.float64)


def pair_head_scores(word_maps: np.ndarray, q: Sequence[int], candidates: Sequence[int],
                     gold: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(score [L, H], hit [L, H]) of every head for one pair."""
    rows = query_row(word_maps, q)
    return set_mass(rows, gold), argmax_hit(rows, candidates, gold)


def bootstrap_ci(values: np.ndarray, n_boot: int = 1000, seed: int = 0,
                 alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the mean over axis 0 (pairs) -> (low, high) with the
    remaining shape. Resampling uses multinomial counts (memory n_boot x n_pairs)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[0]
    if n == 0:
        nan = np.full(values.shape[1:], np.nan)
        return nan, nan
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)
    means = counts @ values.reshape(n, -1) / n
    low = np.quantile(means, alpha / 2, axis=0).reshape(values.shape[1:])
    high = np.quantile(means, 1 - alpha / 2, axis=0).reshape(values.shape[1:])
    return low, high


# ---------------------------------------------------------------------------------------------
# Gold sets for pairs


@dataclass
class PairGold:
    """One (review, category) pair at word level. Indices are word indices of the encoding."""

    sentence: int
    category: str
    label: str
    text_a: str
    text_b: str
    q: list[int]
    review: list[int]
    sep: list[int]
    sets: dict[str, list[int]] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)


def _spans_to_words(spans, word_spans: dict[int, tuple[int, int]]) -> list[int]:
    out = set()
    for s, e in spans:
        for w, (ws, we) in word_spans.items():
            if ws < e and s < we:
                out.add(w)
    return sorted(out)


def review_word_spans(tokenizer, enc, review_first: bool) -> dict[int, tuple[int, int]]:
    """Character span (in the review) of every review word of an encoding."""
    a, b = enc.text, enc.pair
    full = tokenizer(a, b, truncation=enc.truncated, max_length=enc.n_tokens,
                     return_offsets_mapping=True)
    seq = full.sequence_ids()
    want = 0 if review_first else 1
    spans: dict[int, tuple[int, int]] = {}
    for i, (s_id, (s, e)) in enumerate(zip(seq, full["offset_mapping"])):
        if s_id != want or e <= s or i >= len(enc.word_ids):
            continue
        w = enc.word_ids[i]
        old = spans.get(w)
        spans[w] = (s, e) if old is None else (min(old[0], s), max(old[1], e))
    return spans


def build_pairs(tokenizer, ds, task: str = "qa_m", pair_order: str | None = None,
                max_length: int = 128, max_sentences: int | None = None):
    """Dataset -> (encodings, PairGold list), one pair per sentence and category.

    B tasks use the auxiliary sentence of the label ``positive`` (the aspect word is the
    same in all five rows)."""
    pair_order = pair_order or default_pair_order(task)
    review_first = pair_order == "review-aux"
    encs, pairs = [], []
    for i, row in enumerate(ds):
        if max_sentences is not None and i >= max_sentences:
            break
        text = row["text"]
        clean, _ = clean_text(text)
        shift = len(text) - len(text.lstrip())
        if clean != text.strip():
            continue  # invisible characters would move the offsets
        gold = gold_polarities(row) if row["categories"] else None
        for cat in CATEGORIES:
            aux = auxiliary_sentence(task, cat, LABELS[0] if is_binary(task) else None)
            a, b = (clean, aux) if review_first else (aux, clean)
            enc = encode(tokenizer, a, b, max_length=max_length)
            seg_review = 0 if review_first else 1
            word_seg, word_special = {}, {}
            for t, w in enumerate(enc.word_ids):
                word_seg[w] = int(enc.segments[t])
                word_special[w] = bool(enc.special[t])
            aspect = ASPECT_WORDS[cat]
            q = [w for w, lab in enumerate(enc.words) if word_seg.get(w) != seg_review
                 and not word_special[w] and lab.lower() == aspect]
            review = [w for w in range(len(enc.words)) if word_seg.get(w) == seg_review
                      and not word_special[w]]
            sep = [w for w in range(len(enc.words)) if word_special[w] and w != 0]
            if not q or not review:
                continue
            spans = {w: (s + shift, e + shift) for w, (s, e) in
                     review_word_spans(tokenizer, enc, review_first).items()}
            # SemEval-14 terms carry no category: in a sentence with exactly one category
            # they belong to it (DESIGN.md section 5); otherwise they stay unassigned
            sole = row["categories"][0]["category"] if len(row["categories"]) == 1 else ""
            terms = [{**t, "category": t["category"] or sole} for t in row["terms"]]
            own = [t for t in terms if t["category"] == cat]
            other = [t for t in terms if t["category"] and t["category"] != cat]
            # without sentence-level categories (e.g. ASTE) absence is unknown: no no-op pairs
            label = gold[cat] if gold is not None else (own[0]["polarity"] if own else "unknown")
            sets = {}
            t_words = _spans_to_words([(t["start"], t["end"]) for t in own], spans)
            o_words = _spans_to_words([(o["start"], o["end"]) for t in own for o in t["opinions"]],
                                      spans)
            if label != "none" and t_words:
                sets["aspect"] = t_words
                if o_words:
                    sets["aspect_sentiment"] = sorted(set(t_words) | set(o_words))
            x_words = [w for w in _spans_to_words([(t["start"], t["end"]) for t in other], spans)
                       if w not in t_words]
            if x_words and label not in ("none", "unknown"):
                sets["opposite"] = x_words
            if label == "none":
                sets["noop"] = sep
            if not sets:
                continue
            encs.append(enc)
            pairs.append(PairGold(i, cat, label, a, b, q, review, sep, sets, list(enc.words)))
    return encs, pairs


def candidates_for(pair: PairGold, kind: str) -> list[int]:
    return pair.review + pair.sep if kind == "noop" else pair.review


# ---------------------------------------------------------------------------------------------
# Running a model


@dataclass
class HeadScores:
    """Per kind: score and hit arrays [n_pairs, L, H] plus the pair indices they belong to."""

    scores: dict[str, np.ndarray]
    hits: dict[str, np.ndarray]
    pair_index: dict[str, list[int]]
    pairs: list[PairGold]
    n_layers: int
    n_heads: int


def score_heads(loaded, encs, pairs: Sequence[PairGold], batch_size: int = 16,
                progress: Callable[[int, int], None] | None = None) -> HeadScores:
    """Run the model over the pairs and score every head for every kind."""
    if not pairs:
        raise DataError("No usable (review, aspect) pairs: the data links no aspect terms, "
                        "opinions or categories to score heads against.")
    acc = {k: [] for k in KINDS}
    hit = {k: [] for k in KINDS}
    idx = {k: [] for k in KINDS}
    done = 0
    results: dict[int, tuple] = {}
    for i, enc, attn, _ in batch_attentions(loaded, encs, batch_size=batch_size):
        wm = word_level(attn, enc.word_ids)
        p = pairs[i]
        out = {}
        for kind, gold in p.sets.items():
            out[kind] = pair_head_scores(wm, p.q, candidates_for(p, kind), gold)
        results[i] = out
        done += 1
        if progress:
            progress(done, len(pairs))
    for i in range(len(pairs)):
        for kind, (s, h) in results[i].items():
            acc[kind].append(s)
            hit[kind].append(h)
            idx[kind].append(i)
    L, H = loaded.n_layers, loaded.n_heads
    to_arr = lambda v: np.stack(v) if v else np.zeros((0, L, H))  # noqa: E731
    return HeadScores({k: to_arr(acc[k]) for k in KINDS}, {k: to_arr(hit[k]) for k in KINDS},
                      idx, list(pairs), L, H)


# ---------------------------------------------------------------------------------------------
# Baselines


def baselines(pairs: Sequence[PairGold], hs: HeadScores | None = None,
              max_offset: int = 10) -> dict:
    """Per kind: random head (mean over heads), best fixed position (offset from the start of
    the candidates, or from the end when negative), most frequent word, uniform attention."""
    freq = Counter(w.lower() for p in pairs for w in (p.words[j] for j in p.review))
    out = {}
    for kind in KINDS:
        sel = [p for p in pairs if kind in p.sets]
        res: dict = {"n_pairs": len(sel)}
        if not sel:
            out[kind] = res
            continue
        if hs is not None and len(hs.scores[kind]):
            res["random_head"] = {"score": float(hs.scores[kind].mean()),
                                  "accuracy": float(hs.hits[kind].mean())}
        best = None
        for off in list(range(max_offset)) + list(range(-1, -max_offset - 1, -1)):
            hits = []
            for p in sel:
                cand = candidates_for(p, kind)
                ok = -len(cand) <= off < len(cand)
                hits.append(float(ok and cand[off] in p.sets[kind]))
            acc = float(np.mean(hits))
            if best is None or acc > best["accuracy"]:
                best = {"offset": off, "score": acc, "accuracy": acc}
        res["positional"] = best
        fw = []
        for p in sel:
            cand = candidates_for(p, kind)
            top = max(cand, key=lambda j: (freq.get(p.words[j].lower(), 0), -j))
            fw.append(float(top in p.sets[kind]))
        res["frequent_word"] = {"score": float(np.mean(fw)), "accuracy": float(np.mean(fw))}
        uni = [len(set(p.sets[kind]) & set(candidates_for(p, kind))) / len(candidates_for(p, kind))
               for p in sel]
        res["uniform"] = {"score": float(np.mean(uni)), "accuracy": float(np.mean(uni))}
        out[kind] = res
    return out


# ---------------------------------------------------------------------------------------------
# Ranking


def rank_heads(hs: HeadScores, kind: str, n_boot: int = 1000, seed: int = 0,
               top: int | None = None) -> list[dict]:
    """Heads of one kind sorted by score (descending), with bootstrap 95% intervals for score
    and accuracy. Layer and head are 0-indexed."""
    s, h = hs.scores[kind], hs.hits[kind]
    if not len(s):
        return []
    mean_s, mean_h = s.mean(0), h.mean(0)
    lo, hi = bootstrap_ci(s, n_boot, seed)
    alo, ahi = bootstrap_ci(h, n_boot, seed + 1)
    rows = []
    for layer in range(hs.n_layers):
        for head in range(hs.n_heads):
            rows.append({"layer": layer, "head": head, "kind": kind,
                         "score": float(mean_s[layer, head]),
                         "accuracy": float(mean_h[layer, head]),
                         "ci_low": float(lo[layer, head]), "ci_high": float(hi[layer, head]),
                         "acc_ci_low": float(alo[layer, head]),
                         "acc_ci_high": float(ahi[layer, head]), "n_pairs": int(len(s))})
    rows.sort(key=lambda r: (-r["score"], -r["accuracy"], r["layer"], r["head"]))
    return rows[:top] if top else rows


@dataclass
class Discovery:
    hs: HeadScores
    ranked: dict[str, list[dict]]
    baselines: dict
    encodings: list


def discover(loaded, ds, task: str = "qa_m", pair_order: str | None = None,
             max_sentences: int | None = None, n_boot: int = 1000, seed: int = 0,
             batch_size: int = 16, progress: Callable[[int, int], None] | None = None) -> Discovery:
    """Score every head of ``loaded`` on the pairs of ``ds`` for all kinds, ranked."""
    encs, pairs = build_pairs(loaded.tokenizer, ds, task, pair_order, max_sentences=max_sentences)
    hs = score_heads(loaded, encs, pairs, batch_size=batch_size, progress=progress)
    ranked = {k: rank_heads(hs, k, n_boot, seed) for k in KINDS}
    return Discovery(hs, ranked, baselines(pairs, hs), encs)


def score_matrix(hs: HeadScores, kind: str, what: str = "score") -> np.ndarray:
    """[L, H] mean score (or accuracy) of a kind (NaN when the kind has no pairs)."""
    arr = hs.scores[kind] if what == "score" else hs.hits[kind]
    if not len(arr):
        return np.full((hs.n_layers, hs.n_heads), np.nan)
    return arr.mean(0)


def to_json(disc: Discovery, top_k: int | None = None) -> dict:
    heads = []
    for kind in KINDS:
        heads += disc.ranked[kind][:top_k] if top_k else disc.ranked[kind]
    return {"heads": heads, "baselines": disc.baselines,
            "n_pairs": {k: int(len(disc.hs.scores[k])) for k in KINDS},
            "indexing": "layer and head are 0-indexed"}


# ---------------------------------------------------------------------------------------------
# Causal check


def head_mask_for(heads: Sequence[tuple[int, int]], n_layers: int, n_heads: int) -> np.ndarray:
    mask = np.ones((n_layers, n_heads), dtype=np.float32)
    for layer, head in heads:
        mask[layer, head] = 0.0
    return mask


def causal_check(model, tokenizer, examples, task: str, ranked: Sequence[dict], k: int,
                 n_layers: int, n_heads: int, n_random: int = 3, seed: int = 0,
                 progress: Callable[[str], None] | None = None) -> dict:
    """Task metrics with no heads masked, the top-k ranked heads masked, and k random heads
    masked (mean of ``n_random`` draws), plus the changes against no masking."""
    top = [(r["layer"], r["head"]) for r in ranked[:k]]
    if not top:
        raise DataError("No ranked heads to mask.")
    if progress:
        progress("full model")
    full = evaluate(model, tokenizer, examples, task)
    if progress:
        progress(f"top-{k} masked")
    masked = evaluate(model, tokenizer, examples, task,
                      head_mask=head_mask_for(top, n_layers, n_heads))
    rng = np.random.default_rng(seed)
    rand = []
    all_heads = [(l_, h_) for l_ in range(n_layers) for h_ in range(n_heads)]
    for r in range(n_random):
        if progress:
            progress(f"random {k} masked ({r + 1}/{n_random})")
        pick = rng.choice(len(all_heads), size=len(top), replace=False)
        rand.append(evaluate(model, tokenizer, examples, task,
                             head_mask=head_mask_for([all_heads[i] for i in pick],
                                                     n_layers, n_heads)))
    keys = ("aspect_f1", "acc_4way", "acc_3way", "acc_binary")
    random_mean = {key: float(np.mean([m[key] for m in rand])) for key in keys}
    return {
        "k": len(top), "masked_heads": top, "full": {key: full[key] for key in keys},
        "top_k": {key: masked[key] for key in keys}, "random_k": random_mean,
        "delta_top_k": {key: masked[key] - full[key] for key in keys},
        "delta_random_k": {key: random_mean[key] - full[key] for key in keys},
    }


__all__ = ["KINDS", "query_row", "set_mass", "argmax_hit", "pair_head_scores", "bootstrap_ci",
           "build_pairs", "score_heads", "baselines", "rank_heads", "discover", "causal_check",
           "head_mask_for", "score_matrix", "to_json", "NONE"]
