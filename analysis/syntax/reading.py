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
    accuracy, the difference accuracy - baseline and its 95% interval (None without one)."""
    rows = []
    for rel, r in _shown(result, min_count):
        rows.append({"relation": rel, "n": int(r.n), "layer": r.best["layer"] + 1,
                     "head": r.best["head"] + 1, "direction": r.best["direction"],
                     "accuracy": r.best["accuracy"], "baseline offset": r.baseline["offset"],
                     "baseline accuracy": r.baseline["accuracy"],
                     "above baseline": r.best["accuracy"] - r.baseline["accuracy"],
                     "above baseline 95%": getattr(r, "gap_ci", None)})
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


def _gap_band(r) -> str:
    """``; 95% 20.1 to 26.7 points`` of a relation's gap interval, with ``, within noise``
    first when it covers 0 ("" without an interval)."""
    ci = getattr(r, "gap_ci", None)
    if ci is None:
        return ""
    noise = ", within noise" if ci[0] <= 0 <= ci[1] else ""
    return f"{noise}; 95% {100 * ci[0]:.1f} to {100 * ci[1]:.1f} points"


def within_noise(r) -> bool:
    """Whether a relation's gap interval (best head - baseline) covers 0."""
    ci = getattr(r, "gap_ci", None)
    return ci is not None and ci[0] <= 0 <= ci[1]


def reading(result, min_count: int = 100, margin: float = 0.1, top: int = 5) -> list[str]:
    """Plain sentences: how many relations with at least ``min_count`` dependents have a head
    at least ``margin`` above the offset baseline, and the ``top`` such relations by that gap
    (layer and head 1-indexed), each gap with its bootstrap 95% interval over sentences
    ("within noise" when it covers 0)."""
    shown = [(rel, r) for rel, r in _shown(result, min_count) if rel != ALL]
    if not shown:
        return [f"No relation has {min_count} or more dependents in these "
                f"{result.n_sentences} sentences; lower the minimum count to see them."]
    gaps = sorted(((r.best["accuracy"] - r.baseline["accuracy"], rel, r) for rel, r in shown),
                  key=lambda t: (-t[0], t[1]))
    above = [g for g in gaps if g[0] >= margin]
    noisy = sum(within_noise(g[2]) for g in above)
    lines = [f"{len(above)} of {len(shown)} kinds of word link (relations with at least "
             f"{min_count} examples) have an attention head that points from a word to the word "
             f"it belongs to at least {round(100 * margin)} points more often than always taking "
             f"the word a fixed number of places away ({result.n_sentences} sentences)"
             + (f"; for {noisy} of them the lead is within noise (its 95% interval over "
                "sentences covers 0)." if noisy else ".")]
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
                     f"in {_pct(r.baseline['accuracy'])} ({round(100 * gap)} points less"
                     f"{_gap_band(r)}).")
    if not above:
        gap, rel, r = gaps[0]
        lines.append(f"The largest gap is for {rel} ({relation_words(rel)}): the best attention "
                     f"head is right in {_pct(r.best['accuracy'])}, always taking the word "
                     f"{_place(r.baseline['offset'])} in {_pct(r.baseline['accuracy'])} "
                     f"({round(100 * gap)} points{_gap_band(r)}).")
    al = result.relations.get(ALL)
    if al is not None and not math.isnan(al.best["accuracy"]):
        lines.append(f"Over all {al.n} word links, the best single attention head (head "
                     f"{al.best['head'] + 1} of layer {al.best['layer'] + 1}) finds the word a "
                     f"word belongs to in {_pct(al.best['accuracy'])} of cases; always taking "
                     f"the word {_place(al.baseline['offset'])} does in "
                     f"{_pct(al.baseline['accuracy'])}.")
    return lines


# -- the structural probes (Hewitt & Manning 2019) ---------------------------------------------

def _usable(res) -> list[dict]:
    return [r for r in res.layers if not math.isnan(float(r["uuas"]))]


def _best(res) -> dict | None:
    """The layer whose distance probe links the most word pairs as the treebank does (the
    lowest layer on a tie)."""
    rows = _usable(res)
    return max(rows, key=lambda r: (float(r["uuas"]), -int(r["layer"]))) if rows else None


def _layer_name(layer: int) -> str:
    return "the word vectors before any layer" if layer == 0 else f"layer {layer}"


