"""The patching results in plain words (page and report): what the counterfactual changes,
which heads and which layers at which positions carry that change, and how much of it."""

from __future__ import annotations

import numpy as np

from analysis.atlas.facts import head_name, head_statement, patching_facts
from analysis.importance.links import ASPECT_DATA
from analysis.patching.metric import MIN_GAP

CARRY = 0.1  # a component "carries" the change when its patch alone moves 10% of it


def name(layer: int, head: int) -> str:
    """1-indexed layer-head, as the pages show it (the Head atlas's naming)."""
    return head_name(layer, head)


def _pct(x: float) -> str:
    return f"{x:.0%}"


def top_heads(heads: np.ndarray, k: int = 3) -> list[tuple[int, int, float]]:
    flat = np.nan_to_num(heads, nan=-np.inf).ravel()
    order = np.argsort(-flat, kind="stable")[:k]
    return [(int(i) // heads.shape[1], int(i) % heads.shape[1], float(flat[i])) for i in order]


def pair_reading(r) -> list[str]:
    """Plain sentences about one :class:`analysis.patching.run.PairPatching`."""
    a, b = r.classes
    c = r.contrast
    same = a == r.predictions[1]
    lines = [
        f"The model answers '{a}' for the input and "
        + (f"'{b}' for the counterfactual." if not same else
           f"still '{a}' for the counterfactual, but less surely: the score of '{b}' gains "
           f"on it.")
        + f" The gap between the scores of '{a}' and '{b}' goes from {c.clean:+.2f} to "
          f"{c.counter:+.2f}; each number below is the share of that change one part of the "
          "model carries (0: none of it, 100%: all of it)."]
    if abs(c.gap) < MIN_GAP:
        lines.append("The counterfactual hardly changes the answer, so these shares divide by "
                     "a small number and are not reliable: try another counterfactual.")
    how = ("taking that part's activation from the counterfactual while the model reads the "
           "input" if r.direction == "noising" else
           "taking that part's activation from the input while the model reads the "
           "counterfactual")
    top = top_heads(r.heads)
    n_carry = int(np.nansum(r.heads > CARRY))
    L, H = r.heads.shape
    lines.append(f"Heads ({how}): head {name(*top[0][:2])} carries the most, "
                 f"{_pct(top[0][2])}; then " + ", ".join(
                     f"{name(l, h)} ({_pct(v)})" for l, h, v in top[1:]) +
                 f". {n_carry} of {L * H} heads carry more than {_pct(CARRY)} each; shares "
                 "do not add up (heads work together and can cancel).")
    res = r.positions.get("residual")
    if res is not None and np.isfinite(res).any():
        tokens = r.tokens
        firsts = []
        for layer in range(res.shape[0]):
            i = int(np.nanargmax(res[layer]))
            firsts.append((layer, i, float(res[layer, i])))
        l0, i0, v0 = firsts[0]
        lL, iL, vL = firsts[-1]
        lines.append(
            f"Residual stream: after layer 1 the change sits mostly at '{tokens[i0]}' "
            f"(patching that one position carries {_pct(v0)}); after the last layer at "
            f"'{tokens[iL]}' ({_pct(vL)}), where the classifier reads it.")
        if r.differs:
            changed = ", ".join(f"'{tokens[i]}'" for i in r.differs[:4])
            moved = next((layer for layer in range(res.shape[0])
                          if not any(res[layer, i] > 0.5 for i in r.differs)), None)
            lines.append(f"The inputs differ at {changed}. " + (
                f"From layer {moved + 1} on, no changed position alone carries more than half "
                "of the change: it has moved to other tokens." if moved is not None else
                "Up to the last layer a changed position alone still carries more than half "
                "of it."))
    for site, label in (("attention", "attention outputs"), ("mlp", "MLP outputs")):
        m = r.positions.get(site)
        if m is not None and np.isfinite(m).any():
            layer, i = np.unravel_index(int(np.nanargmax(m)), m.shape)
            lines.append(f"Of the {label}, layer {layer + 1} at '{r.tokens[i]}' carries the "
                         f"most ({_pct(float(m[layer, i]))}).")
    return lines


def corpus_reading(cr) -> list[str]:
    """Plain sentences about one :class:`analysis.patching.corpus.CorpusPatching`."""
    kind = "another aspect" if cr.contrast == "aspect" else "the opposite opinion word"
    lines = [f"Averaged over {cr.n_pairs} pairs from {cr.n_sentences} sentences ({cr.description}"
             f"), each against its counterfactual with {kind}."]
    if cr.skipped:
        lines.append("Left out: " + "; ".join(f"{v} pair(s): {k}" for k, v in
                                              cr.skipped.items()) + ".")
    top = top_heads(cr.mean)
    sure = int(((cr.ci[..., 0] > 0) & (cr.mean > CARRY)).sum())
    # each head as the Head atlas states it (docs/METHODS.md section 18)
    lines.append("The heads that carry the most on average: " + "; ".join(
        head_statement(l, h, {"patching": patching_facts(cr.mean, cr.ci, cr.contrast, l, h)})
        for l, h, _ in top) + f". {sure} head(s) carry more than {_pct(CARRY)} with an "
        "interval above zero.")
    if cr.spearman is not None and np.isfinite(cr.spearman):
        s = cr.spearman
        word = ("strongly" if abs(s) >= 0.6 else "moderately" if abs(s) >= 0.3 else "barely")
        lines.append(f"Heads that carry this contrast and heads the task needs on average "
                     f"(Head importance) {word} agree: Spearman {s:.2f} between the size of "
                     "the mean effect and the drop when the head is switched off.")
    marked = [name(*h) for h in cr.aspect_heads]
    if marked:
        lines.append(f"The Aspect heads page's top heads ({', '.join(marked)}; {ASPECT_DATA}) "
                     "carry " + ", ".join(_pct(cr.mean[l, h]) for l, h in cr.aspect_heads)
                     + ".")
    return lines
