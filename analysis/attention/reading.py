"""What one head mostly does for one input, in words, from its attention map and the tokens'
metadata (the Attention page's plain reading): the previous or next token, the token itself,
[CLS] or [SEP], the other pieces or repeats of the same word, or broad attention."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BEHAVIOURS = {"prev": "the previous token", "next": "the next token", "self": "the token itself",
              "cls": "the first special token ([CLS])",
              "sep": "the separator token(s) ([SEP])", "same_word": "the same word",
              "broad": "many tokens broadly"}
MOSTLY = 0.4  # a behaviour with at least this share of attention "mostly" describes the head
BROAD = 0.75  # mean row entropy at least this share of log(n): broad attention


@dataclass
class HeadReading:
    kind: str  # a key of BEHAVIOURS, or "mixed"
    share: float  # the share of attention of that behaviour (the normalised entropy if broad)
    shares: dict  # behaviour -> mean share of attention over the query rows
    sentence: str


def _norm(tok: str) -> str:
    t = str(tok).lower().strip()
    for mark in ("##", "\u0120", "\u2581"):  # WordPiece, byte-level BPE, SentencePiece
        t = t.replace(mark, "")
    return t


def behaviour_shares(att: np.ndarray, tokens, special, word_ids=None) -> dict[str, float]:
    """Mean share of attention per query row on: the previous/next token, itself, [CLS] (a
    special token at position 0), the other special tokens ([SEP], </s>), and other pieces or
    repeats of the same word (non-special)."""
    att = np.asarray(att, dtype=float)
    n = att.shape[0]
    special = np.asarray(special, dtype=bool)
    idx = np.arange(n)
    cls_cols = special & (idx == 0)
    sep_cols = special & (idx > 0)
    norm = [_norm(t) for t in tokens]
    words = np.array([-1 if word_ids is None or word_ids[k] is None else int(word_ids[k])
                      for k in range(n)])
    _, codes = np.unique(np.array(norm, dtype=object).astype(str), return_inverse=True)
    filled = np.array([bool(t) for t in norm])
    same = ((words[:, None] == words[None, :]) & (words[:, None] >= 0)) \
        | ((codes[:, None] == codes[None, :]) & filled[:, None])
    same &= ~special[:, None] & ~special[None, :] & ~np.eye(n, dtype=bool)
    prev = np.concatenate([[0.0], np.diagonal(att, offset=-1)])  # att[i, i-1]
    nxt = np.concatenate([np.diagonal(att, offset=1), [0.0]])  # att[i, i+1]
    return {"prev": float(prev.mean()), "next": float(nxt.mean()),
            "self": float(np.diag(att).mean()),
            "cls": float(att[:, cls_cols].sum(1).mean()),
            "sep": float(att[:, sep_cols].sum(1).mean()),
            "same_word": float((att * same).sum(1).mean())}


def normalised_entropy(att: np.ndarray) -> float:
    """Mean row entropy over log(n): 0 = every row on one token, 1 = uniform attention."""
    att = np.asarray(att, dtype=float)
    n = att.shape[0]
    if n < 2:
        return 0.0
    p = np.clip(att, 1e-12, 1.0)
    return float((-(att * np.log(p)).sum(1)).mean() / np.log(n))


def head_reading(att: np.ndarray, tokens, special, word_ids=None, layer: int | None = None,
                 head: int | None = None) -> HeadReading:
    """The head's main behaviour for this input, with a sentence (layer and head 1-indexed)."""
    shares = behaviour_shares(att, tokens, special, word_ids)
    ent = normalised_entropy(att)
    who = f"Layer {layer}, head {head}" if layer and head else "This head"
    top = max(shares, key=lambda k: (shares[k], k))
    others = sorted((k for k in shares if k != top), key=lambda k: -shares[k])[:2]
    rest = ", ".join(f"{BEHAVIOURS[k]} {100 * shares[k]:.0f}%" for k in others)
    if shares[top] >= MOSTLY:
        sentence = (f"{who} mostly looks at {BEHAVIOURS[top]}: {100 * shares[top]:.0f}% of its "
                    f"attention on average over the {len(tokens)} tokens (then {rest}).")
        return HeadReading(top, shares[top], shares, sentence)
    if ent >= BROAD:
        sentence = (f"{who} spreads its attention broadly: its entropy is {100 * ent:.0f}% of "
                    f"the uniform maximum and no single behaviour takes more than "
                    f"{100 * shares[top]:.0f}% ({BEHAVIOURS[top]}).")
        return HeadReading("broad", ent, shares, sentence)
    second = others[0]
    sentence = (f"{who} has no single habit on this input: most often {BEHAVIOURS[top]} "
                f"({100 * shares[top]:.0f}%) and {BEHAVIOURS[second]} "
                f"({100 * shares[second]:.0f}%); its attention is fairly focused (entropy "
                f"{100 * ent:.0f}% of the uniform maximum).")
    return HeadReading("mixed", shares[top], shares, sentence)


