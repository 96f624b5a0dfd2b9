"""Reading a :class:`analysis.noop.corpus.CorpusStats`: the no-op and positional heads, and a
few plain sentences computed from the numbers (docs/METHODS.md section 3, "Tables" and "The
plain reading"). Every mean it states carries its 95% interval over examples where the
statistics have their squares (:meth:`CorpusStats.layer_ci`); a top layer whose interval
overlaps the runner-up's is said to be within noise of it."""

from __future__ import annotations

import numpy as np

from analysis.atlas.facts import noop_facts, roles
from analysis.noop.corpus import SPECIAL


def _pct_ci(ci) -> str:
    """`` (95% 38.1% to 41.9%)`` of an interval of shares ("" without one)."""
    if ci is None or not np.all(np.isfinite(ci)):
        return ""
    return f" (95% {100 * ci[0]:.1f}% to {100 * ci[1]:.1f}%)"


def layer_rows(stats) -> list[dict]:
    """Per layer (1-indexed), in percent: [CLS]+[SEP] and punctuation with their 95%
    intervals, and the [CLS] row's entropy in nats with its interval: the numbers the reading
    states, in its units."""
    rows = []
    cis = {k: stats.layer_ci(k) for k in (SPECIAL, "punct", "entropy_cls")}
    vals = {k: stats.per_layer(k) for k in cis}
    for i in range(stats.n_layers):
        row = {"layer": i + 1}
        for k, name, band, scale in (
                (SPECIAL, "[CLS]+[SEP] %", "[CLS]+[SEP] 95%", 100),
                ("punct", "punctuation %", "punctuation 95%", 100),
                ("entropy_cls", "[CLS] entropy (nats)", "[CLS] entropy 95%", 1)):
            places = 1 if scale == 100 else 2
            row[name] = round(scale * float(vals[k][i]), places)
            ci = cis[k]
            if ci is not None:
                row[band] = f"{scale * ci[0][i]:.{places}f} to {scale * ci[1][i]:.{places}f}"
        rows.append(row)
    return rows


def top_layer(stats, name: str) -> tuple[int, int | None, bool]:
    """(top layer, runner-up, within noise) of ``name``'s layer means (0-indexed): within
    noise when the two layers' 95% intervals overlap (False without intervals)."""
    vals = stats.per_layer(name)
    order = np.argsort(-vals, kind="stable")
    top = int(order[0])
    if len(order) < 2:
        return top, None, False
    second = int(order[1])
    ci = stats.layer_ci(name)
    if ci is None or not np.isfinite(ci[0][[top, second]]).all():
        return top, second, False
    return top, second, bool(ci[0][top] <= ci[1][second])


def _peak_words(stats, name: str, label: str) -> str:
    """``layer 3 (41%, 95% ...)``, with ``, within noise of layer 4 (40%, ...)`` when so."""
    top, second, noisy = top_layer(stats, name)
    vals, ci = stats.per_layer(name), stats.layer_ci(name)

    def one(i):
        band = (f", 95% {100 * ci[0][i]:.1f}% to {100 * ci[1][i]:.1f}%"
                if ci is not None and np.isfinite(ci[0][i]) else "")
        return f"layer {i + 1} ({100 * vals[i]:.0f}%{label}{band})"
    text = one(top)
    if noisy:
        text += f", within noise of {one(second)}"
    return text


def noop_role(stats, layer: int, head: int) -> str:
    """The head's role by the Head atlas's rules on these statistics alone (docs/METHODS.md
    section 18): positional, broad, a no-op, several ("mixed") or none."""
    facts = {"noop": noop_facts(stats.metrics, stats.uniform_entropy, int(layer), int(head))}
    return ", ".join(roles(facts)) or "none"


RANKS = {"cls+sep": ("cls", "sep"), "sep": ("sep",), "cls": ("cls",)}  # what ranks the heads


