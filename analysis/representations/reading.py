"""The plain reading of the representations study: sentences in everyday words computed from
the numbers (layers 1-indexed as on the page, the embeddings "layer 0")."""

from __future__ import annotations

import numpy as np

from analysis.representations.corpus import PROBE_NAMES, CorpusResult
from analysis.representations.probes import ProbeCurve, change_ci, lead_ci

METHOD_NOTES = {
    "pca": "Each layer has its own axes (its own PCA), so compare how tokens group within a "
           "layer, not where they sit from one layer to the next.",
    "aligned": "Each layer is rotated onto the one before, so a token's movement from layer to "
               "layer means something.",
    "tsne": "t-SNE keeps near neighbours near; distances between groups and the axes carry no "
            "meaning.",
    "umap": "UMAP keeps near neighbours near; distances between far groups and the axes carry "
            "little meaning.",
}



def _words(n: int) -> str:
    return f"{n} word" if n == 1 else f"{n} words"

def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _layer(layer: int) -> str:
    return "the embeddings (layer 0)" if layer == 0 else f"layer {layer}"


def input_reading(result) -> list[str]:
    """Sentences about one input (an :class:`analysis.representations.single.InputResult`)."""
    out = [METHOD_NOTES[result.method]]
    if result.steps:
        k = int(np.nanargmin(result.steps))
        out.append(f"The tokens' arrangement changes most from {_layer(k)} to layer {k + 1} "
                   f"(linear CKA {result.steps[k]:.2f} between the two; 1 = the same "
                   "geometry).")
    if result.agreement:
        agree = np.asarray(result.agreement, float)
        low = int(np.nanargmin(agree))
        if np.nanmin(agree) > 0.999:
            out.append(f"{result.compare_model} arranges this input's tokens as "
                       f"{result.model} does at every layer (CKA above 0.999).")
        else:
            out.append(f"The two models arrange the tokens most differently at {_layer(low)} "
                       f"(CKA {agree[low]:.2f}, against {agree[0]:.2f} at the embeddings): "
                       f"that is where {result.compare_model} changed this input's geometry "
                       "most.")
    return out


