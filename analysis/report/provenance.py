"""Where a finding came from: the model by name with a hash of its weights, the data by name and
size, the settings, the package versions and the date -- so a reader of a report can tell
whether two reports speak of the same model and data."""

from __future__ import annotations

import hashlib
import platform
from importlib import metadata
from analysis.core.cards import trained_of

PACKAGES = ("torch", "transformers", "numpy", "scipy", "pandas", "datasets", "altair",
            "vl-convert-python", "streamlit")


def weights_hash(model) -> str:
    """SHA-256 over the model's parameters and buffers (names, dtypes, shapes and bytes, in name
    order): equal for equal weights whatever the folder or hub id they came from."""
    h = hashlib.sha256()
    state = model.state_dict()
    for name in sorted(state):
        t = state[name].detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}".encode())
        if t.numel():
            h.update(t.view(-1).view(dtype=__import__("torch").uint8).numpy().tobytes())
    return h.hexdigest()


def package_versions() -> dict[str, str]:
    """Python and the installed versions of the packages the numbers depend on."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def model_source(loaded, weights: str | None = None) -> dict[str, str]:
    """A finding's model lines: its display name, shape, weights hash (``weights`` when
    already known, else computed) and what its fine-tune trained, from its card or config
    record (:func:`analysis.core.cards.trained_of`: "trained layers: 5-6 of 6; the embeddings and
    layers 1-4 were frozen by the recipe", "trained layers: all 6 (embeddings included)",
    or "what was trained is unknown (...)")."""
    return {"model": loaded.name,
            "architecture": f"{loaded.model_type}, {loaded.n_layers} layers x "
                            f"{loaded.n_heads} heads",
            "weights sha256": weights or model_weights_hash(loaded.model),
            "fine-tuning": trained_of(loaded).words()}


def model_weights_hash(model) -> str:
    """:func:`weights_hash` once per model object, kept on the object itself: a model trained
    or loaded again is a new object (fine-tuning works on a copy), so two models never share
    a hash because they share a name (every in-session fine-tune is called "fine-tuned")."""
    cached = getattr(model, "_provenance_weights_sha256", None)
    if cached is None:
        cached = weights_hash(model)
        object.__setattr__(model, "_provenance_weights_sha256", cached)
    return cached


def data_source(name: str, size: int | None = None, unit: str = "examples") -> dict[str, str]:
    return {"data": name if size is None else f"{name} ({size} {unit})"}
