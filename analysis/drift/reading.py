"""The Drift page's plain reading, computed from a :class:`analysis.drift.DriftResult`: which
layers and heads changed most, how far the representations moved, and whether heads moved to
the vertical pattern (docs/METHODS.md section 9). With the per-example cosines, the layer
means carry a 95% interval over examples, and the most-changed layer and the early-vs-late
comparison say "within noise" when their intervals overlap or cover 0."""

from __future__ import annotations

import numpy as np

from analysis.drift.patterns import PATTERN_TYPES

VERTICAL = (PATTERN_TYPES.index("vertical"), PATTERN_TYPES.index("vertical+diagonal"))
MOVE = 0.2  # a head "moved to the vertical pattern" when its share of vertical maps rose this much


def vertical_share(types: np.ndarray) -> np.ndarray:
    """[L, H] share of examples whose map of the head is vertical (or vertical+diagonal);
    ``types`` [N, L, H] from ``classify_patterns``."""
    return np.isin(np.asarray(types), VERTICAL).mean(0)


Z95 = 1.959964


def mean_ci(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) over axis 0 (the examples): 95% normal interval, the sample standard
    deviation (n - 1); NaN bounds for fewer than two examples."""
    x = np.asarray(x, dtype=float)
    m = x.mean(0)
    if len(x) < 2:
        return m, np.full(m.shape, np.nan), np.full(m.shape, np.nan)
    half = Z95 * x.std(0, ddof=1) / np.sqrt(len(x))
    return m, m - half, m + half


def layer_cosine_ci(cosine_examples: np.ndarray):
    """(mean, low, high) [L] of each layer's mean head cosine, the interval over examples
    (each example's mean over the layer's heads is the unit)."""
    return mean_ci(np.asarray(cosine_examples, dtype=float).mean(2))


def late_minus_early_ci(cosine_examples: np.ndarray):
    """(difference, low, high): mean cosine of the later half of the layers minus the earlier
    half's, paired per example (negative: later layers changed more)."""
    per_layer = np.asarray(cosine_examples, dtype=float).mean(2)
    half = per_layer.shape[1] // 2
    d = per_layer[:, half:].mean(1) - per_layer[:, :half].mean(1)
    m, lo, hi = mean_ci(d)
    return float(m), float(lo), float(hi)


def layer_rows(cosine_examples: np.ndarray) -> list[dict]:
    """Per layer (1-indexed): the mean head cosine and its 95% interval over examples (three
    decimals, as the reading states them)."""
    m, lo, hi = layer_cosine_ci(cosine_examples)
    return [{"layer": i + 1, "mean head cosine": round(float(m[i]), 3),
             "95% interval": f"{lo[i]:.3f} to {hi[i]:.3f}"} for i in range(len(m))]


def _band(lo: float, hi: float) -> str:
    return f", 95% {lo:.3f} to {hi:.3f}" if np.isfinite(lo) and np.isfinite(hi) else ""


def _layers_sentence(layers: np.ndarray, cosine_examples, numbers=None) -> str:
    """Sentence 1: the most and least changed layers, and whether later layers changed more;
    ``numbers`` names the rows' layers (1-based; default 1..L: the rows may be the trained
    layers only)."""
    numbers = list(numbers) if numbers is not None else list(range(1, len(layers) + 1))
    if len(layers) == 1:
        return f"Layer {numbers[0]} changed by a mean head cosine of {layers[0]:.3f}."
    order = np.argsort(layers, kind="stable")
    worst, best = int(order[0]), int(order[-1])
    half = len(layers) // 2
    later = layers[half:].mean() < layers[:half].mean()
    if cosine_examples is None:
        return (f"Layer {numbers[worst]} changed most (mean head cosine {layers[worst]:.3f}) and "
                f"layer {numbers[best]} least ({layers[best]:.3f}); "
                + ("later layers changed more than earlier ones." if later
                   else "earlier layers changed at least as much as later ones."))
    _, lo, hi = layer_cosine_ci(cosine_examples)
    second = int(order[1])
    text = (f"Layer {numbers[worst]} changed most (mean head cosine {layers[worst]:.3f}"
            f"{_band(lo[worst], hi[worst])})")
    if np.isfinite(hi[worst]) and hi[worst] >= lo[second]:
        text += (f", within noise of layer {numbers[second]} ({layers[second]:.3f}"
                 f"{_band(lo[second], hi[second])})")
    text += (f", and layer {numbers[best]} least ({layers[best]:.3f}"
             f"{_band(lo[best], hi[best])}); ")
    d, dlo, dhi = late_minus_early_ci(cosine_examples)
    gap = f"the later half's mean cosine minus the earlier half's is {d:+.3f}{_band(dlo, dhi)}"
    if not np.isfinite(dlo) or dlo <= 0 <= dhi:
        return text + f"later and earlier layers changed alike, within noise: {gap}."
    return text + ("later layers changed more than earlier ones" if d < 0 else
                   "earlier layers changed more than later ones") + f": {gap}."


def _head(l: int, h: int) -> str:
    return f"{l + 1}-{h + 1}"


