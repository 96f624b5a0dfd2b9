"""Aspect-head discovery at word level (docs/METHODS.md section 8).

For each layer and head, on the word-level map W of a pair (Clark pooling: to = sum, from =
mean) with ``r[j] = mean_{q in Q} W[q, j]`` (Q: the aspect word of the auxiliary sentence):
``score = sum_{j in gold} r[j]``, averaged over the pairs of a kind (:mod:`.gold`);
``accuracy`` = share of pairs whose most-attended candidate word is gold. Bootstrap 95%
intervals resample pairs; heads are ranked by score. Baselines: :mod:`.baselines`; the
masking check: :mod:`.causal`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from analysis.aspects.baselines import baselines
from analysis.aspects.gold import KINDS, PairGold, build_pairs, candidates_for
from analysis.core.encoding import word_level
from analysis.core.errors import DataError
from analysis.core.forward import forward, forward_batches
from analysis.core.maps import AttentionResult, level_view

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
    results: dict[int, dict] = {}
    for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encs, batch_size):
        for b, i in enumerate(idx):
            wm = word_level(fw.maps(b), encs[i].word_ids)
            p = pairs[i]
            results[i] = {kind: pair_head_scores(wm, p.q, candidates_for(p, kind), gold)
                          for kind, gold in p.sets.items()}
            if progress:
                progress(len(results), len(pairs))
    acc = {k: [] for k in KINDS}
    hit = {k: [] for k in KINDS}
    idx = {k: [] for k in KINDS}
    for i in range(len(pairs)):
        for kind, (s, h) in results[i].items():
            acc[kind].append(s)
            hit[kind].append(h)
            idx[kind].append(i)
    L, H = loaded.n_layers, loaded.n_heads
    to_arr = lambda v: np.stack(v) if v else np.zeros((0, L, H))  # noqa: E731
    return HeadScores({k: to_arr(acc[k]) for k in KINDS}, {k: to_arr(hit[k]) for k in KINDS},
                      idx, list(pairs), L, H)


def pair_word_view(loaded, enc):
    """(word labels, word-level maps [L, H, W, W], segments, special) of one pair's encoding
    on one model: what the page draws for an example."""
    maps = forward(loaded.model, loaded.tokenizer, [enc]).maps(0)
    return level_view(AttentionResult(enc, maps), "word")


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


PAGE_SENTENCES = 60  # the Aspect heads page's default: the sentences its heads are ranked on


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
    return Discovery(hs, ranked, baselines(pairs, hs.scores, hs.hits), encs)


def same_layout(a, b) -> bool:
    """Whether two models have the same layers x heads and tokenizer vocabulary, so that their
    heads can be compared on the same pairs."""
    return ((a.n_layers, a.n_heads) == (b.n_layers, b.n_heads)
            and a.tokenizer.get_vocab() == b.tokenizer.get_vocab())


def discover_models(models: Sequence[tuple[str, object]], ds, task: str,
                    pair_order: str | None = None, max_sentences: int | None = None,
                    progress: Callable[[int, str, int, int], None] | None = None) -> dict:
    """:func:`discover` for each (name, model) on the same data -> {name: Discovery};
    ``progress(model index, name, pairs done, pairs)``."""
    out = {}
    for n, (name, lm) in enumerate(models):
        def prog(done, total, n=n, name=name):
            progress(n, name, done, total)

        out[name] = discover(lm, ds, task, pair_order, max_sentences=max_sentences,
                             progress=prog if progress else None)
    return out


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
# The verdict in words

KIND_WORDS = {"aspect": "aspect terms", "aspect_sentiment": "aspect terms or their opinion words",
              "opposite": "the other aspect's terms", "noop": "[SEP] when the aspect is absent"}
# the kinds' names on the page (its tabs): a list of kinds names each by it, its words in
# parentheses ("aspect terms, aspect terms or their opinion words and ..." read as one list of
# words: issue 49)
KIND_NAMES = {"aspect": "Aspect", "aspect_sentiment": "Aspect-sentiment",
              "opposite": "Opposite-aspect", "noop": "No-op"}
BASELINE_WORDS = {"random_head": "random-head", "positional": "fixed-position",
                  "frequent_word": "most-frequent-word", "uniform": "uniform"}


# a score is a share of attention (or of pairs): nothing can score above 1, so a baseline at 1
# cannot be beaten (the fixed position for [SEP] when the aspect is absent: the [SEP] words are
# always the last candidates, and offset -1 hits in every pair by construction)
CEILING = 1.0


def unbeatable(base: dict) -> list[str]:
    """The baselines of one kind that score the ceiling (1), so that no head can beat them:
    they are left out of "beats every baseline" (docs/METHODS.md section 8)."""
    return [k for k, v in base.items() if k in BASELINE_WORDS and isinstance(v, dict)
            and "score" in v and float(v["score"]) >= CEILING - 1e-9]


def kind_verdict(ranked: Sequence[dict], base: dict) -> dict | None:
    """Whether a head of one kind beats every baseline: its score's 95% interval lies above
    the highest baseline score, baselines at the ceiling (:func:`unbeatable`) left out.
    -> {"beats", "heads" (those that do, ranked), "best" (the top-ranked head), "baseline"
    (the strongest one's name), "baseline_score", "left_out" (the unbeatable baselines' names)};
    None when the kind has no pairs or no baseline can be beaten."""
    out = unbeatable(base)
    scores = {k: float(v["score"]) for k, v in base.items()
              if k in BASELINE_WORDS and isinstance(v, dict) and "score" in v and k not in out}
    if not ranked or not scores:
        return None
    name = max(scores, key=lambda k: (scores[k], k))
    above = [r for r in ranked if all(r["ci_low"] > s for s in scores.values())]
    return {"beats": bool(above), "heads": above, "best": ranked[0], "baseline": name,
            "baseline_score": scores[name], "left_out": out}


def left_out_words(v: dict) -> str:
    """" (the fixed-position baseline is left out: ...)" when a baseline of the kind scores the
    ceiling, else ""."""
    if not v.get("left_out"):
        return ""
    names = _join([f"the {BASELINE_WORDS[k]}" for k in v["left_out"]])
    many = len(v["left_out"]) > 1
    return (f" ({names} baseline{'s are' if many else ' is'} left out: "
            f"{'they score' if many else 'it scores'} {CEILING:.3f}, the most any head can "
            "score, so no head could beat it)")


def verdict(ranked: dict[str, list[dict]], base: dict) -> list[str]:
    """The heads section's verdict in words: a headline naming the kinds with a head whose
    95% interval lies above every baseline and those without, then one sentence per kind
    (layers and heads 1-indexed, as on the page). Kinds without pairs are named as such."""
    per = {k: kind_verdict(ranked.get(k) or [], base.get(k) or {}) for k in KINDS}
    yes = _kinds([k for k, v in per.items() if v and v["beats"]])
    no = _kinds([k for k, v in per.items() if v and not v["beats"]])
    if yes and no:
        head = f"A head beats every baseline for {yes}; no head does for {no}."
    elif yes:
        head = f"For every kind with data ({yes}), a head beats every baseline."
    elif no:
        head = f"No head beats every baseline, for any kind ({no})."
    else:
        head = "The data has no pairs of any kind to score heads on."
    out = [head]
    for kind, v in per.items():
        if v is None:
            words = KIND_WORDS[kind]
            out.append(f"{words[0].upper()}{words[1:]}: no pairs of this kind in the data.")
            continue
        b, best, note = BASELINE_WORDS[v["baseline"]], v["best"], left_out_words(v)
        if v["beats"]:
            top = v["heads"][0]
            n = len(v["heads"])
            out.append(f"Head {top['layer'] + 1}-{top['head'] + 1} beats every baseline for "
                       f"{KIND_WORDS[kind]}: score {top['score']:.3f} (95% interval "
                       f"{top['ci_low']:.3f}–{top['ci_high']:.3f}) against the {b} baseline's "
                       f"{v['baseline_score']:.3f}; {n} head{'s' if n != 1 else ''} in all{note}.")
        elif best["score"] > v["baseline_score"]:
            out.append(f"No head beats the {b} baseline for {KIND_WORDS[kind]} with confidence "
                       f"(best {best['score']:.3f}, 95% interval {best['ci_low']:.3f}–"
                       f"{best['ci_high']:.3f}, vs {v['baseline_score']:.3f}){note}.")
        else:
            out.append(f"No head beats the {b} baseline for {KIND_WORDS[kind]} (best "
                       f"{best['score']:.3f} vs {v['baseline_score']:.3f}){note}.")
    return out


def _kinds(kinds: Sequence[str]) -> str:
    """"the Aspect kind (aspect terms) and the No-op kind ([SEP] when the aspect is absent)"
    ("" for none)."""
    return _join([f"the {KIND_NAMES[k]} kind ({KIND_WORDS[k]})" for k in kinds]) \
        if kinds else ""


def _join(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
