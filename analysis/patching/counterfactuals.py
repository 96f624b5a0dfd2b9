"""Counterfactuals for ABSA pairs (docs/METHODS.md, "Causal patching"), suggested and
editable: the same review asked about another aspect category, or its opinion word replaced
by its opposite (a small bundled list of opposites first, else an opinion word annotated in the
data with the opposite polarity); either kept only when it has as many tokens as the input,
since patching swaps activations position by position."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from analysis.absa.data import CATEGORIES
from analysis.absa.tasks import LABELS, auxiliary_sentence, gold_polarities

KINDS = ("aspect", "opinion")
KIND_NAMES = {"aspect": "another aspect", "opinion": "the opposite opinion word",
              "typed": "typed text"}

# A small bundled list of opposites for restaurant-review opinion words (both ways).
_PAIRS = [
    ("good", "bad"), ("great", "awful"), ("delicious", "disgusting"), ("tasty", "bland"),
    ("friendly", "rude"), ("fast", "slow"), ("quick", "slow"), ("cheap", "expensive"),
    ("nice", "nasty"), ("excellent", "terrible"), ("fresh", "stale"), ("hot", "cold"),
    ("clean", "dirty"), ("quiet", "noisy"), ("cozy", "cramped"), ("helpful", "unhelpful"),
    ("attentive", "inattentive"), ("polite", "rude"), ("best", "worst"), ("love", "hate"),
    ("loved", "hated"), ("amazing", "horrible"), ("wonderful", "dreadful"),
    ("pleasant", "unpleasant"), ("reasonable", "unreasonable"), ("fair", "unfair"),
    ("generous", "stingy"), ("warm", "cold"), ("perfect", "poor"), ("fantastic", "terrible"),
    ("happy", "unhappy"), ("recommend", "avoid"), ("enjoyed", "disliked"),
    ("overpriced", "underpriced"), ("small", "large"), ("professional", "unprofessional"),
    ("comfortable", "uncomfortable"), ("welcoming", "unwelcoming"), ("efficient", "sloppy"),
]
OPPOSITES: dict[str, str] = {}
for _a, _b in _PAIRS:
    OPPOSITES.setdefault(_a, _b)
    OPPOSITES.setdefault(_b, _a)
FLIP = {"positive": "negative", "negative": "positive"}


@dataclass(frozen=True)
class Suggestion:
    """A counterfactual (text, pair) for an input pair, with what changed in plain words."""

    kind: str
    text: str
    pair: str | None
    note: str


def opinion_pool(sentences) -> dict[str, Counter]:
    """Polarity -> how often each annotated opinion word (lower case) occurs in ``sentences``."""
    pool: dict[str, Counter] = {p: Counter() for p in LABELS}
    for row in sentences:
        for term in row.get("terms") or []:
            for op in term.get("opinions") or []:
                if op.get("word") and term.get("polarity") in pool:
                    pool[term["polarity"]][op["word"].lower()] += 1
    return pool


def _n_tokens(tokenizer, text, pair, max_length) -> int:
    return len(tokenizer(text, pair, truncation=True, max_length=max_length)["input_ids"])


def _swap_review(ex, review: str) -> tuple[str, str]:
    return (ex.text_a, review) if ex.aux_first else (review, ex.text_b)


def review_of(ex) -> str:
    return ex.text_b if ex.aux_first else ex.text_a


def aspect_suggestions(tokenizer, row, ex, task: str, max_length: int = 512) -> list[Suggestion]:
    """The review asked about each other category with as many tokens, those whose gold label
    differs from the asked one's first (CATEGORIES order otherwise)."""
    gold = gold_polarities(row)
    n = _n_tokens(tokenizer, ex.text_a, ex.text_b, max_length)
    label = LABELS[ex.row] if ex.row >= 0 else None
    found = []
    for cat in CATEGORIES:
        if cat == ex.category:
            continue
        aux = auxiliary_sentence(task, cat, label)
        a, b = (aux, ex.text_b) if ex.aux_first else (ex.text_a, aux)
        if _n_tokens(tokenizer, a, b, max_length) != n:
            continue
        note = f"asks about {cat} instead of {ex.category} (gold: {gold[cat]} instead of " \
               f"{gold[ex.category]})"
        found.append((gold[cat] == gold[ex.category], Suggestion("aspect", a, b, note)))
    return [s for _, s in sorted(found, key=lambda x: x[0])]


def _opinions(row, category: str) -> list[tuple[dict, str]]:
    """(opinion, its term's polarity) of the asked category's terms first, then the rest."""
    terms = row.get("terms") or []
    mine = [t for t in terms if t.get("category") == category]
    rest = [t for t in terms if t.get("category") != category]
    return [(op, t.get("polarity")) for t in mine + rest for op in t.get("opinions") or []
            if op.get("word")]


def _cased(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def opinion_suggestions(tokenizer, row, ex, pool: dict[str, Counter] | None = None,
                        max_length: int = 512, limit: int = 3) -> list[Suggestion]:
    """The review with one annotated opinion word replaced by an opposite (the bundled list,
    then opinion words annotated with the opposite polarity in ``pool``, most frequent first),
    keeping the token count."""
    review = review_of(ex)
    if review != row["text"]:
        return []
    n = _n_tokens(tokenizer, ex.text_a, ex.text_b, max_length)
    out, seen = [], set()
    for op, polarity in _opinions(row, ex.category):
        word = review[op["start"]:op["end"]]
        if not word or word.lower() != op["word"].lower():
            continue
        # (start, end, replacement): the phrase's listed opposite, then a listed opposite of
        # one of its words ("painfully slow" -> "painfully fast"), then annotated words
        spans = [(op["start"], op["end"], OPPOSITES[word.lower()])] \
            if word.lower() in OPPOSITES else []
        at = op["start"]
        for part in word.split():
            start = review.index(part, at)
            at = start + len(part)
            if " " in word and part.lower() in OPPOSITES:
                spans.append((start, at, OPPOSITES[part.lower()]))
        if pool is not None and polarity in FLIP:
            spans += [(op["start"], op["end"], w) for w, _ in pool[FLIP[polarity]].most_common()
                      if " " not in w]
        for start, end, cand in spans:
            old = review[start:end]
            new = review[:start] + _cased(cand, old) + review[end:]
            a, b = _swap_review(ex, new)
            if (old, cand) in seen or _n_tokens(tokenizer, a, b, max_length) != n:
                continue
            seen.add((old, cand))
            out.append(Suggestion("opinion", a, b, f"'{old}' replaced by '{cand}'"))
            break
        if len(out) >= limit:
            break
    return out


def suggest(tokenizer, row, ex, task: str, pool=None, max_length: int = 512,
            kinds=KINDS) -> dict[str, list[Suggestion]]:
    """Kind -> suggestions for the pair ``ex`` of sentence ``row``."""
    out = {}
    if "aspect" in kinds:
        out["aspect"] = aspect_suggestions(tokenizer, row, ex, task, max_length)
    if "opinion" in kinds:
        out["opinion"] = opinion_suggestions(tokenizer, row, ex, pool, max_length)
    return out
