"""A sparse autoencoder (SAE) over one layer's residual stream, its file format and its
arithmetic (docs/METHODS.md section 19).

The format (what ``python -m analysis features train`` writes and every reader takes):

- ``sae.safetensors``: ``W_enc`` [d, m], ``b_enc`` [m], ``W_dec`` [m, d], ``b_dec`` [d];
- ``card.json``: ``layer`` (as in hidden_states: 0 = the embeddings), ``k``, ``m``, ``d``,
  ``activation`` ("topk" or "relu"), ``pre_bias`` (whether ``b_dec`` is subtracted before
  encoding), ``scale`` (the constant the activations are multiplied by first; 1 if none), the
  quality numbers (``fve``, ``nmse``, ``l0``, ``dead``, ``agreement``, ``loss_recovered``), the
  corpus, the seed and the model.

Encoding is exactly ``topk(relu((x * scale - b_dec) @ W_enc + b_enc))`` (without ``b_dec``
when ``pre_bias`` is false; ``topk`` keeps each token's k largest values and zeroes the rest;
"relu" keeps every positive value), decoding ``z @ W_dec + b_dec``, which is in the scaled
units: the reconstruction of ``x`` itself is ``(z @ W_dec + b_dec) / scale``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analysis.core.errors import DataError
from analysis.core.study import json_safe

WEIGHTS = "sae.safetensors"
CARD = "card.json"
TENSORS = ("W_enc", "b_enc", "W_dec", "b_dec")
ACTIVATIONS = ("topk", "relu")
FORMAT = "attention-dashboard sae 1"


@dataclass
class SAE:
    """One dictionary: the four tensors (float32 numpy) and how to use them."""

    W_enc: np.ndarray  # [d, m]
    b_enc: np.ndarray  # [m]
    W_dec: np.ndarray  # [m, d]
    b_dec: np.ndarray  # [d]
    k: int
    layer: int
    activation: str = "topk"
    pre_bias: bool = True
    scale: float = 1.0
    card: dict = field(default_factory=dict)  # quality, corpus, seed, model, ...

    @property
    def d(self) -> int:
        return int(self.W_enc.shape[0])

    @property
    def m(self) -> int:
        return int(self.W_enc.shape[1])

    def check(self) -> "SAE":
        d, m = self.W_enc.shape
        shapes = {"b_enc": (m,), "W_dec": (m, d), "b_dec": (d,)}
        for name, shape in shapes.items():
            if tuple(getattr(self, name).shape) != shape:
                raise DataError(f"The dictionary's {name} has shape "
                                f"{tuple(getattr(self, name).shape)}, not {shape}.")
        if self.activation not in ACTIVATIONS:
            raise DataError(f"The dictionary's activation must be topk or relu, not "
                            f"{self.activation!r}.")
        if self.activation == "topk" and not 1 <= self.k <= m:
            raise DataError(f"The dictionary's k must be from 1 to {m}, not {self.k}.")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise DataError("The dictionary's scale must be a finite number above 0.")
        for name in TENSORS:
            if not np.isfinite(getattr(self, name)).all():
                raise DataError(f"The dictionary's {name} holds values that are not finite.")
        return self

    # -- arithmetic (numpy; the trainer's torch twin is analysis.features.train) ------------

    def pre_activations(self, x: np.ndarray) -> np.ndarray:
        """``(x * scale - b_dec) @ W_enc + b_enc`` [n, m] (float32)."""
        x = np.asarray(x, np.float32) * np.float32(self.scale)
        if self.pre_bias:
            x = x - self.b_dec
        return x @ self.W_enc + self.b_enc

    def encode(self, x: np.ndarray) -> np.ndarray:
        """The feature activations z [n, m] of activations ``x`` [n, d]."""
        return sparsify(self.pre_activations(x), self.k if self.activation == "topk" else None)

    def decode(self, z: np.ndarray) -> np.ndarray:
        """``z @ W_dec + b_dec`` [n, d], in the scaled units."""
        return np.asarray(z, np.float32) @ self.W_dec + self.b_dec

    def reconstruct(self, x: np.ndarray) -> np.ndarray:
        """The reconstruction of ``x`` in its own units: ``decode(encode(x)) / scale``."""
        return self.decode(self.encode(x)) / np.float32(self.scale)

    def tensors_torch(self):
        """The four tensors as float32 torch tensors (for a hook or the crosscoder)."""
        # lazy: torch takes seconds to import; the CLI checks its input first
        import torch

        return {n: torch.from_numpy(np.ascontiguousarray(getattr(self, n), np.float32))
                for n in TENSORS}

    # -- files --------------------------------------------------------------------------------

    def card_json(self) -> dict:
        return {**self.card, "format": FORMAT, "layer": int(self.layer), "k": int(self.k),
                "m": self.m, "d": self.d, "activation": self.activation,
                "pre_bias": bool(self.pre_bias), "scale": float(self.scale)}

    def save(self, folder, dtype: str = "float32") -> Path:
        """Write ``sae.safetensors`` (``dtype`` float32 or float16) and ``card.json`` into
        ``folder`` (made when missing); returns the folder."""
        # lazy: safetensors' numpy writer is small, but only the writers need it
        from safetensors.numpy import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        cast = np.float16 if dtype == "float16" else np.float32
        save_file({n: np.ascontiguousarray(getattr(self, n), cast) for n in TENSORS},
                  str(folder / WEIGHTS), metadata={"format": FORMAT})
        (folder / CARD).write_text(json.dumps(json_safe(self.card_json()), indent=1,
                                              allow_nan=False) + "\n", encoding="utf-8")
        return folder

    @classmethod
    def load(cls, folder) -> "SAE":
        """Read a dictionary folder (``sae.safetensors`` + ``card.json``); DataError (one line)
        when it is not one."""
        # lazy: the reader is only needed when a dictionary is opened
        from safetensors import SafetensorError
        from safetensors.numpy import load_file
        # lazy: the JSON caps of the corpus readers (a card may come from a visitor)
        from analysis.core.corpus.jsonsafe import loads

        folder = Path(folder)
        if not (folder / WEIGHTS).is_file() or not (folder / CARD).is_file():
            raise DataError(f"{folder} is not a dictionary folder (it needs {WEIGHTS} and "
                            f"{CARD}).")
        try:
            card = loads((folder / CARD).read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise DataError(f"{folder / CARD} is not valid JSON: {exc}") from None
        try:
            tensors = load_file(str(folder / WEIGHTS))
        except (SafetensorError, OSError, ValueError) as exc:
            raise DataError(f"{folder / WEIGHTS} is not a safetensors file: "
                            f"{str(exc).splitlines()[0] if str(exc) else exc}") from None
        return from_parts(tensors, card)


def from_parts(tensors: dict, card: dict) -> SAE:
    """An :class:`SAE` from its four tensors and its card (checked)."""
    missing = [n for n in TENSORS if n not in tensors]
    if missing:
        raise DataError(f"The dictionary lacks the tensor(s) {', '.join(missing)}.")
    if not isinstance(card, dict):
        raise DataError("The dictionary's card is not a JSON object.")
    try:
        sae = SAE(*(np.asarray(tensors[n], np.float32) for n in TENSORS),
                  k=int(card.get("k", 0)), layer=int(card["layer"]),
                  activation=str(card.get("activation", "topk")),
                  pre_bias=bool(card.get("pre_bias", True)),
                  scale=float(card.get("scale", 1.0)),
                  card={key: v for key, v in card.items() if key not in CORE_KEYS})
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"The dictionary's card lacks or garbles {exc}.") from None
    if len(sae.W_enc.shape) != 2:
        raise DataError("The dictionary's W_enc must be a matrix [d, m].")
    return sae.check()


CORE_KEYS = ("format", "layer", "k", "m", "d", "activation", "pre_bias", "scale")


def sparsify(pre: np.ndarray, k: int | None) -> np.ndarray:
    """``topk(relu(pre))`` along the last axis (``k`` None: ``relu(pre)``). Among equal values
    the lower feature index wins (a stable sort), as in the trainer."""
    z = np.maximum(np.asarray(pre, np.float32), 0.0)
    if k is None or k >= z.shape[-1]:
        return z
    idx = np.argsort(-z, axis=-1, kind="stable")[..., :k]
    out = np.zeros_like(z)
    np.put_along_axis(out, idx, np.take_along_axis(z, idx, axis=-1), axis=-1)
    return out
