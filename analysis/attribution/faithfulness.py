"""Which explanation to trust: faithfulness of each method's ranking of the input tokens over a
corpus, for a sequence classifier (docs/METHODS.md section 11, DeYoung et al. 2020).

Per example with predicted class y and p = p(y | x), from a method's scores of the m
non-special tokens (specials are never removed), with top(k) its ceil(k m / 100) highest:

- comprehensiveness(k) = p - p(y | x without top(k));  sufficiency(k) = p - p(y | top(k) only);
  AOPC = their mean over k in ``ks`` (default 1, 5, 10, 20, 50 %);
- leave-one-out agreement: Spearman between the method's word scores (sum over a word's
  pieces) and p - p(y | x without that word), over the example's words.

Removal drops the tokens from the input (``removal="drop"``) or puts the mask token in their
place (``"mask"``). A random ranking (5 seeds) is the baseline; every mean has a bootstrap 95%
interval over examples. All perturbed inputs of an example go through the model in batches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from analysis.attribution.gradients import has_task_head, no_head_message
from analysis.attribution.run import (
    GRADIENT, METHODS, attribute, check_methods, load_for_attribution,
)
from analysis.core.errors import DataError, InputError
from analysis.core.forward import forward_batches
from analysis.attribution.reading import faithfulness_reading
from analysis.core.study import Field, Schema, StudyResult

KS = (1, 5, 10, 20, 50)
REMOVALS = ("drop", "mask")
SEEDS = 5
BOOTSTRAP = 1000
RANDOM = "random"


def check_ks(ks) -> tuple[int, ...]:
    """Percentages of tokens to remove: whole numbers from 1 to 100 (InputError otherwise)."""
    out = []
    for k in ks:
        try:
            v = float(k)
        except (TypeError, ValueError):
            raise InputError(f"k must be a percentage from 1 to 100, not {k!r}.") from None
        if not (math.isfinite(v) and v == int(v) and 1 <= v <= 100):
            raise InputError(f"k must be a whole percentage from 1 to 100, not {k!r}.")
        out.append(int(v))
    if not out:
        raise InputError("Give at least one k (a percentage from 1 to 100).")
    return tuple(sorted(set(out)))


def top_count(m: int, k: int) -> int:
    """How many of m tokens the top k% holds: ceil(k m / 100), at least 1."""
    return max(1, math.ceil(k * m / 100))


def perturbed(enc, remove, removal: str, mask_id: int | None):
    """``enc`` with the token positions ``remove`` dropped (or replaced by the mask token)."""
    remove = set(int(i) for i in remove)
    if removal == "mask":
        ids = [mask_id if i in remove else t for i, t in enumerate(enc.input_ids)]
        return replace(enc, input_ids=ids)
    keep = [i for i in range(enc.n_tokens) if i not in remove]
    tt = [enc.token_type_ids[i] for i in keep] if enc.token_type_ids is not None else None
    return replace(enc, input_ids=[enc.input_ids[i] for i in keep], token_type_ids=tt,
                   tokens=[enc.tokens[i] for i in keep], special=enc.special[keep],
                   segments=enc.segments[keep], word_ids=[enc.word_ids[i] for i in keep])


def _probabilities(loaded, encodings, target: int, batch_size: int = 64) -> np.ndarray:
    # lazy: imported when used: torch (heavy)
    import torch

    out = np.zeros(len(encodings))
    for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encodings, batch_size,
                                   attentions=False):
        p = torch.softmax(fw.output.logits.float(), -1)[:, target]
        out[idx] = p.numpy()
    return out


def _spearman(a, b) -> float:
    # lazy: imported when used: scipy (heavy)
    from scipy.stats import spearmanr

    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def example_scores(loaded, enc, scores: dict[str, np.ndarray], target: int, ks=KS,
                   removal: str = "drop") -> dict[str, dict]:
    """{ranking: {"comp": [len(ks)], "suff": [len(ks)], "loo": rho}} for one encoding and the
    token scores of each ranking (every token, specials included; only non-special ones are
    ranked), plus ``"_p"``: p(target | x)."""
    mask_id = getattr(loaded.tokenizer, "mask_token_id", None)
    if removal == "mask" and mask_id is None:
        raise InputError("This tokenizer has no mask token; use removal by dropping tokens.")
    content = np.flatnonzero(~np.asarray(enc.special, dtype=bool))
    m = len(content)
    words = sorted({enc.word_ids[i] for i in content})
    variants, plan = [enc], {}
    for name, s in scores.items():
        order = content[np.argsort(-np.asarray(s)[content], kind="stable")]
        for k in ks:
            top = order[:top_count(m, k)]
            plan[(name, "comp", k)] = len(variants)
            variants.append(perturbed(enc, top, removal, mask_id))
            plan[(name, "suff", k)] = len(variants)
            variants.append(perturbed(enc, np.setdiff1d(content, top), removal, mask_id))
    for w in words:
        plan[("loo", w)] = len(variants)
        variants.append(perturbed(enc, [i for i in content if enc.word_ids[i] == w], removal,
                                  mask_id))
    p = _probabilities(loaded, variants, target)
    drops = np.array([p[0] - p[plan[("loo", w)]] for w in words])
    out = {"_p": {"p": float(p[0])}}
    for name, s in scores.items():
        s = np.asarray(s, dtype=np.float64)
        word_scores = np.array([s[[i for i in content if enc.word_ids[i] == w]].sum()
                                for w in words])
        out[name] = {
            "comp": np.array([p[0] - p[plan[(name, "comp", k)]] for k in ks]),
            "suff": np.array([p[0] - p[plan[(name, "suff", k)]] for k in ks]),
            "loo": _spearman(word_scores, drops)}
    return out


def bootstrap_interval(values, n_boot: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean over examples (NaNs left out)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(n_boot, len(v)))].mean(1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def _summary(per_example: list[float], curve=None) -> dict:
    v = np.asarray(per_example, dtype=np.float64)
    lo, hi = bootstrap_interval(v)
    out = {"mean": float(np.nanmean(v)) if np.isfinite(v).any() else float("nan"),
           "low": lo, "high": hi, "n": int(np.isfinite(v).sum())}
    if curve is not None:
        out["curve"] = [float(c) for c in curve]
    return out


@dataclass
class Faithfulness(StudyResult):
    """Which explanation to trust over a corpus; its JSON (the command's ``--faithfulness``,
    the page's download): :data:`SCHEMA` (non-finite numbers as null)."""

    SCHEMA = Schema((
        Field("model", "the classifier's spec"),
        Field("n_examples", "examples measured (empty or too long ones skipped)"),
        Field("ks", "percentages of the tokens removed"),
        Field("removal", "'drop' (the tokens left out) or 'mask' (replaced by the mask token)"),
        Field("methods", "method -> {comprehensiveness, sufficiency, loo_spearman}: each "
                         "{mean, low, high (bootstrap 95% interval), n, curve (per k; not for "
                         "loo_spearman)}; the probability falls are in [0, 1]"),
        Field("random", "the same for a random ranking, with spread (standard deviation over "
                        "seeds) and seeds"),
        Field("reading", "the plain reading"),
        Field("notes", "what was skipped or capped"),
    ))

    methods: dict[str, dict]  # name -> {"comprehensiveness", "sufficiency", "loo_spearman"}
    random: dict  # the same, plus "spread" (standard deviation over seeds) and "seeds"
    ks: tuple[int, ...]
    removal: str
    n_examples: int
    model: str
    notes: list[str] = field(default_factory=list)

    def json_fields(self) -> dict:
        return {"model": self.model, "n_examples": self.n_examples, "ks": list(self.ks),
                "removal": self.removal, "methods": self.methods, "random": self.random,
                "reading": faithfulness_reading(self), "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: dict) -> "Faithfulness":
        """The numbers back from their JSON (null: NaN; the reading is made again)."""
        cls.SCHEMA.check(data)

        def back(v):
            if isinstance(v, dict):
                return {k: back(x) for k, x in v.items()}
            if isinstance(v, list):
                return [back(x) for x in v]
            return float("nan") if v is None else v

        return cls(back(data["methods"]), back(data["random"]), tuple(data["ks"]),
                   data["removal"], data["n_examples"], data["model"], list(data["notes"]))


def check_settings(loaded, methods, ks, removal) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """(methods, ks) checked for the classifier ``loaded`` (InputError, one line)."""
    if not has_task_head(loaded.model):
        raise InputError(no_head_message(loaded.name))
    methods = check_methods(methods, loaded)
    ks = check_ks(ks)
    if removal not in REMOVALS:
        raise InputError(f"Unknown removal {removal!r}; choose {' or '.join(REMOVALS)}.")
    return methods, ks


@dataclass
class FaithPartial:
    """Per-example rows of some examples (see :class:`FaithfulnessJob`): the corpus row of
    every example measured, each method's and each random seed's comp [ks] / suff [ks] / loo,
    and how many examples were skipped."""

    rows: list[int]
    per: dict  # method -> {"comp": [...], "suff": [...], "loo": [...]} (one entry per row)
    rand: dict  # seed -> the same
    skipped: int
    model: str


def measure_examples(loaded, texts, pairs, rows, methods, ks, removal: str, seeds: int,
                     steps: int, max_tokens: int, progress=None) -> FaithPartial:
    """Every example's faithfulness rows (the examples ``texts`` / ``pairs`` being rows
    ``rows`` of the corpus; the random ranking of seed ``s`` for row ``i`` is drawn from
    ``default_rng([s, i])``, so it does not depend on which process measures the row)."""
    rows = list(rows)
    per = {m: {"comp": [], "suff": [], "loo": []} for m in methods}
    rand = {s: {"comp": [], "suff": [], "loo": []} for s in range(seeds)}
    done_rows, skipped = [], 0
    for j, (i, text, pair) in enumerate(zip(rows, texts, pairs)):
        pair = pair if pair is not None and str(pair).strip() else None
        try:
            res = attribute(loaded, text, pair, methods, steps=steps, max_tokens=max_tokens)
        except InputError:
            skipped += 1
            continue
        probs = list(res.prediction["probabilities"].values())
        target = int(np.argmax(probs))
        scores = {m: res.methods[m].input for m in methods}
        for s in range(seeds):
            scores[f"{RANDOM}{s}"] = np.random.default_rng([s, i]).random(res.n_tokens)
        ex = example_scores(loaded, res.encoding, scores, target, ks, removal)
        for m in methods:
            for key in ("comp", "suff", "loo"):
                per[m][key].append(ex[m][key])
        for s in range(seeds):
            for key in ("comp", "suff", "loo"):
                rand[s][key].append(ex[f"{RANDOM}{s}"][key])
        done_rows.append(i)
        if progress is not None:
            progress(j + 1, len(rows))
    return FaithPartial(done_rows, per, rand, skipped, loaded.name)


def merge_examples(partials, ks, removal: str, seeds: int, max_tokens: int) -> Faithfulness:
    """The partials' rows put back in corpus order, then the means, curves, random baseline
    and bootstrap intervals over all of them."""
    parts = list(partials)
    order = sorted((r, k, j) for k, p in enumerate(parts) for j, r in enumerate(p.rows))
    if not order:
        raise DataError("None of the examples could be explained (all empty or too long).")
    methods = tuple(parts[0].per)

    def gather(d_of):
        return {key: [d_of(parts[k])[key][j] for _, k, j in order]
                for key in ("comp", "suff", "loo")}

    per = {m: gather(lambda p, m=m: p.per[m]) for m in methods}
    rand = {s: gather(lambda p, s=s: p.rand[s]) for s in range(seeds)}
    out = {m: _aggregate(per[m]) for m in methods}
    seeds_agg = [_aggregate(rand[s]) for s in range(seeds)]
    mean_of_seeds = {key: np.mean([np.asarray(rand[s][key], dtype=np.float64)
                                   for s in range(seeds)], axis=0)
                     for key in ("comp", "suff", "loo")}
    random = _aggregate(mean_of_seeds)
    random["spread"] = {name: float(np.std([a[name]["mean"] for a in seeds_agg]))
                        for name in ("comprehensiveness", "sufficiency", "loo_spearman")}
    random["seeds"] = seeds
    skipped = sum(p.skipped for p in parts)
    notes = [f"{skipped} example(s) skipped (empty or longer than {max_tokens} tokens)."] \
        if skipped else []
    return Faithfulness(out, random, tuple(ks), removal, len(order), parts[0].model, notes)


def faithfulness(loaded, texts, pairs=None, methods=None, ks=KS, removal: str = "drop",
                 seeds: int = SEEDS, steps: int = 50, max_tokens: int = 512,
                 progress: Callable[[int, int], None] | None = None) -> Faithfulness:
    """Faithfulness of every asked method (default: all) over the examples ``texts`` (and
    ``pairs``), for the classifier ``loaded`` (see the module docstring). This is
    :class:`FaithfulnessJob` on all the examples as one shard."""
    methods, ks = check_settings(loaded, methods, ks, removal)
    pairs = list(pairs) if pairs is not None else [None] * len(texts)
    part = measure_examples(loaded, texts, pairs, range(len(texts)), methods, ks, removal,
                            seeds, steps, max_tokens, progress)
    return merge_examples([part], ks, removal, seeds, max_tokens)


def examples_dataset(texts, pairs=None):
    """The examples as the Dataset a :class:`FaithfulnessJob` maps (``text``, ``text_pair``
    when any example has a pair)."""
    # lazy: imported when used: datasets (heavy)
    import datasets

    cols = {"text": list(texts)}
    if pairs is not None and any(p is not None for p in pairs):
        cols["text_pair"] = [None if p is None else str(p) for p in pairs]
    return datasets.Dataset.from_dict(cols)


@dataclass
class FaithfulnessJob:
    """:func:`faithfulness` as map/merge (:mod:`analysis.core.execution.corpus`): the partial is the
    shard's per-example rows (the bootstrap and the Spearman need every example), the merge the same
    aggregation over all rows in corpus order."""

    spec: str
    methods: tuple | None = None  # None: every method the model allows
    ks: tuple = KS
    removal: str = "drop"
    seeds: int = SEEDS
    steps: int = 50
    max_tokens: int = 512

    def load(self):
        return load_for_attribution(self.spec)

    def map(self, loaded, shard, rows, progress=None) -> FaithPartial:
        methods, ks = check_settings(loaded, self.methods, self.ks, self.removal)
        n = len(shard) if shard is not None else 0
        texts = list(shard["text"]) if n else []
        pairs = list(shard["text_pair"]) if n and "text_pair" in shard.column_names \
            else [None] * n
        return measure_examples(loaded, texts, pairs, rows, methods, ks, self.removal,
                                self.seeds, self.steps, self.max_tokens, progress)

    def merge(self, partials) -> Faithfulness:
        return merge_examples(partials, check_ks(self.ks), self.removal, self.seeds,
                              self.max_tokens)


def _aggregate(d) -> dict:
    comp = np.asarray(d["comp"], dtype=np.float64)  # [examples, ks]
    suff = np.asarray(d["suff"], dtype=np.float64)
    return {"comprehensiveness": _summary(comp.mean(1), comp.mean(0)),
            "sufficiency": _summary(suff.mean(1), suff.mean(0)),
            "loo_spearman": _summary(d["loo"])}


__all__ = ["KS", "REMOVALS", "SEEDS", "Faithfulness", "FaithfulnessJob", "faithfulness",
           "check_ks", "examples_dataset",
           "example_scores", "bootstrap_interval", "top_count", "perturbed", "METHODS",
           "GRADIENT"]
