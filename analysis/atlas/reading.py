"""The atlas in plain words (docs/METHODS.md section 18, "The model verdict"): how many heads
have each role, how many the task uses, how much of the task rests on how few heads (Head
importance's pruning curve), which layers fine-tuning changed and which the recipe froze, and
every head whose role and use disagree."""

from __future__ import annotations

from collections import Counter

from analysis.atlas import facts as F
from analysis.core.cards import span


def verdict(result) -> dict:
    """The verdict's numbers: heads per role and per family, per use, changed by fine-tuning
    (per layer), the disagreements' count, the pruning curve's share."""
    heads = result.heads()
    n = len(heads)
    by_layer = [0] * result.n_layers
    for h in heads:
        if h["changed"]:
            by_layer[h["layer"]] += 1
    mf = result.model_facts
    return {"heads": n, "roles": dict(Counter(h["role"] for h in heads)),
            "families": {f: sum(h["family"] == f for h in heads) for f in F.FAMILIES},
            "used": {u: sum(h["used"] == u for h in heads) for u in (F.YES, F.NO,
                                                                       F.NOT_MEASURED)},
            "changed": sum(bool(h["changed"]) for h in heads),
            "changed_per_layer": by_layer if "layers_cosine" in mf else None,
            "disagreements": sum(h["disagreement"] is not None for h in heads),
            "pruning": mf.get("pruning"), "frozen_layers": (mf.get("trained") or {}).get(
                "frozen", [])}


def _join(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


FAMILY_WORDS = {"positional": "positional (the previous or next token)",
                "broad": "broad (attention spread over the sentence)",
                "no-op": "no-op (resting on [SEP], [CLS] or punctuation)",
                "syntactic": "syntactic (a dependency relation, above the fixed offset)",
                "aspect": "aspect (aspect terms, above every baseline)",
                "opinion": "opinion (aspect terms with their opinion words)",
                "mixed": "mixed (two or more rules hold)"}


def reading(result) -> list[str]:
    """The model verdict in a few plain sentences."""
    v, mf, t = verdict(result), result.model_facts, result.thresholds
    n, fam = v["heads"], v["families"]
    out = []
    with_role = n - fam["none"]
    parts = [f"{fam[f]} {FAMILY_WORDS[f]}" for f in F.FAMILIES if f != "none" and fam[f]]
    out.append(f"{with_role} of the {n} heads of {result.model_name} have a role by the rules "
               "below" + (f": {_join(parts)}" if parts else "") + f"; {fam['none']} have none.")
    task = mf.get("task")
    if task is None:
        out.append("Whether the model uses its heads is not measured: it has no task head "
                   "with data to score it on (the atlas of a fine-tuned classifier, such as "
                   "the example checkpoint, measures it).")
    else:
        u = v["used"]
        out.append(f"The task uses {u[F.YES]} of the {n} heads: switching one of them off "
                   f"alone (either way) moves {task['label']} beyond its 95% interval, or "
                   f"patching it carries more than {t.carry:.0%} of the change to "
                   f"{F.CONTRAST_WORDS.get(mf.get('contrast'), 'a counterfactual')}; the other "
                   f"{u[F.NO]} can go one at a time with no loss beyond "
                   f"noise (on {task['data']}, {task['label']} {task['intact']:.1f} intact).")
        pr = mf.get("pruning")
        if pr:
            tol = f"{pr['tolerance']:g} point" + ("s" if pr["tolerance"] != 1 else "")
            line = (f"Removed together in the order of their measured use, {pr['fraction']:.0%}"
                    f" of the heads ({pr['heads']} of {n}) can go before {task['label']} "
                    f"drops more than {tol} (random orders: {pr['random_fraction']:.0%}), so "
                    f"the task rests on the other {n - pr['heads']}.")
            if pr["fraction"] >= pr["last"]:
                line += " The curve never dropped that far up to its last step."
            out.append(line)
    if "layers_cosine" in mf:
        per = v["changed_per_layer"]
        layers = [i + 1 for i, c in enumerate(per) if c]
        most = max(range(len(per)), key=lambda i: (per[i], -mf["layers_cosine"][i]))
        out.append((f"Fine-tuning changed {v['changed']} heads (before/after cosine below "
                    f"{t.changed:g}), in {'layer' if len(layers) == 1 else 'layers'} "
                    f"{span(layers)}; most in layer {most + 1} ({per[most]} heads, mean "
                    f"cosine {mf['layers_cosine'][most]:.3f})." if layers else
                    f"Fine-tuning changed no head below a cosine of {t.changed:g}.")
                   + _frozen(mf))
    d = v["disagreements"]
    if v["used"][F.NOT_MEASURED] < n:
        out.append(f"{d} head{'s' if d != 1 else ''} have a role and use that disagree (listed "
                   "below)." if d else "Every head's role and use agree: each head with a "
                   "role is used, and each used head has one (or only a no-op pattern and no "
                   "use).")
    return out


def _frozen(mf: dict) -> str:
    tr = mf.get("trained") or {}
    if tr.get("frozen_words"):
        return (f" The card says {tr['frozen_words']} were frozen by the recipe: fine-tuning "
                "could not change them, so their sameness is no finding.")
    if tr.get("kind") == "all":
        return " The card says every layer was fine-tuned."
    return ""


def disagreements(result) -> list[str]:
    """Each head whose role and use disagree, in words (:func:`analysis.atlas.facts.
    disagreement`), the largest use first."""
    heads = [h for h in result.heads() if h["disagreement"]]
    heads.sort(key=lambda h: (-(h["size"] or 0), h["layer"], h["head"]))
    return [h["disagreement"] for h in heads]