def noop_heads(stats, top: int = 10, by: str = "cls+sep") -> list[dict]:
    """Heads with the most weight on ``by`` (RANKS: [CLS]+[SEP], [SEP] alone or [CLS] alone;
    1-indexed layer/head), highest first: "which heads attend most to [SEP]" is its own
    question (issue 49: ranked by [CLS]+[SEP], the best [SEP] value shown was 3.7% while heads
    with 15% were only in the CSV)."""
    w = stats.metrics["cls"] + stats.metrics["sep"]
    key = sum(stats.metrics[k] for k in RANKS[by])
    rows = []
    for flat in np.argsort(-key, axis=None, kind="stable")[:top]:
        l, h = np.unravel_index(flat, w.shape)
        row = {"layer": int(l) + 1, "head": int(h) + 1, "role": noop_role(stats, l, h),
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
                         "role": noop_role(stats, l, h),
                         "direction": "previous" if kind == "prev" else "next",
                         "share": float(m[l, h])})
    rows.sort(key=lambda r: -r["share"])
    return rows


def _sink(stats, name: str) -> str:
    """Sentence 1: [CLS] or [SEP] as the main sink, with both means over all heads and their
    95% intervals; within noise of each other when the intervals overlap."""
    total_cls, total_sep = stats.overall("cls"), stats.overall("sep")
    sink = "[CLS]" if total_cls > total_sep else "[SEP]"
    other = "[SEP]" if sink == "[CLS]" else "[CLS]"
    key = {"[CLS]": "cls", "[SEP]": "sep"}
    hi, lo = max(total_cls, total_sep), min(total_cls, total_sep)
    ci_hi, ci_lo = stats.overall_ci(key[sink]), stats.overall_ci(key[other])
    close = (ci_hi is not None and ci_lo is not None and np.isfinite(ci_hi[0])
             and ci_hi[0] <= ci_lo[1])
    head = (f"In {name} {sink} and {other} are the main attention sinks, within noise of each "
            f"other" if close else f"In {name} the main attention sink is {sink}, not {other}")
    return (f"{head}: averaged over all "
            f"{stats.n_layers * stats.n_heads} heads, {100 * hi:.0f}% "
            f"of attention goes to {sink}{_pct_ci(ci_hi)} and {100 * lo:.0f}% to {other}"
            f"{_pct_ci(ci_lo)} ({stats.n_examples} examples).")


def _special_layers(stats) -> str:
    """Sentence 2: the layers with more than half their attention on [CLS]/[SEP]."""
    special = stats.per_layer(SPECIAL)
    peak = _peak_words(stats, SPECIAL, "")
    layers_half = [i + 1 for i in range(stats.n_layers) if special[i] > 0.5]
    if not layers_half:
        return (f"No layer puts more than half its attention on [CLS]/[SEP]; the most is "
                f"{peak}.")
    span = (f"layer {layers_half[0]}" if len(layers_half) == 1
            else f"layers {', '.join(map(str, layers_half))}")
    return (f"In {span} more than half of all attention goes to [CLS] or [SEP]; the peak "
            f"is {peak}.")


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
    out.append("Punctuation (\".\" and \",\") receives the most attention in "
               + _peak_words(stats, "punct", " on average") + ".")
    n_prev = int((m["prev"] > 0.5).sum())
    n_next = int((m["next"] > 0.5).sum())
    out.append(f"{n_prev} head(s) put more than half their attention on the previous token and "
               f"{n_next} on the next token.")
    ent_last = float(stats.per_layer("entropy_cls")[-1])
    eci = stats.layer_ci("entropy_cls")
    band = (f" (95% {eci[0][-1]:.2f} to {eci[1][-1]:.2f})"
            if eci is not None and np.isfinite(eci[0][-1]) else "")
    out.append(f"The [CLS] token's attention in the last layer has entropy {ent_last:.2f} nats"
               f"{band} on average, against {stats.uniform_entropy:.2f} for uniform attention.")
    if "norm_sep" in m:
        line = _norm_sentence(m)
        if line:
            out.append(line)
    return out
