"""What the matches say in plain words: their labels against the corpus's rates (the chance
level of a random piece) and the plain reading (docs/METHODS.md section 16, "Reading")."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from analysis.search.corpus import LABEL_NAMES, NONE
from analysis.search.index import Match, SearchIndex

SHORT = {"upos": "part of speech", "deprel": "dependency relation", "role": "aspect role",
         "label": "sentence label"}


def own_row(index: SearchIndex, text: str, position: int, pair: str | None = None) -> int | None:
    """The index row of piece ``position`` of ``text`` when ``text`` is a sentence of the
    corpus (its labels are then known), else None."""
    for s, t in enumerate(index.texts):
        if t == text and (index.pairs[s] or None) == (pair or None):
            for r in index.rows_of_sentence(s):
                if int(index.position[r]) == int(position):
                    return r
    return None


def others(matches: Sequence[Match], own: int | None) -> list[Match]:
    """The matches without the query's own piece."""
    return [m for m in matches if m.row != own]


def label_rows(index: SearchIndex, matches: Sequence[Match], name: str) -> list[dict]:
    """One row per label among the matches or with a corpus share of 1% or more: its share of
    the matches and of the corpus (%), most frequent among the matches first."""
    rates = index.label_rates()[name]
    counts = Counter(m.labels.get(name, NONE) for m in matches)
    n = max(1, len(matches))
    keys = set(counts) | {k for k, v in rates.items() if v >= 0.01}
    rows = [{"label": k, "matches (%)": 100.0 * counts.get(k, 0) / n,
             "corpus (%)": 100.0 * rates.get(k, 0.0)} for k in keys]
    return sorted(rows, key=lambda r: (-r["matches (%)"], -r["corpus (%)"], r["label"]))


def where(layer: int, head: int | None) -> str:
    if layer == 0:
        return "in the embeddings (layer 0)"
    return f"at layer {layer}" + (f", head {head + 1}'s context vectors" if head is not None
                                   else "")


def reading(index: SearchIndex, piece: str, matches: Sequence[Match], layer: int,
            head: int | None = None, own: int | None = None) -> list[str]:
    """The plain reading of a query's matches."""
    rest = others(matches, own)
    if not rest:
        return ["No other piece of the corpus was found."]
    at = where(layer, head)
    lo, hi = min(m.score for m in rest), max(m.score for m in rest)
    lines = [f"{at.capitalize()}, the {len(rest)} pieces of the corpus nearest to «{piece}» "
             f"have cosine similarities from {lo:.2f} to {hi:.2f}."]
    same = sum(m.token.lower() == piece.lower() for m in rest) / len(rest)
    lines.append(f"{100 * same:.0f}% of them are the same piece «{piece}»; the rest are other "
                 "pieces the model treats alike here.")
    rates = index.label_rates()
    for name in index.label_names:
        values = [m.labels.get(name, NONE) for m in rest]
        known = [v for v in values if v != NONE]
        if not known:
            continue
        mine = index.labels[name][own] if own is not None else NONE
        what = SHORT.get(name, name)
        if mine != NONE:
            share = sum(v == mine for v in values) / len(values)
            lines.append(f"{at.capitalize()} the nearest pieces share the word's {what} "
                         f"({mine}) {100 * share:.0f}% of the time, against "
                         f"{100 * rates[name].get(mine, 0.0):.0f}% by chance (its share of the "
                         "corpus).")
        else:
            top, count = Counter(known).most_common(1)[0]
            lines.append(f"{at.capitalize()} the most common {what} among the nearest pieces is "
                         f"{top} ({100 * count / len(values):.0f}%), against "
                         f"{100 * rates[name].get(top, 0.0):.0f}% of the corpus by chance.")
    if own is not None:
        lines.append("The query's own piece (the same sentence in the corpus) is left out of "
                     "these shares.")
    info = index.info(layer, head)
    if info.backend == "hnsw":
        lines.append(f"This set is large, so it is searched approximately (an HNSW graph); it "
                     f"finds {100 * (info.recall or 0):.0f}% of the exact 50 nearest pieces.")
    return lines


def label_title(name: str) -> str:
    return LABEL_NAMES.get(name, name)
