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


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


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
    lines = [f"{len(above)} of {len(shown)} relations with at least {min_count} dependents "
             f"have a head that finds the gold head at least {round(100 * margin)} points more "
             f"often than the best fixed offset ({result.n_sentences} sentences)."]
    for gap, rel, r in above[:top]:
        b = r.best
        arrow = "dependent to head" if b["direction"] == "dep_to_head" else "head to dependent"
        lines.append(f"{rel}: layer {b['layer'] + 1}, head {b['head'] + 1} ({arrow}) finds "
                     f"the head of {_pct(b['accuracy'])} of {r.n} dependents; the offset "
                     f"{_offset(r.baseline['offset'])} finds {_pct(r.baseline['accuracy'])} "
                     f"({round(100 * gap)} points above).")
    if not above:
        gap, rel, r = gaps[0]
        lines.append(f"The largest gap is {rel}: {_pct(r.best['accuracy'])} against "
                     f"{_pct(r.baseline['accuracy'])} for the offset "
                     f"{_offset(r.baseline['offset'])}.")
    al = result.relations.get(ALL)
    if al is not None and not math.isnan(al.best["accuracy"]):
        lines.append(f"Over all {al.n} dependents the best single head is layer "
                     f"{al.best['layer'] + 1}, head {al.best['head'] + 1} with "
                     f"{_pct(al.best['accuracy'])} (offset {_offset(al.baseline['offset'])}: "
                     f"{_pct(al.baseline['accuracy'])}).")
    return lines