def probe_reading(res, close: float = 0.05) -> list[str]:
    """Plain sentences on one model's probes (a ``ProbeResult``): which layer holds the
    sentence's grammar tree in the simplest readable form, how much of the tree a small
    trained map recovers there (UUAS), against linking every word to its neighbour and
    against the vectors before any layer (layer 0); then where the main word of the sentence
    is found best (root accuracy). ``close``: a best layer less than this above the neighbour
    baseline is said to hold no more than word order."""
    best = _best(res)
    if best is None:
        return ["No held-out sentence could be scored (each needs two or more words that are "
                "not punctuation), so the trained maps say nothing here; use a larger treebank."]
    layer, score = int(best["layer"]), float(best["uuas"])
    chain = float(res.baselines.get("linear_chain_uuas", float("nan")))
    emb = next((float(r["uuas"]) for r in _usable(res) if int(r["layer"]) == 0), float("nan"))
    lines = [f"A small map trained to read the grammar tree out of the word vectors does best "
             f"on {_layer_name(layer)}: there it finds {_pct(score)} of the tree's links (which "
             f"word belongs to which), on {res.n_eval} sentences it was not trained on."]
    if not math.isnan(chain):
        if score - chain < close:
            lines.append(f"That is hardly more than linking each word to the next one, which "
                         f"finds {_pct(chain)}: the layers hold little of the tree beyond word "
                         f"order in a form this map can read.")
        else:
            lines.append(f"Linking each word to the next one finds {_pct(chain)}, "
                         f"{round(100 * (score - chain))} points less.")
    if layer != 0 and not math.isnan(emb):
        lines.append(f"The same map on the word vectors before any layer finds {_pct(emb)}, so "
                     f"the model's layers add {round(100 * (score - emb))} points.")
    roots = [r for r in res.layers if not math.isnan(float(r["root_acc"]))]
    if roots:
        top = max(roots, key=lambda r: (float(r["root_acc"]), -int(r["layer"])))
        lines.append(f"A second map, trained to tell how deep each word sits in the tree, finds "
                     f"the sentence's main word (usually its verb) in "
                     f"{_pct(float(top['root_acc']))} of sentences on "
                     f"{_layer_name(int(top['layer']))}.")
    return lines


def trained_sentence(trained) -> str:
    """What the second model's fine-tune trained (``trained``: an
    :class:`analysis.core.cards.Trained`), and what that means for a before/after comparison."""
    if not trained.known:
        return ("What the second model's fine-tune trained is unknown (it has no fine-tuning "
                "card), so a layer or head that did not change may have been frozen rather "
                "than kept by fine-tuning.")
    if not trained.frozen:
        return (f"The second model's card says all {trained.n_layers} layers were fine-tuned, "
                "so a change at any layer is the fine-tune's.")
    frozen = trained.frozen_words().replace("the embeddings",
                                            "the word vectors before any layer")
    return (f"Only {trained.trained_words()} fine-tuned in the second model: "
            f"{frozen} were frozen by the recipe, so their heads and word "
            "vectors are the first model's by construction and their sameness is not a "
            "finding.")


def probe_compare_reading(before, after, near: float = 0.02, trained=None) -> list[str]:
    """Plain sentences comparing two models' probes on the same sentences: each model's best
    layer and how much of the tree it recovers there, and the difference in points (a change
    under ``near`` is said to be about the same). ``trained`` (:class:`analysis.core.cards.Trained`,
    what the second model's fine-tune trained) adds a sentence that says so; where the second
    model's best layer was frozen by its recipe, its score there is said to be the base
    model's, not a finding."""
    tail = [] if trained is None else [trained_sentence(trained)]
    a, b = _best(before), _best(after)
    if a is None or b is None:
        return ["No held-out sentence could be scored for one of the models, so the probes "
                "cannot be compared here."] + tail
    if trained is not None and trained.is_frozen(int(b["layer"])):
        tail.insert(0, f"The second model's best layer, {_layer_name(int(b['layer']))}, was "
                       "frozen by its recipe: its score there is the base model's, not "
                       "something fine-tuning made.")
    sa, sb = float(a["uuas"]), float(b["uuas"])
    diff = sb - sa
    if abs(diff) < near:
        verdict = "about as much of the grammar tree as the first"
    else:
        verdict = (f"{'more' if diff > 0 else 'less'} of the grammar tree than the first "
                   f"({abs(round(100 * diff))} points)")
    return [f"The second model's word vectors hold {verdict}: at best the map finds "
            f"{_pct(sb)} of the tree's links ({_layer_name(int(b['layer']))}), against "
            f"{_pct(sa)} for the first model ({_layer_name(int(a['layer']))})."] + tail
