"""The features study in everyday words, computed from its numbers (the page, the report and
``features train`` print the same lines)."""

from __future__ import annotations

from collections import Counter

from analysis.features.corpus import LABEL_NAMES

GOOD_FVE, GOOD_DEAD, GOOD_AGREEMENT = 0.8, 0.10, 0.9


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def quality_lines(q: dict, m: int, layer: int) -> list[str]:
    where = "the embeddings" if layer == 0 else f"layer {layer}"
    fve, dead, agr = q.get("fve"), q.get("dead"), q.get("agreement")
    lines = [f"The dictionary's {m} features rebuild {_pct(fve)} of the variation of {where}'s "
             f"vectors on held-out text, using {q.get('l0', 0):.0f} features per token; "
             f"{_pct(dead)} of the features never fire."]
    if q.get("agreement_kind") == "classifier":
        lines.append(f"With the layer swapped for its rebuilt version, the classifier keeps its "
                     f"answer on {_pct(agr)} of the held-out inputs and gets back "
                     f"{_pct(q.get('loss_recovered'))} of what it loses when the layer is "
                     "zeroed.")
    else:
        lines.append(f"With the layer swapped for its rebuilt version, the model's last-layer "
                     f"vectors keep a mean cosine of {agr or 0:.2f} with the intact model's "
                     f"({_pct(q.get('loss_recovered'))} of the loss of zeroing the layer "
                     "recovered).")
    weak = []
    if fve is not None and fve < GOOD_FVE:
        weak.append("it rebuilds less than 80% of the variation")
    if dead is not None and dead > GOOD_DEAD:
        weak.append("more than a tenth of its features are dead")
    if agr is not None and q.get("agreement_kind") == "classifier" and agr < GOOD_AGREEMENT:
        weak.append("the classifier changes its answer on more than a tenth of the inputs")
    lines.append("Read its features with care: " + "; ".join(weak) + "." if weak else
                 "That is good enough to read its features as what the layer holds.")
    return lines


def feature_lines(features: dict, dashboards: dict, top: int = 3) -> list[str]:
    chosen = list(dashboards)
    kinds = Counter((features["align"][f] or {}).get("name") for f in chosen
                    if (features["align"][f] or {}).get("f1", 0) >= 0.3)
    lines = []
    if chosen:
        named = ", ".join(f"{n} with {LABEL_NAMES.get(k, k)}" for k, n in kinds.most_common())
        lines.append(f"Of the {len(chosen)} most frequent features, "
                     + (f"{sum(kinds.values())} line up with an annotation ({named})."
                        if kinds else "none lines up clearly with an annotation (UPOS, "
                        "relation, aspect role or label); read their top contexts."))
        tops = "; ".join(f"#{f}: {features['label'][f]}" for f in chosen[:top])
        lines.append(f"The most frequent: {tops}.")
    return lines


def effect_lines(effects: dict, class_names: list, labels: list) -> list[str]:
    best = None
    for f, e in effects.items():
        if not e or e.get("mean") is None:
            continue
        for c, v in enumerate(e["mean"]):
            if best is None or abs(v) > abs(best[2]):
                best = (f, c, v, e)
    if best is None:
        return []
    f, c, v, e = best
    lo = e["low"][c] if e.get("low") else None
    hi = e["high"][c] if e.get("high") else None
    ci = f" (95% interval {100 * lo:+.1f} to {100 * hi:+.1f} points)" if lo is not None else ""
    return [f"Switching off feature #{f} ({labels[f]}) moves the classifier's probability of "
            f"'{class_names[c]}' by {100 * v:+.1f} points on the held-out inputs it fires on"
            f"{ci}: the largest effect among the features measured."]


def diff_lines(cc: dict | None) -> list[str]:
    if not cc:
        return []
    c = cc["classes"]
    after = [x for x in cc["latents"] if x.get("side", "after") == "after"
             and x["share"] > 0.5]
    ft = [x for x in after if x["class"] == "fine-tuned-only"]
    lines = [f"Of the crosscoder's live latents, {c['fine-tuned-only']} are the fine-tuned "
             f"model's alone, {c['base-only']} the base model's alone and {c['shared']} shared "
             f"(held-out FVE {cc['fve']['base']:.2f} before, {cc['fve']['after']:.2f} after)."]
    if ft:
        genuine = [x for x in ft if not x["spurious"]]
        lines.append(f"Latent Scaling finds {len(ft) - len(genuine)} of the {len(ft)} "
                     "fine-tuned-only latents shown explained by the base model too (an "
                     "artefact of training, not something new).")
        if genuine:
            what = "; ".join(f"#{x['latent']}: {x['label']}" for x in genuine[:3])
            lines.append(f"What fine-tuning added: latents that fire on {what}.")
        else:
            lines.append("No fine-tuned-only latent survives the check: fine-tuning "
                         "re-weighted what the base model already had rather than adding "
                         "new features.")
    elif after:
        top = after[0]
        lean = "; ".join(f"#{x['latent']} ({100 * x['share']:.0f}%): {x['label']}"
                         for x in after[:3])
        lines.append("No latent belongs to the fine-tuned model alone: at this layer "
                     "fine-tuning re-weighted what the base model already had. Leaning "
                     f"furthest towards it (share of decoder norm, 50% = shared): {lean}"
                     + (f"; Latent Scaling calls #{top['latent']} "
                        f"{top['spurious'] or 'genuine'}." if top.get("nu_eps") is not None
                        else "."))
    else:
        lines.append("No latent leans towards the fine-tuned model.")
    return lines


def reading(result) -> list[str]:
    """The plain reading of a :class:`analysis.features.study.Result`."""
    lines = quality_lines(result.quality, int(result.settings.get("m", 0)), result.layer)
    lines += feature_lines(result.features, result.dashboards)
    lines += effect_lines(result.effects, result.class_names, result.features["label"])
    lines += diff_lines(result.crosscoder)
    return lines
