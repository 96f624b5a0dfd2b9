"""The Drift page's plain reading, computed from a :class:`analysis.drift.DriftResult`: which
layers and heads changed most, how far the representations moved, and whether heads moved to
the vertical pattern (docs/METHODS.md section 9)."""

from __future__ import annotations

import numpy as np

from analysis.drift.patterns import PATTERN_TYPES

VERTICAL = (PATTERN_TYPES.index("vertical"), PATTERN_TYPES.index("vertical+diagonal"))
MOVE = 0.2  # a head "moved to the vertical pattern" when its share of vertical maps rose this much


def vertical_share(types: np.ndarray) -> np.ndarray:
    """[L, H] share of examples whose map of the head is vertical (or vertical+diagonal);
    ``types`` [N, L, H] from ``classify_patterns``."""
    return np.isin(np.asarray(types), VERTICAL).mean(0)


def _head(l: int, h: int) -> str:
    return f"{l + 1}-{h + 1}"


def drift_reading(cosine: np.ndarray, cka: np.ndarray, vertical_before: np.ndarray,
                  vertical_after: np.ndarray, identical: bool = False, top: int = 3) -> list[str]:
    """Sentences from the numbers: ``cosine`` [L, H] mean head cosine, ``cka`` [L+1] (layer 0
    = embeddings), vertical shares [L, H] before and after (heads 1-indexed as layer-head)."""
    cosine = np.asarray(cosine, dtype=float)
    if identical or np.all(cosine > 1 - 1e-6):
        return ["Nothing changed: every head's attention is the same before and after "
                "fine-tuning on this corpus (cosine 1)."]
    out = []
    layers = cosine.mean(1)
    order = np.argsort(layers)
    worst, best = int(order[0]), int(order[-1])
    out.append(f"Layer {worst + 1} changed most (mean head cosine {layers[worst]:.3f}) and layer "
               f"{best + 1} least ({layers[best]:.3f}); "
               + ("later layers changed more than earlier ones."
                  if layers[len(layers) // 2:].mean() < layers[: len(layers) // 2].mean()
                  else "earlier layers changed at least as much as later ones."))
    flat = np.argsort(cosine, axis=None)[:top]
    heads = [np.unravel_index(int(i), cosine.shape) for i in flat]
    out.append("The most changed heads are " + ", ".join(
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


def reading(result, thresholds=None) -> list[str]:
    """:func:`drift_reading` of a DriftResult under the pattern ``thresholds``."""
    tb, ta = result.pattern_types(thresholds)
    return drift_reading(result.cosine, result.cka, vertical_share(tb), vertical_share(ta),
                         identical=bool(result.identical))
