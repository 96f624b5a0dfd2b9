"""Deep links: every view's state lives in the URL so a copied link opens the same view.

A model listed in the host's settings (``ui.settings``) travels by its display name
(``model=<name>``); in demo mode that is the only way, so a link never carries a server path.
Outside demo mode another model travels as ``src=Hugging Face id`` or ``src=Local folder``
with ``model=<id or folder>``."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from analysis.models import normalise_spec
from ui.settings import settings

# Bound widgets write their visible label into the URL, so these labels are the URL values.
SOURCE_LIST, SOURCE_HUB, SOURCE_FOLDER = "Model list", "Hugging Face id", "Local folder"
SOURCES = [SOURCE_LIST, SOURCE_HUB, SOURCE_FOLDER]
MODE_SINGLE, MODE_PAIR = "One text", "Sentence pair"
MODES = [MODE_SINGLE, MODE_PAIR]


def spec_params(spec: str) -> dict:
    """Query params of the shared model picker for a spec: the listed model's name (nothing for
    the list's first, the default), else (outside demo mode only) its source and spec."""
    conf = settings()
    spec = normalise_spec(spec)
    name = conf.model_name(spec)
    if name is not None:
        return {} if name == conf.default_model else {"model": name}
    if conf.demo:
        return {}  # demo links name listed models only, never a path
    src = SOURCE_FOLDER if Path(spec).expanduser().is_dir() else SOURCE_HUB
    return {"src": src, "model": spec}


def input_params(text: str | None, pair: str | None) -> dict:
    params = {"mode": MODE_PAIR if pair is not None else MODE_SINGLE}
    if text is not None:
        params["a"] = text
    if pair is not None:
        params["b"] = pair
    return params


def attention_link(spec: str, text: str, pair: str | None = None, layer: int = 1,
                   head: int = 1, view: str = "Heatmap", level: str = "token") -> str:
    """Relative URL opening the Attention page (the app's default page) on a head; layer and
    head are 1-indexed. Relative, so it also works under a server base path."""
    params = {**spec_params(spec), **input_params(text, pair), "view": view,
              "layer": int(layer), "head": int(head)}
    if level != "token":
        params["level"] = level
    return f"./?{urlencode(params)}"
