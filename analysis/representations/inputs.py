"""One input taken from labelled data, with a label per token for the colours
(docs/METHODS.md section 13, "One input from labelled data").

- ABSA: one review and a category it mentions, in the example checkpoint's format (NLI-M,
  review first: ``analysis.aspects.gold.build_pairs``); every review token gets its word's role
  for the asked category (aspect term of that category, opinion word of it, term of another
  aspect, other), the category's own tokens "asked category", [CLS]/[SEP] "special token".
- A treebank sentence: its words encoded as words (``analysis.syntax.words.encode_words``);
  every token gets its word's UPOS (a word's sub-word pieces inherit the word's tag), [CLS]/[SEP]
  "special token".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from analysis.core.encoding import Encoding
from analysis.core.errors import InputError
from analysis.absa.data import to_dataset
from analysis.representations.states import ABSA_ORDER, ABSA_TASK, _role

SPECIAL = "special token"
ASKED = "asked category"


@dataclass
class LabelledInput:
    """How to encode the input for a model, the colour name and each token's label."""

    encoder: Callable[[object], Encoding]
    colour: str  # "role" | "upos"
    labels: list[str]
    describe: str  # e.g. "ABSA sample review s001, asked about food"


def absa_categories(row: dict) -> list[str]:
    """The categories of a review's aspect terms (the ones a role colouring can ask about),
    in the order the review names them first."""
    return list(dict.fromkeys(t["category"] for t in row.get("terms") or () if t.get("category")))


def _absa_pair(tokenizer, row: dict, category: str, max_length: int):
    # lazy: keeps this module, loaded at `python -m analysis` start, light
    from analysis.aspects.gold import build_pairs
    encs, golds = build_pairs(tokenizer, to_dataset([row]), ABSA_TASK, ABSA_ORDER,
                              max_length=max_length)
    for enc, gold in zip(encs, golds):
        if gold.category == category:
            return enc, gold
    raise InputError(f"The review has no pair for the category {category!r}.")


def absa_input(loaded, row: dict, category: str) -> LabelledInput:
    """A review (a row of ABSA data) asked about ``category``, each token with its role."""
    if category not in absa_categories(row):
        raise InputError(f"The review names no aspect term of the category {category!r}; "
                         f"pick one of: {', '.join(absa_categories(row)) or 'none'}.")
    enc, gold = _absa_pair(loaded.tokenizer, row, category, loaded.max_length)
    review = set(gold.review)
    labels = [SPECIAL if s else _role(w, gold.sets) if w in review else ASKED
              for w, s in zip(enc.word_ids, enc.special)]
    return LabelledInput(
        lambda m: _absa_pair(m.tokenizer, row, category, m.max_length)[0], "role", labels,
        f"review {row.get('id', '')} of the ABSA sample, asked about {category}")


def treebank_input(loaded, row: dict) -> LabelledInput:
    """A treebank sentence (a row with ``words`` and ``upos``), each token with its word's
    UPOS."""
    # lazy: keeps this module, loaded at `python -m analysis` start, light
    from analysis.syntax.words import encode_words, needs_prefix_space

    words, upos = list(row["words"]), list(row["upos"])

    def encoder(m):
        return encode_words(m.tokenizer, words, m.max_length,
                            prefix_space=needs_prefix_space(m.tokenizer))

    enc = encoder(loaded)
    labels = [SPECIAL if s else str(upos[w - 1]) for w, s in zip(enc.word_ids, enc.special)]
    return LabelledInput(encoder, "upos", labels,
                         f"sentence {row.get('id', '')} of the treebank sample")