def attention_reading(result, layer: int, head: int) -> HeadReading:
    """:func:`head_reading` of an :class:`analysis.attention.AttentionResult` (token level) for
    the 1-indexed ``layer`` and ``head`` -- the Attention page's plain reading."""
    enc = result.encoding
    return head_reading(result.attentions[layer - 1, head - 1], enc.tokens, enc.special,
                        enc.word_ids, layer=layer, head=head)


def _heads_list(heads: list[int]) -> str:
    words = [str(h) for h in heads]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def layer_reading(result, layer: int) -> list[str]:
    """One sentence per habit of the heads of the 1-indexed ``layer`` on this input (heads
    grouped by :func:`head_reading`'s kind, the most common habit first): the reading beside
    the head view, which shows every head of a layer."""
    enc = result.encoding
    groups: dict[str, list[tuple[int, float]]] = {}
    for h in range(result.attentions.shape[1]):
        r = head_reading(result.attentions[layer - 1, h], enc.tokens, enc.special, enc.word_ids)
        groups.setdefault(r.kind, []).append((h + 1, r.share))
    lines = []
    for kind, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        heads = _heads_list([h for h, _ in members])
        many = len(members) > 1
        if kind == "broad":
            lines.append(f"Head{'s' if many else ''} {heads} of layer {layer} spread"
                         f"{'' if many else 's'} attention broadly over the input.")
        elif kind == "mixed":
            lines.append(f"Head{'s' if many else ''} {heads} of layer {layer} "
                         f"{'have' if many else 'has'} no single habit on this input.")
        else:
            mean = sum(s for _, s in members) / len(members)
            lines.append(f"Head{'s' if many else ''} {heads} of layer {layer} mostly look"
                         f"{'' if many else 's'} at {BEHAVIOURS[kind]} ({100 * mean:.0f}% of "
                         f"{'their' if many else 'its'} attention on average).")
    return lines


def heads_table(result, layer: int | None = None) -> list[dict]:
    """Every head's habit on this input (of one 1-indexed ``layer``, or of all): layer, head,
    habit and its share, as rows for a table or a report."""
    enc = result.encoding
    layers = [layer] if layer else range(1, result.attentions.shape[0] + 1)
    rows = []
    for lay in layers:
        for h in range(result.attentions.shape[1]):
            r = head_reading(result.attentions[lay - 1, h], enc.tokens, enc.special,
                             enc.word_ids)
            rows.append({"layer": lay, "head": h + 1, "kind": r.kind,
                         "habit": BEHAVIOURS.get(r.kind, "no single habit"),
                         "share": round(float(r.share), 3)})
    return rows


def model_reading(result) -> str:
    """How many of the model's heads have each habit on this input (the model view's reading)."""
    rows = heads_table(result)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["kind"]] = counts.get(row["kind"], 0) + 1
    parts = []
    for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if kind == "broad":
            parts.append(f"{n} spread{'' if n > 1 else 's'} attention broadly")
        elif kind == "mixed":
            parts.append(f"{n} {'have' if n > 1 else 'has'} no single habit")
        else:
            parts.append(f"{n} mostly look{'' if n > 1 else 's'} at {BEHAVIOURS[kind]}")
    return f"Of the {len(rows)} heads, on this input: " + "; ".join(parts) + "."
