"""Reading a :class:`analysis.syntax.heads.SyntaxResult`: the Clark-style table, the
comparison of two models, example sentences of a relation and a few plain sentences
(docs/METHODS.md section 10, "Tables and the plain reading"). Layers and heads are 1-indexed
here (the UI's convention); the result and the JSON keep them 0-indexed."""

from __future__ import annotations

import math

ALL = "all"


def _shown(result, min_count: int):
    return [(rel, r) for rel, r in result.relations.items() if r.n >= min_count]


def relation_rows(result, min_count: int = 1) -> list[dict]:
    """One row per relation with at least ``min_count`` dependents (in the result's order):
    relation, n, best layer and head (1-indexed), direction, accuracy, baseline offset and
    accuracy, and the difference accuracy - baseline."""
    rows = []
    for rel, r in _shown(result, min_count):
        rows.append({"relation": rel, "n": int(r.n), "layer": r.best["layer"] + 1,
                     "head": r.best["head"] + 1, "direction": r.best["direction"],
                     "accuracy": r.best["accuracy"], "baseline offset": r.baseline["offset"],
                     "baseline accuracy": r.baseline["accuracy"],
                     "above baseline": r.best["accuracy"] - r.baseline["accuracy"]})
    return rows


def compare_rows(before, after, min_count: int = 1) -> list[dict]:
    """Per relation present in both with at least ``min_count`` dependents in ``before``: the
    best head's accuracy in each model (its own best head) and the difference after - before."""
    rows = []
    for rel, a in _shown(before, min_count):
        b = after.relations.get(rel)
        if b is None:
            continue
        rows.append({"relation": rel, "n": int(a.n),
                     "before": a.best["accuracy"], "before head":
                     f"{a.best['layer'] + 1}-{a.best['head'] + 1}",
                     "after": b.best["accuracy"], "after head":
                     f"{b.best['layer'] + 1}-{b.best['head'] + 1}",
                     "difference": b.best["accuracy"] - a.best["accuracy"],
                     "baseline": a.baseline["accuracy"]})
    return rows


def _columns(source):
    """(indices, rows, ids, words, heads, deprels) of a SyntaxResult or a treebank Dataset."""
    if hasattr(source, "relations"):
        n = len(source.words)
        return (list(range(n)), list(source.rows), list(source.ids), source.words,
                source.heads, source.deprels)
    cols = source.to_dict()
    n = len(cols["id"])
    return (list(range(n)), list(range(n)), [str(x) for x in cols["id"]], cols["words"],
            cols["heads"], cols["deprels"])


def example_sentences(source, rel: str, k: int = 3, *, max_words: int | None = None
                      ) -> list[dict]:
    """The first ``k`` sentences holding relation ``rel`` (any dependent for ``"all"``), from a
    SyntaxResult (its analysed sentences) or a treebank Dataset; each a dict with ``index``
    (in the source), ``row`` (dataset row), ``id``, ``words``, ``heads``, ``deprels`` and
    ``arcs``: the (dependent, head) pairs of that relation, 1-based. ``max_words`` leaves out
    longer sentences."""
    out = []
    for i, row, sid, words, heads, rels in zip(*_columns(source)):
        if max_words is not None and len(words) > max_words:
            continue
        arcs = [(d, int(h)) for d, (h, r) in enumerate(zip(heads, rels), 1)
                if h != 0 and (rel == ALL or r == rel)]
        if arcs:
            out.append({"index": i, "row": row, "id": sid, "words": list(words),
                        "heads": [int(h) for h in heads], "deprels": list(rels),
                        "arcs": arcs})
            if len(out) >= k:
                break
    return out


