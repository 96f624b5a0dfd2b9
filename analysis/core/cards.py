"""What a fine-tune trained, read from its record: the checkpoint's card (``absa_card.json``,
written by :func:`analysis.absa.pipeline.run_fine_tune`) or the same record kept in the
model's config (``config.dashboard_training``, saved with the weights, so a model fine-tuned in
the session, uploaded as a .zip or loaded from a folder carries it).

Every reading of a before/after difference (Drift, Syntax before/after, Representations'
change, Head importance) and the report's provenance ask :func:`trained_of` (a loaded model)
or :func:`trained_layers` (a card) and get a :class:`Trained`: every layer, these layers, or
unknown. A layer the recipe froze is the base model's by construction, so its sameness is
never a finding (docs/METHODS.md section 7, "What was trained").

The record: ``{"frozen_layers": k, "n_layers": L, "embeddings_trained": bool,
"word_embeddings_trained": bool}``, written by every fine-tune of this dashboard (the card's
key ``trained``). Older cards: ``frozen_layers: k`` (written only when k > 0, issue 22) or the
example recipe's ``trained_layers``; a card of this dashboard without either trained every
layer (its fine-tune had no other way).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from analysis.core.example import example_path

CARD_NAME = "absa_card.json"  # = analysis.absa.checkpoints.CARD_NAME (not imported: light)
CONFIG_KEY = "dashboard_training"  # the record's key in a model's config
MAX_CARD_BYTES = 4 << 20
ALL, SOME, UNKNOWN = "all", "some", "unknown"


def span(layers) -> str:
    """1-based layer numbers as runs: (1, 2, 3, 4) -> '1-4', (2, 4, 5) -> '2, 4-5'."""
    nums = sorted(int(x) for x in layers)
    runs: list[list[int]] = []
    for n in nums:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)


def _layers_word(layers) -> str:
    return f"layer{'s' if len(layers) != 1 else ''} {span(layers)}"


@dataclass(frozen=True)
class Trained:
    """What a fine-tune trained: ``kind`` "all" (every encoder layer), "some" (only
    ``layers``) or "unknown" (no record: ``reason`` says why)."""

    kind: str
    n_layers: int
    layers: tuple[int, ...] = ()  # 1-based trained encoder layers ("all": every one)
    embeddings: bool | None = None  # the embeddings trained (None: unknown)
    word_table: bool | None = None  # the word-embedding table trained (None: unknown)
    reason: str = ""

    @property
    def known(self) -> bool:
        return self.kind != UNKNOWN

    @property
    def frozen(self) -> tuple[int, ...]:
        """1-based encoder layers the recipe froze (none when all or unknown)."""
        if self.kind != SOME:
            return ()
        return tuple(i for i in range(1, self.n_layers + 1) if i not in self.layers)

    def is_frozen(self, layer: int) -> bool:
        """Whether 1-based ``layer`` (0 = the embeddings) kept the base model's weights by the
        recipe (False when unknown: nothing is known to be frozen)."""
        if layer == 0:
            return self.embeddings is False
        return layer in self.frozen

    def frozen_words(self) -> str:
        """'the embeddings and layers 1-4' ('' when nothing is known to be frozen)."""
        parts = (["the embeddings"] if self.embeddings is False else []) + (
            [_layers_word(self.frozen)] if self.frozen else [])
        return " and ".join(parts)

    def trained_words(self) -> str:
        """'layers 5-6 were' / 'layer 6 was' / 'every layer was': the trained part with its
        verb."""
        if self.kind == ALL:
            return "every layer was"
        return f"{_layers_word(self.layers)} {'was' if len(self.layers) == 1 else 'were'}"

    def words(self) -> str:
        """One line for a reading or the report's provenance."""
        if self.kind == UNKNOWN:
            return f"what was trained is unknown ({self.reason})"
        if self.kind == ALL:
            emb = ("embeddings included" if self.embeddings and self.word_table is not False
                   else "the word-embedding table frozen" if self.embeddings
                   else "the embeddings frozen" if self.embeddings is False
                   else "embeddings unknown")
            return f"trained layers: all {self.n_layers} ({emb})"
        return (f"trained layers: {span(self.layers)} of {self.n_layers}; "
                f"{self.frozen_words()} were frozen by the recipe")