def trained_sentence(trained, layer_means: np.ndarray | None = None) -> str:
    """What the after model's fine-tune trained, in one sentence (``trained``: an
    :class:`analysis.core.cards.Trained`); with the layers' mean head cosines, the frozen layers'
    sameness is said not to be a finding (and a frozen layer that moved anyway is flagged)."""
    if not trained.known:
        return ("What was trained is unknown (the after model has no fine-tuning card), so "
                "a layer that did not change may have been frozen rather than left alone by "
                "fine-tuning.")
    if not trained.frozen:
        return (f"Its card says every layer was trained ({trained.words()}), so every "
                "layer's change below is a finding.")
    what = trained.frozen_words()
    if layer_means is None:
        return (f"Only {trained.trained_words()} trained: {what} were frozen by the "
                "recipe, so their sameness is not a finding.")
    frozen = [i - 1 for i in trained.frozen]
    lo, hi = float(np.min(layer_means[frozen])), float(np.max(layer_means[frozen]))
    value = f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f} to {hi:.2f}"
    text = (f"{what[0].upper()}{what[1:]} were frozen by the recipe (only "
            f"{trained.trained_words()} trained), so their mean head cosine of {value} "
            "is not a finding")
    if lo < 1 - 1e-3:
        text += (f"; yet it is below 1 ({lo:.3f}): the frozen layers' maps moved, so the card "
                 "may not describe these weights")
    return text + "."


def drift_reading(cosine: np.ndarray, cka: np.ndarray, vertical_before: np.ndarray,
                  vertical_after: np.ndarray, identical: bool = False, top: int = 3,
                  cosine_examples: np.ndarray | None = None, trained=None) -> list[str]:
    """Sentences from the numbers: ``cosine`` [L, H] mean head cosine, ``cka`` [L+1] (layer 0
    = embeddings), vertical shares [L, H] before and after (heads 1-indexed as layer-head);
    ``cosine_examples`` [N, L, H] (whose mean is ``cosine``) adds the intervals. ``trained``
    (an :class:`analysis.core.cards.Trained`: what the after model's fine-tune trained) adds a first
    sentence that says so; where layers were frozen the layers and heads that changed most are
    read among the trained layers only, from the numbers, and no frozen layer's sameness is
    called a finding."""
    cosine = np.asarray(cosine, dtype=float)
    if identical or np.all(cosine > 1 - 1e-6):
        out = ["Nothing changed: every head's attention is the same before and after "
               "fine-tuning on this corpus (cosine 1)."]
        return out + ([trained_sentence(trained)] if trained is not None else [])
    means = cosine.mean(1)
    out = []
    rows = list(range(len(means)))
    if trained is not None:
        out.append(trained_sentence(trained, means if trained.frozen else None))
        if trained.frozen and trained.layers:
            rows = [i - 1 for i in trained.layers if i <= len(means)]
    ex = None if cosine_examples is None else np.asarray(cosine_examples, float)[:, rows]
    first = _layers_sentence(means[rows], ex, [i + 1 for i in rows])
    if len(rows) < len(means):
        first = "Among the trained layers, " + first[0].lower() + first[1:]
    out.append(first)
    sub = np.full_like(cosine, np.inf)
    sub[rows] = cosine[rows]
    flat = np.argsort(sub, axis=None)[:min(top, len(rows) * cosine.shape[1])]
    heads = [np.unravel_index(int(i), cosine.shape) for i in flat]
    out.append(("The most changed heads are " if len(rows) == len(means) else
                "The most changed heads of the trained layers are ") + ", ".join(
        f"{_head(l, h)} (cosine {cosine[l, h]:.3f})" for l, h in heads) + ".")
    cka = np.asarray(cka, dtype=float)
    if np.isfinite(cka).any():
        k = int(np.nanargmin(cka))
        where = "the embeddings" if k == 0 else f"layer {k}"
        out.append(f"The representations moved most at {where} (linear CKA {cka[k]:.3f}; 1 = "
                   f"unchanged); the last layer's CKA is {cka[-1]:.3f}.")
    vb, va = np.asarray(vertical_before, float), np.asarray(vertical_after, float)
    delta = va - vb
    moved = np.argwhere(delta >= MOVE)
    total_b, total_a = 100 * vb.mean(), 100 * va.mean()
    what = ("looking from every word at the same few tokens, such as [CLS], [SEP] or a full "
            "stop (the 'vertical' pattern)")
    overall = ("fewer" if total_a < total_b - 0.5 else "more" if total_a > total_b + 0.5
               else "about as many")
    change = {"fewer": "became fewer", "more": "became more common",
              "about as many": "stayed about as common"}
    if len(moved):
        l, h = np.unravel_index(int(np.argmax(delta)), delta.shape)
        but = {"fewer": "Yet over all heads such maps became fewer, because other heads left "
                        "the pattern",
               "more": "Over all heads such maps became more common",
               "about as many": "Over all heads such maps stayed about as common"}[overall]
        out.append(f"{len(moved)} head{'s' if len(moved) != 1 else ''} took up {what} after "
                   f"fine-tuning, most of all {_head(l, h)}: from {100 * vb[l, h]:.0f}% to "
                   f"{100 * va[l, h]:.0f}% of its maps (a head counts when it gains at least "
                   f"{100 * MOVE:.0f} points). {but}: {total_b:.0f}% of all maps before, "
                   f"{total_a:.0f}% after.")
    else:
        out.append(f"No head took up {what} after fine-tuning (none gained {100 * MOVE:.0f} "
                   f"points); over all heads such maps {change[overall]}: {total_b:.0f}% of "
                   f"all maps before, {total_a:.0f}% after.")
    return out


def reading(result, thresholds=None, trained=None) -> list[str]:
    """:func:`drift_reading` of a DriftResult under the pattern ``thresholds``; ``trained``:
    what the after model's fine-tune trained (:func:`analysis.core.cards.trained_of`)."""
    tb, ta = result.pattern_types(thresholds)
    return drift_reading(result.cosine, result.cka, vertical_share(tb), vertical_share(ta),
                         identical=bool(result.identical),
                         cosine_examples=result.cosine_examples, trained=trained)