# Universal Dependencies relations in everyday words: what the dependent word is (with an
# example); the word it belongs to is its "head" in grammar, which the page never calls a head
# (a head there is an attention head).
RELATION_WORDS = {
    "nsubj": "subject (like 'she' in 'she ran')",
    "nsubj:pass": "subject of a passive verb (like 'it' in 'it was sold')",
    "obj": "object (like 'book' in 'read a book')",
    "iobj": "indirect object (like 'her' in 'gave her a book')",
    "det": "article or determiner (like 'the', 'a' or 'this')",
    "amod": "adjective describing a noun (like 'red' in 'a red car')",
    "advmod": "adverb (like 'very' or 'quickly')",
    "case": "preposition (like 'in' or 'of')",
    "mark": "word that opens a clause (like 'that' or 'because')",
    "aux": "helping verb (like 'will' or 'has')",
    "aux:pass": "helping verb of a passive (like 'was' in 'it was sold')",
    "cop": "linking 'be' (like 'is' in 'it is good')",
    "cc": "joining word (like 'and' or 'but')",
    "conj": "second item of a list (like 'tea' in 'coffee and tea')",
    "compound": "noun inside a compound (like 'pizza' in 'pizza place')",
    "compound:prt": "verb particle (like 'up' in 'give up')",
    "nmod": "noun describing another noun (like 'city' in 'the centre of the city')",
    "nmod:poss": "possessive (like 'my' or 'John's')",
    "obl": "phrase of time, place or manner (like 'park' in 'ran in the park')",
    "obl:tmod": "time phrase (like 'today' in 'we met today')",
    "nummod": "number (like 'three' in 'three days')",
    "xcomp": "verb completing another (like 'go' in 'want to go')",
    "ccomp": "clause that is an object (like 'left' in 'said he left')",
    "advcl": "clause acting as an adverb (like 'left' in 'because he left')",
    "acl": "clause describing a noun (like 'left' in 'the man who left')",
    "acl:relcl": "relative clause (like 'left' in 'the man who left')",
    "appos": "noun renaming another (like 'friend' in 'Sam, my friend')",
    "punct": "punctuation mark",
    "flat": "later part of a name (like 'Smith' in 'John Smith')",
    "fixed": "part of a fixed phrase (like 'of' in 'because of')",
    "expl": "placeholder 'there' or 'it' (like 'there' in 'there is')",
    "parataxis": "side clause set next to another",
    "discourse": "filler word (like 'well' or 'oh')",
    "csubj": "clause that is a subject",
}


def relation_words(rel: str) -> str:
    """What a dependent of relation ``rel`` is, in everyday words (the name in quotes when
    this list does not know it)."""
    if rel in RELATION_WORDS:
        return RELATION_WORDS[rel]
    base = rel.split(":", 1)[0]
    return RELATION_WORDS.get(base, f"'{rel}' word")


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _place(k: int) -> str:
    """A fixed offset as a place: 'just before', '2 places after'..."""
    if abs(k) == 1:
        return "just before" if k < 0 else "just after"
    return f"{abs(k)} places {'before' if k < 0 else 'after'}"


def _offset(k: int) -> str:
    return f"{'+' if k > 0 else '-'}{abs(k)}"


def reading(result, min_count: int = 100, margin: float = 0.1, top: int = 5) -> list[str]:
    """Plain sentences: how many relations with at least ``min_count`` dependents have a head
    at least ``margin`` above the offset baseline, and the ``top`` such relations by that gap
    (layer and head 1-indexed)."""
    shown = [(rel, r) for rel, r in _shown(result, min_count) if rel != ALL]
    if not shown:
        return [f"No relation has {min_count} or more dependents in these "
                f"{result.n_sentences} sentences; lower the minimum count to see them."]
    gaps = sorted(((r.best["accuracy"] - r.baseline["accuracy"], rel, r) for rel, r in shown),
                  key=lambda t: (-t[0], t[1]))
    above = [g for g in gaps if g[0] >= margin]
    lines = [f"{len(above)} of {len(shown)} kinds of word link (relations with at least "
             f"{min_count} examples) have an attention head that points from a word to the word "
             f"it belongs to at least {round(100 * margin)} points more often than always taking "
             f"the word a fixed number of places away ({result.n_sentences} sentences)."]
    for gap, rel, r in above[:top]:
        b = r.best
        what = relation_words(rel)
        what = f"{'an' if what[0] in 'aeiou' else 'a'} {what}"
        where = f"attention head {b['head'] + 1} of layer {b['layer'] + 1}"
        if b["direction"] == "dep_to_head":
            finds = (f"{rel} ({what}): from each such word, {where} looks most at the word "
                     f"it belongs to in {_pct(b['accuracy'])} of {r.n} cases")
        else:
            finds = (f"{rel} ({what}): from the word each such word belongs to, {where} "
                     f"looks most at that word in {_pct(b['accuracy'])} of {r.n} cases")
        lines.append(f"{finds}; always taking the word {_place(r.baseline['offset'])} is right "
                     f"in {_pct(r.baseline['accuracy'])} ({round(100 * gap)} points less).")
    if not above:
        gap, rel, r = gaps[0]
        lines.append(f"The largest gap is for {rel} ({relation_words(rel)}): the best attention "
                     f"head is right in {_pct(r.best['accuracy'])}, always taking the word "
                     f"{_place(r.baseline['offset'])} in {_pct(r.baseline['accuracy'])}.")
    al = result.relations.get(ALL)
    if al is not None and not math.isnan(al.best["accuracy"]):
        lines.append(f"Over all {al.n} word links, the best single attention head (head "
                     f"{al.best['head'] + 1} of layer {al.best['layer'] + 1}) finds the word a "
                     f"word belongs to in {_pct(al.best['accuracy'])} of cases; always taking "
                     f"the word {_place(al.baseline['offset'])} does in "
                     f"{_pct(al.baseline['accuracy'])}.")
    return lines