def unknown(n_layers: int, reason: str = "the model has no fine-tuning card") -> Trained:
    return Trained(UNKNOWN, int(n_layers), reason=reason)


def training_record(frozen_layers: int, n_layers: int, word_embeddings_trained: bool = True
                    ) -> dict:
    """The record a fine-tune writes into its card (``trained``) and its model's config."""
    return {"frozen_layers": int(frozen_layers), "n_layers": int(n_layers),
            "embeddings_trained": int(frozen_layers) == 0,
            "word_embeddings_trained": bool(word_embeddings_trained and frozen_layers == 0)}


def _from_record(rec: dict, n_layers: int) -> Trained | None:
    k = rec.get("frozen_layers")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= n_layers:
        return None
    emb = rec.get("embeddings_trained", k == 0)
    words = rec.get("word_embeddings_trained", emb)
    emb = bool(emb) if isinstance(emb, bool) else k == 0
    words = bool(words) if isinstance(words, bool) else emb
    layers = tuple(range(k + 1, n_layers + 1))
    return Trained(ALL if k == 0 else SOME, n_layers, layers, emb, words)


def trained_layers(card, n_layers: int) -> Trained:
    """What the fine-tune behind ``card`` (a checkpoint's card, or None) trained of a model of
    ``n_layers`` encoder layers: every layer, these layers, or unknown (no card, or a card
    that says nothing this dashboard can read)."""
    n_layers = int(n_layers)
    if not isinstance(card, dict):
        return unknown(n_layers)
    rec = card.get("trained")
    if isinstance(rec, dict):
        got = _from_record(rec, n_layers)
        return got or unknown(n_layers, "its card's training record does not fit the model")
    if "frozen_layers" in card:
        got = _from_record({"frozen_layers": card["frozen_layers"]}, n_layers)
        return got or unknown(n_layers, "its card's frozen_layers does not fit the model")
    recipe = card.get("example_recipe")
    if isinstance(recipe, dict) and recipe.get("trained_layers") is not None:
        t = recipe["trained_layers"]
        if isinstance(t, int) and not isinstance(t, bool) and t >= 0:
            return _from_record({"frozen_layers": max(0, n_layers - t)}, n_layers)
        return unknown(n_layers, "its card's recipe does not fit the model")
    if card.get("kind") == "absa-sentence-pair":  # this dashboard's fine-tune: every layer
        return Trained(ALL, n_layers, tuple(range(1, n_layers + 1)), True, None)
    return unknown(n_layers, "its card does not say")


def card_file(spec) -> Path | None:
    """The card of a model spec: the example checkpoint's for ``"example"``, a folder's own;
    None for anything else (a hub id, the embedded model)."""
    if not spec:
        return None
    path = example_path() if str(spec) == "example" else Path(str(spec)).expanduser()
    try:
        card = path / CARD_NAME
        return card if card.is_file() else None
    except (OSError, ValueError):
        return None


def read_card_file(spec) -> dict | None:
    """The card of ``spec`` as a dict (None: no card, or one that cannot be read)."""
    card = card_file(spec)
    if card is None:
        return None
    try:
        with open(card, "rb") as fh:
            data = fh.read(MAX_CARD_BYTES + 1)
        if len(data) > MAX_CARD_BYTES:
            return None
        out = json.loads(data)
    except (OSError, ValueError):
        return None
    return out if isinstance(out, dict) else None


def trained_of(loaded, card: dict | None = None) -> Trained:
    """What was trained of a loaded model: the record in its config (every fine-tune of this
    dashboard writes it), else its ``card`` when given, else its card on disk (the example, a
    checkpoint folder), else unknown."""
    model = getattr(loaded, "model", None)
    n_layers = int(getattr(loaded, "n_layers", 0) or 0)
    rec = getattr(getattr(model, "config", None), CONFIG_KEY, None)
    if isinstance(rec, dict):
        got = _from_record(rec, n_layers)
        if got is not None:
            return got
    if card is None:
        card = read_card_file(getattr(loaded, "spec", None))
    if card is None:
        return unknown(n_layers)
    return trained_layers(card, n_layers)