def _spread(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Mean distance between the rows ``a`` and ``b`` of ``points`` (distinct pairs)."""
    d = np.linalg.norm(points[a][:, None, :] - points[b][None, :, :], axis=-1)
    same = a[:, None] == b[None, :]
    return float(d[~same].mean()) if (~same).any() else float("nan")


def _closest_layer(points, rows_a, rows_b, real) -> tuple[int, float]:
    """The layer where ``rows_a`` sit nearest ``rows_b`` on the map, relative to the mean
    distance of any two real tokens (1 = no nearer than any two tokens)."""
    ratios = []
    for p in points:
        p = np.asarray(p, float)
        ratios.append(_spread(p, rows_a, rows_b) / max(_spread(p, real, real), 1e-12))
    k = int(np.nanargmin(ratios))
    return k, ratios[k]


def colour_reading(result, colour: str) -> list[str]:
    """What the colours of an input from labelled data show, and the layer where its groups
    sit closest on model A's map."""
    labels = result.colourings.get(colour)
    if labels is None:
        return []
    labels = np.asarray(labels)
    real = np.flatnonzero(~np.asarray(result.special, bool))
    tokens = np.asarray(result.tokens)
    if colour == "role":
        asp, opi = np.flatnonzero(labels == "aspect"), np.flatnonzero(labels == "opinion")
        out = [f"Colours: each token's role for the asked category ({result.source}): the "
               f"aspect term ({', '.join(tokens[asp]) or 'none'}), its opinion words "
               f"({', '.join(tokens[opi]) or 'none'}), terms of other aspects, other words; "
               "the category's own tokens and [CLS]/[SEP] apart."]
        if len(asp) and len(opi):
            k, r = _closest_layer(result.points, asp, opi, real)
            out.append(f"On the map the aspect term sits closest to its opinion words at "
                       f"{_layer(k)} ({r:.2f} times the mean distance of two tokens).")
        return out
    tags = [t for t in dict.fromkeys(labels[real])]
    out = [f"Colours: each token's part of speech (UPOS) from the treebank ({result.source}); "
           "a word split into pieces gives every piece its tag."]
    shared = [t for t in tags if (labels[real] == t).sum() >= 2]
    if shared:
        ks = []
        for p in result.points:
            p = np.asarray(p, float)
            within = np.nanmean([_spread(p, np.flatnonzero(labels == t),
                                         np.flatnonzero(labels == t)) for t in shared])
            ks.append(within / max(_spread(p, real, real), 1e-12))
        k = int(np.nanargmin(ks))
        out.append(f"Tokens of the same part of speech sit closest together at {_layer(k)} "
                   f"({ks[k]:.2f} times the mean distance of two tokens; tags seen twice or "
                   f"more: {', '.join(shared)}).")
    return out


def _points(ci: tuple[float, float]) -> str:
    """``95% interval -0.5 to +2.3 points`` of a difference of shares."""
    return f"95% interval {100 * ci[0]:+.1f} to {100 * ci[1]:+.1f} points"


def _beyond(ci: tuple[float, float] | None) -> bool:
    """Whether an interval of a difference lies wholly on one side of 0."""
    return ci is not None and (ci[0] > 0 or ci[1] < 0)


def _lead_words(curve: ProbeCurve, layer: int) -> str:
    """How far the layer's accuracy lies above the majority baseline, with its interval."""
    lead = curve.layers[layer] - curve.majority
    ci = lead_ci(curve, layer)
    if ci is None:
        return f"a lead of {100 * lead:.1f} points (no interval: no per-sentence counts)"
    if ci[0] > 0:
        return f"a lead of {100 * lead:.1f} points beyond noise ({_points(ci)})"
    return f"a lead of {100 * lead:+.1f} points, within noise ({_points(ci)})"


def _pair_reading(curve: ProbeCurve, other: ProbeCurve | None, other_name: str,
                  trained=None) -> list[str]:
    best = curve.best_layer()
    what = PROBE_NAMES.get(curve.name, curve.name)
    ci = curve.ci(best)
    within = f" (95% interval {_pct(ci[0])} to {_pct(ci[1])})" if ci is not None else ""
    out = [f"A linear probe reads the {what} best at {_layer(best)}: "
           f"{_pct(curve.layers[best])} of {curve.n_words} words right{within}, against "
           f"{_pct(curve.majority)} by always guessing the most frequent class: "
           f"{_lead_words(curve, best)}."]
    if curve.name == "upos" and {"NOUN", "VERB"} <= set(curve.classes):
        nv = [(r["NOUN"] + r["VERB"]) / 2 for r in curve.recall]
        k = int(np.argmax(nv))
        out.append(f"{_layer(k).capitalize()} separates nouns from verbs best "
                   f"({_pct(curve.recall[k]['NOUN'])} of nouns and "
                   f"{_pct(curve.recall[k]['VERB'])} of verbs tagged right).")
    if other is not None:
        out.append(change_sentence(curve, other, other_name, trained))
    return out


def trained_sentence(trained, other_name: str) -> str:
    """What the compared model's fine-tune trained (``trained``: an
    :class:`analysis.core.cards.Trained`), and what that means for the probes' changes."""
    if not trained.known:
        return (f"What {other_name}'s fine-tune trained is unknown (it has no fine-tuning "
                "card), so a layer whose probe did not change may have been frozen rather "
                "than kept by fine-tuning.")
    if not trained.frozen:
        return (f"{other_name}'s card says every layer was fine-tuned ({trained.words()}), so "
                "a change at any layer is the fine-tune's.")
    k = max(trained.frozen)
    return (f"Only {trained.trained_words()} fine-tuned in {other_name}: "
            f"{trained.frozen_words()} were frozen by the recipe, so up to layer {k} its "
            "vectors are the base model's and a probe's sameness there is not a finding; "
            "only the changes above are the fine-tune's.")


def change_sentence(curve: ProbeCurve, other: ProbeCurve, other_name: str,
                    trained=None) -> str:
    """The top layer's probe before and after fine-tuning, the change with its 95% interval
    (paired over sentences when both saw the same words), "within noise" when the interval
    covers 0; a claim about what the top layers now do only when the change is beyond noise
    and the after model's top layer leads the majority baseline beyond noise. A top layer
    that ``trained`` (:class:`analysis.core.cards.Trained`) says was frozen is said to be so, and
    nothing is read into its sameness."""
    top = len(curve.layers) - 1
    if trained is not None and trained.is_frozen(top):
        return (f"In {other_name} the top layer was frozen by the recipe (only "
                f"{trained.trained_words()} trained), so its {curve.name} probe "
                f"({_pct(curve.layers[top])} before, {_pct(other.layers[top])} after) says "
                "nothing about fine-tuning.")
    a, b = curve.layers[top], other.layers[top]
    delta = b - a
    ci = change_ci(curve, other, top)
    if ci is None:
        change = (f"goes from {_pct(a)} to {_pct(b)} ({100 * delta:+.1f} points; no interval, "
                  "so it cannot be told from noise)")
    elif _beyond(ci):
        change = (f"{'rises' if delta > 0 else 'falls'} from {_pct(a)} to {_pct(b)} "
                  f"({100 * delta:+.1f} points, {_points(ci)})")
    else:
        change = (f"goes from {_pct(a)} to {_pct(b)}, within noise ({100 * delta:+.1f} points, "
                  f"{_points(ci)})")
    line = (f"After fine-tuning ({other_name}) the top layer's {curve.name} probe {change}; "
            f"its best layer is {_layer(other.best_layer())}.")
    lead = lead_ci(other, top)
    clear = _beyond(ci) and lead is not None and lead[0] > 0
    if curve.name == "aspect" and clear and delta > 0:
        line += (" The top layers now group the review's words by whether they name the "
                 f"asked aspect better than before, and {_pct(b)} lies beyond noise above "
                 f"the majority baseline's {_pct(other.majority)} ({_points(lead)}).")
    elif curve.name == "aspect" and _beyond(ci) and delta > 0:
        line += (f" But {_pct(b)} is not clearly above the majority baseline's "
                 f"{_pct(other.majority)} ({_points(lead)}), so this is no sign that the top "
                 "layers group the words by aspect.")
    elif curve.name == "upos" and _beyond(ci) and delta < 0:
        line += " The top layers kept less of the part of speech than before."
    return line


def corpus_reading(result: CorpusResult, trained=None) -> list[str]:
    """Sentences about the corpus part; ``trained``: what the compared (fine-tuned) model's
    fine-tune trained (:func:`analysis.core.cards.trained_of`), said after the probes when there is
    a compared model."""
    out = []
    other_name = result.compare.name if result.compare else ""
    for name, curve in result.model.probes.items():
        other = result.compare.probes.get(name) if result.compare is not None else None
        out += _pair_reading(curve, other, other_name, trained)
    if trained is not None and result.compare is not None:
        out.append(trained_sentence(trained, other_name))
    aniso = [a for a in result.model.anisotropy]
    if all(a is not None for a in aniso):
        k = int(np.argmax(aniso))
        out.append(f"Words' vectors are most alike at {_layer(k)} (two random words' mean "
                   f"cosine {aniso[k]:.2f}; 0 would mean no common direction).")
    ss = result.model.self_similarity
    if all(s is not None for s in ss):
        out.append(f"Self-similarity goes from {ss[0]:.2f} at the embeddings to {ss[-1]:.2f} at "
                   f"the top layer ({_words(result.model.n_self_words)} seen in several "
                   "sentences): the lower it is, the more a word's vector depends on its "
                   "sentence.")
        if result.compare is not None and all(s is not None
                                              for s in result.compare.self_similarity):
            cs = result.compare.self_similarity
            out.append(f"In {result.compare.name} the top layer's self-similarity is "
                       f"{cs[-1]:.2f} (against {ss[-1]:.2f}).")
    return out
