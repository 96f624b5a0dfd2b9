"""Reading a :class:`analysis.noop.corpus.CorpusStats`: the no-op and positional heads, and a
few plain sentences computed from the numbers (docs/METHODS.md section 3, "Tables" and "The
plain reading")."""

from __future__ import annotations

import numpy as np


def noop_heads(stats, top: int = 10) -> list[dict]:
    """Heads with the most weight on [SEP] + [CLS] (1-indexed layer/head), highest first."""
    w = stats.metrics["cls"] + stats.metrics["sep"]
    rows = []
    for flat in np.argsort(-w, axis=None)[:top]:
        l, h = np.unravel_index(flat, w.shape)
        row = {"layer": int(l) + 1, "head": int(h) + 1,
               "to [CLS]": float(stats.metrics["cls"][l, h]),
               "to [SEP]": float(stats.metrics["sep"][l, h]),
               "to [CLS]+[SEP]": float(w[l, h])}
        if "norm_sep" in stats.metrics:
            row["norm share [CLS]+[SEP]"] = float(stats.metrics["norm_cls"][l, h]
                                                  + stats.metrics["norm_sep"][l, h])
        rows.append(row)
    return rows


def positional_heads(stats, threshold: float = 0.5) -> list[dict]:
    """Heads with more than ``threshold`` of their attention on the previous or next token."""
    rows = []
    for kind in ("prev", "next"):
        m = stats.metrics[kind]
        for l, h in zip(*np.nonzero(m > threshold)):
            rows.append({"layer": int(l) + 1, "head": int(h) + 1,
                         "direction": "previous" if kind == "prev" else "next",
                         "share": float(m[l, h])})
    rows.sort(key=lambda r: -r["share"])
    return rows


def _sink(stats, name: str) -> str:
    """Sentence 1: [CLS] or [SEP] as the main sink, with both means over all heads."""
    total_cls, total_sep = float(stats.metrics["cls"].mean()), float(stats.metrics["sep"].mean())
    sink = "[CLS]" if total_cls > total_sep else "[SEP]"
    other = "[SEP]" if sink == "[CLS]" else "[CLS]"
    return (f"In {name} the main attention sink is {sink}, not {other}: averaged over all "
            f"{stats.n_layers * stats.n_heads} heads, {100 * max(total_cls, total_sep):.0f}% "
            f"of attention goes to {sink} and {100 * min(total_cls, total_sep):.0f}% to {other} "
            f"({stats.n_examples} examples).")


def _special_layers(stats) -> str:
    """Sentence 2: the layers with more than half their attention on [CLS]/[SEP]."""
    special = stats.per_layer("cls") + stats.per_layer("sep")
    peak = int(np.argmax(special))
    layers_half = [i + 1 for i in range(stats.n_layers) if special[i] > 0.5]
    if not layers_half:
        return (f"No layer puts more than half its attention on [CLS]/[SEP]; the most is "
                f"layer {peak + 1} ({100 * special[peak]:.0f}%).")
    span = (f"layer {layers_half[0]}" if len(layers_half) == 1
            else f"layers {', '.join(map(str, layers_half))}")
    return (f"In {span} more than half of all attention goes to [CLS] or [SEP]; the peak "
            f"is layer {peak + 1} ({100 * special[peak]:.0f}%).")


def _norm_sentence(m) -> str | None:
    """Sentence 6: weight against norm share in the heads with over half their weight on
    [CLS]/[SEP]; a ratio below 0.6 reads as a no-op."""
    w = m["cls"] + m["sep"]
    nrm = m["norm_cls"] + m["norm_sep"]
    mask = w > 0.5
    if not mask.any():
        return None
    ratio = float(nrm[mask].mean() / w[mask].mean())
    return (f"In the {int(mask.sum())} head(s) with over half their weight on [CLS]/[SEP], "
            f"those tokens carry only {100 * nrm[mask].mean():.0f}% of the weighted value "
            f"norm against {100 * w[mask].mean():.0f}% of the weight (ratio {ratio:.2f}): "
            + ("much of that attention is a no-op." if ratio < 0.6 else
               "the weight is not mostly a no-op here."))


def reading(stats, model_name: str | None = None) -> list[str]:
    """A few plain sentences describing the result, computed from the numbers."""
    m = stats.metrics
    out = [_sink(stats, model_name or stats.model), _special_layers(stats)]
    pun_l = stats.per_layer("punct")
    pk = int(np.argmax(pun_l))
    out.append(f"Punctuation (\".\" and \",\") receives the most attention in layer {pk + 1} "
               f"({100 * pun_l[pk]:.0f}% on average).")
    n_prev = int((m["prev"] > 0.5).sum())
    n_next = int((m["next"] > 0.5).sum())
    out.append(f"{n_prev} head(s) put more than half their attention on the previous token and "
               f"{n_next} on the next token.")
    ent_last = float(m["entropy_cls"][-1].mean())
    out.append(f"The [CLS] token's attention in the last layer has entropy {ent_last:.2f} nats on "
               f"average, against {stats.uniform_entropy:.2f} for uniform attention.")
    if "norm_sep" in m:
        line = _norm_sentence(m)
        if line:
            out.append(line)
    return out
