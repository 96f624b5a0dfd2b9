"""Gold sets of aspect-head discovery: every (review, category) pair in a task's
auxiliary-sentence format, at word level, with the review words each kind of head should
attend to from the aspect word Q (docs/METHODS.md section 8):

- ``aspect``            T: words of the aspect terms of that category (category present);
- ``aspect_sentiment``  T or O: the terms and their opinion words (needs linked opinions);
- ``opposite``          X: words of the terms of other categories, in pairs whose own category
                        is present (an absent category's pairs belong to ``noop``: with them,
                        X would mostly be "the aspect that is there", e.g. every SemEval-14
                        sentence whose terms all have one category);
- ``noop``              the [SEP] word(s), when the category is absent (label none).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analysis.absa.data import CATEGORIES, sole_category_terms
from analysis.absa.tasks import (ASPECT_WORDS, LABELS, auxiliary_sentence, default_pair_order,
                                    gold_polarities, is_binary)
from analysis.core.encoding import clean_text, encode

KINDS = ("aspect", "aspect_sentiment", "opposite", "noop")


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


def candidates_for(pair: PairGold, kind: str) -> list[int]:
    """The words a head's most-attended word is chosen among: the review (and the [SEP]s for
    ``noop``)."""
    return pair.review + pair.sep if kind == "noop" else pair.review


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


def _gold_sets(label: str, own: list[dict], other: list[dict], sep: list[int],
               spans: dict[int, tuple[int, int]]) -> dict[str, list[int]]:
    """The kinds a pair has, each with its gold words (see the module docstring)."""
    sets = {}
    t_words = _spans_to_words([(t["start"], t["end"]) for t in own], spans)
    o_words = _spans_to_words([(o["start"], o["end"]) for t in own for o in t["opinions"]], spans)
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
    return sets


def build_pairs(tokenizer, ds, task: str = "qa_m", pair_order: str | None = None,
                max_length: int = 128, max_sentences: int | None = None):
    """Dataset -> (encodings, PairGold list), one pair per sentence and category.

    B tasks use the auxiliary sentence of the label ``positive`` (the aspect word is the
    same in all five rows)."""
    pair_order = pair_order or default_pair_order(task)
    review_first = pair_order == "review-aux"
    seg_review = 0 if review_first else 1
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
        terms = sole_category_terms(row)
        for cat in CATEGORIES:
            aux = auxiliary_sentence(task, cat, LABELS[0] if is_binary(task) else None)
            a, b = (clean, aux) if review_first else (aux, clean)
            enc = encode(tokenizer, a, b, max_length=max_length)
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
            own = [t for t in terms if t["category"] == cat]
            other = [t for t in terms if t["category"] and t["category"] != cat]
            # without sentence-level categories (e.g. ASTE) absence is unknown: no no-op pairs
            label = gold[cat] if gold is not None else (own[0]["polarity"] if own else "unknown")
            sets = _gold_sets(label, own, other, sep, spans)
            if not sets:
                continue
            encs.append(enc)
            pairs.append(PairGold(i, cat, label, a, b, q, review, sep, sets, list(enc.words)))
    return encs, pairs
