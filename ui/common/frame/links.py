"""Deep links: every view's state lives in the URL so a copied link opens the same view.

A model listed in the host's settings (``ui.server.settings``) travels by its display name
(``model=<name>``); in demo mode that is the only way, so a link never carries a server path.
Outside demo mode another model travels as ``src=Hugging Face id`` or ``src=Local folder``
with ``model=<id or folder>``."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from analysis.core.models import normalise_spec
from ui.common.errors import plain
from ui.server.settings import settings

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
    """Relative URL opening the Attention page on a head; layer and head are 1-indexed.
    Relative, so it also works under a server base path."""
    params = {**spec_params(spec), **input_params(text, pair), "view": view,
              "layer": int(layer), "head": int(head)}
    if level != "token":
        params["level"] = level
    return f"./attention?{urlencode(params)}"


# ---------------------------------------------------------------------------------------------
# The link of the current view, and the Copy link button

_COPY_JS = """
export default function (component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(".cl-root");
  if (!root) {
    root = document.createElement("div");
    root.className = "cl-root";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "cl-button";
    const field = document.createElement("input");
    field.className = "cl-field";
    field.readOnly = true;
    field.setAttribute("aria-label", "Link to this view");
    const said = document.createElement("span");
    said.className = "cl-said";
    said.setAttribute("role", "status");
    root.append(button, field, said);
    parentElement.appendChild(root);
    button.addEventListener("click", async () => {
      const url = window.location.href;
      field.value = url;
      field.style.display = "inline-block";
      try {
        await navigator.clipboard.writeText(url);
        said.textContent = root.dataset.copied;
      } catch (e) {
        field.select();
        said.textContent = root.dataset.select;
      }
    });
  }
  root.querySelector(".cl-button").textContent = data.label;
  root.dataset.copied = data.copied;
  root.dataset.select = data.select;
}
"""
_COPY_CSS = """
.cl-root{display:flex;flex-wrap:wrap;align-items:center;gap:8px;font-family:inherit}
.cl-button{font:inherit;font-size:.9rem;padding:4px 12px;border-radius:8px;cursor:pointer;
 border:1px solid rgba(49,51,63,.25);background:transparent;color:inherit;white-space:nowrap}
.cl-button:hover{border-color:#ff4b4b;color:#ff4b4b}
.cl-field{display:none;flex:1 1 260px;min-width:0;max-width:100%;font-size:.8rem;padding:3px 6px;
 border:1px solid rgba(49,51,63,.2);border-radius:6px;background:transparent;color:inherit}
.cl-said{font-size:.8rem;opacity:.75}
"""
_COPY = None

CANNOT_CARRY = ("The link cannot carry {what}: it stays in this browser session. Someone who "
                "opens the link sees the page's default instead.")


def copy_link(key: str = "copy_link", note: str | None = None) -> None:
    """A "Copy link" button: copies the browser's address of the current view (every control
    bound to the URL is in it) to the clipboard, and shows it in a box to copy by hand where
    the browser refuses. ``note`` (e.g. :data:`CANNOT_CARRY` filled in) says what the link
    cannot carry. The labels travel as data: the component sets them as text."""
    global _COPY
    if _COPY is None:
        _COPY = st.components.v2.component("copy_link", js=_COPY_JS, css=_COPY_CSS)
    _COPY(key=key, data={"label": "Copy link", "copied": "Link copied.",
                         "select": "Select the link and copy it (Ctrl+C)."})
    if note:
        st.caption(plain(note))


def page_link(page: str, params: dict | None = None) -> str:
    """The link of ``page`` (its url_path; "" for the app's first page, the Head atlas) with
    ``params`` (default: the current URL's query params): under the host's ``public_url``
    (the settings file) when there is one, else relative to the app ("./page?query"). Never
    the address the server happens to be reached at here (127.0.0.1:PORT on the host's own
    machine), which a collaborator could not open."""
    if params is None:
        params = st.query_params.to_dict()
    query = urlencode(params)
    rel = f"{page}?{query}" if query else page
    public = settings().public_url
    return f"{public}/{rel}" if public else f"./{rel}"


def folder_note(*values: str) -> str | None:
    """Outside demo mode, a model named by a folder path: a link carries the path, which opens
    the same view only on this machine (a listed model's name or a hub id works anywhere)."""
    conf = settings()
    if conf.demo:  # demo links name listed models only; nothing typed is looked up on disk
        return None
    for v in values:
        v = (v or "").strip()
        if v and v not in conf.models and Path(v).expanduser().is_dir():
            return ("This link names a model by a folder on this server, so it opens the same "
                    "view only here. Use a listed model's name or a hub id for a link that "
                    "works elsewhere.")
    return None
