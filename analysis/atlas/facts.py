"""One head's facts and the words every page says about it (docs/METHODS.md section 18).

A head's *facts* are a plain dict of each study's numbers for that head, built here from what
the study's library call returned (``noop``, ``syntax``, ``aspects``, ``importance``,
``patching``, ``drift``; any of them may be missing). From the facts, with visible
:class:`Thresholds`, come its roles (:func:`roles`), its label (:func:`role_label`: one role,
"mixed" where several hold, "none" where none does), whether the task uses it (:func:`used`)
and the words (:func:`clauses`, :func:`head_statement`, :func:`disagreement`).

The other studies' plain readings name heads through :func:`head_statement` with the facts of
their own result (built by the same functions as the atlas's), so a head is described in the
same words, with the same numbers, wherever it is named. Plain numbers in, words out: this
module imports no study (.importlinter lets the studies' readings import it, and nothing else
of the atlas)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Mapping, Sequence

import numpy as np

NOOP_KEYS = ("cls", "sep", "punct", "self", "prev", "next", "entropy")
KIND_ROLES = {"aspect": "aspect", "aspect_sentiment": "opinion"}  # Aspect heads kind -> role
ASPECT_WORDS = {"aspect": "aspect terms", "aspect_sentiment": "aspect terms or opinion words",
                "opposite": "the other aspect's terms", "noop": "[SEP] when the aspect is absent"}
TOP_RANKED = 3  # the top-ranked aspect heads other pages mark (Head importance, patching)
METHOD_WORDS = {"uniform": "attention spread evenly", "mask": "output zeroed"}
CONTRAST_WORDS = {"aspect": "another aspect", "opinion": "the opposite opinion word"}
ALL_RELATIONS = "all"  # = analysis.syntax.heads.ALL: every relation together, not a role

# role families (the grid's colours), in legend order
FAMILIES = ("positional", "broad", "no-op", "syntactic", "aspect", "opinion", "mixed", "none")
NOOP_ROLES = {"sep": "[SEP] no-op", "cls": "[CLS] no-op", "punct": "punctuation no-op"}
POSITIONAL_ROLES = {"prev": "positional (previous)", "next": "positional (next)"}
BROAD = "broad"
MIXED, NONE = "mixed", "none"
YES, NO, NOT_MEASURED = "yes", "no", "not measured"


@dataclass(frozen=True)
class Thresholds:
    """The role and use rules' thresholds (docs/METHODS.md section 18), shown and adjustable
    on the page and on the command line."""

    positional: float = 0.5  # share of attention on the previous (or next) token, above
    broad: float = 0.9  # mean entropy as a share of even attention's (log n), at least
    noop: float = 0.5  # share of attention on [SEP], [CLS] or . and , above
    syntax: float = 0.15  # accuracy above the best fixed offset's, at least
    syntax_min: int = 10  # dependents a relation needs to count
    changed: float = 0.95  # before/after cosine below which fine-tuning changed the head
    carry: float = 0.1  # patching: a corpus share above this, its 95% interval above 0

    @classmethod
    def from_dict(cls, data: Mapping | None) -> "Thresholds":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in known})

    def to_dict(self) -> dict:
        return asdict(self)


DEFAULT = Thresholds()


def head_name(layer: int, head: int) -> str:
    """``4-3``: layer 4, head 3, counted from 1 as every page shows them."""
    return f"{int(layer) + 1}-{int(head) + 1}"


def _finite(*xs) -> bool:
    return all(x is not None and math.isfinite(float(x)) for x in xs)


def _at(a, layer: int, head: int):
    v = np.asarray(a, dtype=np.float64)[layer, head]
    return float(v) if np.ndim(v) == 0 else [float(x) for x in v]


def _pct(x: float) -> str:
    return f"{round(100 * x) + 0:.0f}%"  # + 0: no "-0%"


# ---------------------------------------------------------------------------------------------
# Facts from each study's numbers (the atlas's and the readings' one way of taking them)


def noop_facts(metrics: Mapping, uniform_entropy: float | None, layer: int, head: int) -> dict:
    """No-op statistics of one head: its mean shares and entropy over the corpus
    (``CorpusStats.metrics`` or the CLI's ``metrics``) and even attention's entropy."""
    out = {k: _at(metrics[k], layer, head) for k in NOOP_KEYS if k in metrics}
    if uniform_entropy is not None:
        out["uniform_entropy"] = float(uniform_entropy)
    return out


def syntax_facts(relations: Mapping, layer: int, head: int, min_n: int = DEFAULT.syntax_min
                 ) -> dict | None:
    """The relation one head follows best (``analysis syntax``'s ``relations``, each with
    ``n``, ``dep_to_head``, ``head_to_dep`` and ``baseline``): the largest accuracy above that
    relation's fixed-offset baseline among the relations with at least ``min_n`` dependents
    ("all" left out), in the better direction; None when no relation has enough."""
    best = None
    for rel, r in relations.items():
        if rel == ALL_RELATIONS or int(r["n"]) < min_n:
            continue
        base = float(r["baseline"]["accuracy"])
        for direction in ("dep_to_head", "head_to_dep"):
            acc = _at(r[direction], layer, head)
            if not _finite(acc):
                continue
            if best is None or acc - base > best["gap"]:
                best = {"relation": rel, "direction": direction, "accuracy": acc,
                        "baseline": base, "gap": acc - base, "n": int(r["n"])}
    return best


def aspect_facts(ranked: Mapping[str, Sequence[Mapping]], verdicts: Mapping[str, Mapping | None],
                 layer: int, head: int) -> dict:
    """Aspect heads of one head, per kind: its score with the bootstrap 95% interval, its rank
    (1 = best), the strongest baseline and whether it beats every baseline it can beat
    (``analysis.aspects.heads.kind_verdict``'s ``heads``)."""
    out = {}
    for kind, rows in ranked.items():
        for rank, r in enumerate(rows, 1):
            if (int(r["layer"]), int(r["head"])) != (layer, head):
                continue
            v = verdicts.get(kind)
            beats = bool(v) and any((int(x["layer"]), int(x["head"])) == (layer, head)
                                    for x in v["heads"])
            out[kind] = {"score": float(r["score"]), "ci": [float(r["ci_low"]),
                                                            float(r["ci_high"])],
                         "rank": rank, "n_pairs": int(r.get("n_pairs", 0)), "beats": beats,
                         "baseline": v["baseline"] if v else None,
                         "baseline_score": float(v["baseline_score"]) if v else None}
            break
    return out


def importance_facts(method: str, metric: str, label: str, higher: bool, change, ci,
                     layer: int, head: int) -> dict:
    """Head importance of one head, one way of switching it off: the metric's change (ablated
    minus intact) and its paired bootstrap 95% interval (``ImportanceResult.heads[metric]`` and
    ``heads_ci[metric]``); ``higher``: whether a higher metric is better."""
    return {"method": method, "metric": metric, "label": label, "higher": bool(higher),
            "change": _at(change, layer, head), "ci": _at(ci, layer, head)}


def patching_facts(mean, ci, contrast: str, layer: int, head: int) -> dict:
    """Causal patching of one head: its mean share of the change over the corpus pairs and the
    bootstrap 95% interval (``CorpusPatching.mean`` and ``ci``)."""
    return {"share": _at(mean, layer, head), "ci": _at(ci, layer, head), "contrast": contrast}


def drift_facts(cosine, layer: int, head: int) -> dict:
    """Fine-tuning drift of one head: the mean cosine of its maps before vs after."""
    return {"cosine": _at(cosine, layer, head)}


# ---------------------------------------------------------------------------------------------
# Rules


def roles(facts: Mapping, t: Thresholds = DEFAULT) -> list[str]:
    """Every role whose rule holds for the head, in :data:`FAMILIES` order."""
    out = []
    noop = facts.get("noop") or {}
    for key, role in POSITIONAL_ROLES.items():
        if _finite(noop.get(key)) and noop[key] > t.positional:
            out.append(role)
    u = noop.get("uniform_entropy")
    if _finite(noop.get("entropy"), u) and u > 0 and noop["entropy"] >= t.broad * u:
        out.append(BROAD)
    for key, role in NOOP_ROLES.items():
        if _finite(noop.get(key)) and noop[key] > t.noop:
            out.append(role)
    syn = facts.get("syntax")
    if syn and syn["n"] >= t.syntax_min and syn["gap"] >= t.syntax:
        out.append(f"syntactic ({syn['relation']})")
    for kind, role in KIND_ROLES.items():
        a = (facts.get("aspects") or {}).get(kind)
        if a and a["beats"] and not (role == "opinion" and "aspect" in out):
            out.append(role)
    return out


def family(role: str) -> str:
    """The role's family (its colour): positional, broad, no-op, syntactic, aspect, opinion,
    mixed or none."""
    for f in FAMILIES:
        if role.startswith(f) or (f == "no-op" and role.endswith("no-op")):
            return f
    return NONE


def role_label(found: Sequence[str]) -> str:
    """One label: the role, "mixed" where two or more hold, "none" where none does."""
    return found[0] if len(found) == 1 else MIXED if found else NONE


def _beyond(ci) -> bool:
    return _finite(*ci) and (ci[1] < 0 or ci[0] > 0)


def used(facts: Mapping, t: Thresholds = DEFAULT) -> str:
    """"yes" when switching the head off (either way) moves the task metric beyond its 95%
    interval, or when patching it carries more than ``t.carry`` of the change with an interval
    above 0; "no" when measured and neither holds; "not measured" without a task."""
    imp, pat = facts.get("importance") or {}, facts.get("patching")
    if not imp and not pat:
        return NOT_MEASURED
    hit = any(_beyond(f["ci"]) for f in imp.values())
    if pat and _finite(pat["share"], *pat["ci"]):
        hit = hit or (pat["share"] > t.carry and pat["ci"][0] > 0)
    return YES if hit else NO


def use_size(facts: Mapping) -> float | None:
    """The largest change of the task metric with the head switched off, either way (in the
    metric's units); None when not measured."""
    vals = [abs(f["change"]) for f in (facts.get("importance") or {}).values()
            if _finite(f["change"])]
    return max(vals) if vals else None


def changed(facts: Mapping, t: Thresholds = DEFAULT) -> bool | None:
    """Whether fine-tuning changed the head (cosine below ``t.changed``); None unmeasured."""
    d = facts.get("drift")
    return None if not d or not _finite(d["cosine"]) else bool(d["cosine"] < t.changed)


# ---------------------------------------------------------------------------------------------
# Words


def _importance_clause(f: Mapping) -> str:
    c, (lo, hi) = f["change"], f["ci"]
    how = METHOD_WORDS.get(f["method"], f["method"])
    if f["metric"] == "loss":
        body = f"{c:+.3f} in {f['label']}, 95% {lo:+.3f} to {hi:+.3f}"
    else:
        body = f"{c:+.1f} points of {f['label']}, 95% {lo:+.1f} to {hi:+.1f}"
    return f"{how}: {body}" + ("" if _beyond(f["ci"]) else ", within noise")


def _patching_clause(p: Mapping) -> str:
    lo, hi = p["ci"]
    band = f", 95% {_pct(lo)} to {_pct(hi)}" if _finite(lo, hi) else ""
    return (f"patched: carries {_pct(p['share'])} of the change to "
            f"{CONTRAST_WORDS.get(p['contrast'], p['contrast'])}{band}")


def _aspect_clause(kind: str, a: Mapping) -> str:
    base = (f"{'beats' if a['beats'] else 'does not beat'} the best simple rule's "
            f"{a['baseline_score']:.3f}" if a["baseline_score"] is not None
            else "no baseline to beat")
    return (f"{ASPECT_WORDS[kind]}: score {a['score']:.3f}, 95% {a['ci'][0]:.3f} to "
            f"{a['ci'][1]:.3f}, rank {a['rank']}, {base}")


NOOP_WORDS = {"sep": "[SEP]", "cls": "[CLS]", "punct": ". and ,", "prev": "the previous token",
              "next": "the next token"}


def clauses(facts: Mapping, t: Thresholds = DEFAULT, only: Sequence[str] | None = None
            ) -> list[str]:
    """The head's facts in short clauses: the evidence behind each role that holds, an aspect
    kind where it ranks among the top :data:`TOP_RANKED` or beats the baselines, each way of
    switching it off, patching and drift (``only``: those studies' clauses)."""
    want = set(only) if only is not None else None
    out = []

    def on(name: str) -> bool:
        return (want is None or name in want) and bool(facts.get(name))

    if on("noop"):
        noop = facts["noop"]
        for key, limit in (("prev", t.positional), ("next", t.positional), ("sep", t.noop),
                           ("cls", t.noop), ("punct", t.noop)):
            if _finite(noop.get(key)) and noop[key] > limit:
                out.append(f"{_pct(noop[key])} of its attention on {NOOP_WORDS[key]}")
        u = noop.get("uniform_entropy")
        if BROAD in roles({"noop": noop}, t):
            out.append(f"entropy {noop['entropy']:.2f} nats, {noop['entropy'] / u:.0%} of even "
                       "attention's")
    if on("syntax"):
        s = facts["syntax"]
        if s["n"] >= t.syntax_min and s["gap"] >= t.syntax:
            out.append(f"{s['relation']}: {_pct(s['accuracy'])} of dependents found, "
                       f"{_pct(s['baseline'])} for the best fixed offset")
    if on("aspects"):
        for kind, a in facts["aspects"].items():
            if kind in KIND_ROLES and (a["beats"] or a["rank"] <= TOP_RANKED):
                out.append(_aspect_clause(kind, a))
    if on("importance"):
        out += [_importance_clause(f) for f in facts["importance"].values()]
    if on("patching"):
        out.append(_patching_clause(facts["patching"]))
    if on("drift") and _finite(facts["drift"]["cosine"]):
        c = facts["drift"]["cosine"]
        out.append(f"cosine {c:.3f} before vs after fine-tuning"
                   + (", changed" if c < t.changed else ""))
    return out


def head_statement(layer: int, head: int, facts: Mapping, t: Thresholds = DEFAULT,
                   only: Sequence[str] | None = None) -> str:
    """``head 4-3 (clause; clause)``: how every page names a head with what it knows of it."""
    said = clauses(facts, t, only)
    return f"head {head_name(layer, head)}" + (f" ({'; '.join(said)})" if said else "")


ROLE_VERBS = {"positional (previous)": "looks at the previous token",
              "positional (next)": "looks at the next token", BROAD: "attends broadly",
              "[SEP] no-op": "rests on [SEP]", "[CLS] no-op": "rests on [CLS]",
              "punctuation no-op": "rests on . and ,", "aspect": "finds aspect terms",
              "opinion": "finds aspect terms with their opinion words"}


def role_words(found: Sequence[str]) -> str:
    """What the head does, from its roles, in words ("finds aspect terms and rests on
    [SEP]"); "" when no role holds."""
    words = [ROLE_VERBS.get(r) or f"follows the {r[len('syntactic ('):-1]} relation"
             for r in found]
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def disagreement(layer: int, head: int, facts: Mapping, t: Thresholds = DEFAULT) -> str | None:
    """The head's role and use in plain words when they disagree: a role (other than a no-op
    pattern) with no use, use with no role, or a no-op pattern the task uses; else None."""
    found, use = roles(facts, t), used(facts, t)
    if use == NOT_MEASURED:
        return None
    name = f"Head {head_name(layer, head)}"
    uses = "; ".join(clauses(facts, t, ("importance", "patching")))
    active = [r for r in found if family(r) != "no-op"]
    if active and use == NO:
        return (f"{name} {role_words(active)}, but switching it off costs nothing beyond "
                f"noise ({uses}).")
    if use == YES and not found:
        return f"{name} matters to the task ({uses}), but none of the role rules holds for it."
    if use == YES and not active:
        return (f"{name} {role_words(found)}, a pattern usually read as a no-op, yet the task "
                f"uses it: {uses}.")
    return None
