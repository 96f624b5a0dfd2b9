"""Each visitor's memory budget (issue 24, 30): the most parameters an uploaded checkpoint may
declare, and the peak memory the models one visitor holds in their sessions (uploads,
fine-tunes) may need, counted per visitor key (:class:`VisitorModels`)."""

from __future__ import annotations

import threading
import weakref
from pathlib import Path

import streamlit as st
from huggingface_hub import try_to_load_from_cache

from analysis.core.corpus.jsonsafe import loads
from analysis.core.models import LoadedModel, ModelLoadError, resolve_spec
from analysis.core.sizes import (MAX_CONFIG_BYTES, MAX_PARAMS, WEIGHT_BYTES, ModelCost,
                                 config_params, gigabytes, visitor_peak, working_bytes)
from ui.server.settings import settings
from ui.server.visitors import visitor_keys

def _listed_config(spec: str) -> dict | None:
    """The config.json of a listed model (None when it cannot be found without loading or
    downloading it, or is not a JSON object)."""
    try:
        source = Path(resolve_spec(spec)[0])
        if not source.is_dir():
            cached = try_to_load_from_cache(str(source), "config.json")
            source = Path(cached).parent if isinstance(cached, str) else None
        if source is None:
            return None
        with open(source / "config.json", "rb") as fh:
            config = loads(fh.read(MAX_CONFIG_BYTES))
        return config if isinstance(config, dict) else None
    except Exception:  # an unbuilt example, an uncached hub id, a bad config: not counted
        return None


def _listed_params(spec: str) -> int | None:
    """The parameters of a listed model from its config.json alone (None when unknown)."""
    try:
        config = _listed_config(spec)
        return config_params(config, spec) if config is not None else None
    except Exception:  # a config that names no size: not counted
        return None


def _listed_working(spec: str, tokens: int) -> int:
    try:
        config = _listed_config(spec)
        return working_bytes(config, tokens, spec) if config is not None else 0
    except Exception:  # a config that names no size: not counted
        return 0


@st.cache_resource(show_spinner=False)
def _default_upload_params(specs: tuple) -> int:
    sizes = [n for n in map(_listed_params, specs) if n]
    return 2 * max(sizes) if sizes else MAX_PARAMS


def upload_param_cap() -> int:
    """The most parameters an uploaded checkpoint may declare: the host's max_upload_params,
    else twice the largest listed model (from their configs)."""
    conf = settings()
    return conf.max_upload_params or _default_upload_params(tuple(conf.models.values()))


def _token_cap(loaded: LoadedModel | None = None) -> int:
    """The tokens per input the server's pages work on (demo mode: ``max_tokens``)."""
    return int(settings().cap("max_tokens", loaded.max_length if loaded is not None else 512))


@st.cache_resource(show_spinner=False)
def _default_visitor_bytes(specs: tuple, tokens: int, upload_params: int) -> int:
    working = max((_listed_working(spec, tokens) for spec in specs), default=0)
    return 2 * (WEIGHT_BYTES * upload_params + working)


def visitor_memory_cap() -> int:
    """The most memory (bytes) the models one visitor holds in their sessions may need at their
    peak (:func:`analysis.core.sizes.visitor_peak`): the host's ``max_visitor_mb``, else twice what
    an upload at the parameter cap would need (its weights, and the largest listed model's
    working memory at the token cap)."""
    conf = settings()
    if conf.max_visitor_mb:
        return conf.max_visitor_mb * 2**20
    return _default_visitor_bytes(tuple(conf.models.values()), _token_cap(), upload_param_cap())


def model_cost(loaded: LoadedModel) -> ModelCost:
    """What ``loaded`` costs a visitor who holds it: its weights, and its working memory at
    the server's token cap (from its config's shape)."""
    tokens = _token_cap(loaded)
    try:
        return ModelCost.of(loaded.model.config.to_dict(), loaded.n_params, tokens)
    except Exception:  # no config, or one whose shape cannot be read: its weights alone
        return ModelCost.of(None, loaded.n_params, tokens)


class VisitorModels:
    """Process-wide count of the models visitors hold in their sessions (uploads, fine-tunes),
    per visitor key, each by its :class:`ModelCost`; an entry goes when its model is
    garbage-collected (its session ended or it was replaced)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._held: dict[str, dict[int, ModelCost]] = {}

    def costs(self, visitor: str) -> list[ModelCost]:
        with self._lock:
            return list(self._held.get(visitor, {}).values())

    def held(self, visitor: str) -> int:
        """The peak memory (bytes) of the models ``visitor`` holds."""
        return visitor_peak(self.costs(visitor))

    def admit(self, visitors, cost: ModelCost, cap: int, max_params: int | None = None) -> None:
        """ModelLoadError with one line when a model of ``cost`` would take any of
        ``visitors`` (session and address keys) above ``cap`` bytes at their peak, or above
        ``max_params`` parameters where the host set that cap."""
        for v in visitors:
            costs = self.costs(v)
            need = visitor_peak([*costs, cost])
            if need > cap:
                working = (f", {gigabytes(cost.working)} more while a page works on it"
                           if cost.working else "")
                raise ModelLoadError(
                    f"Your session's models would need about {gigabytes(need)} of memory with "
                    f"this one ({gigabytes(cost.weights)} of weights{working}); this server "
                    f"allows {gigabytes(cap)} per visitor. Close other tabs that hold a model, "
                    "or reload this page to drop its models.")
            held = sum(c.params for c in costs)
            if max_params and held + cost.params > max_params:
                raise ModelLoadError(
                    f"Your session's models already hold {held / 1e6:,.1f}M parameters; with "
                    f"this one ({cost.params / 1e6:,.1f}M) they would pass this server's "
                    f"{max_params / 1e6:,.1f}M per visitor. Close other tabs that hold a "
                    "model, or reload this page to drop its models.")

    def add(self, visitors, model, cost: ModelCost) -> None:
        for v in visitors:
            with self._lock:
                self._held.setdefault(v, {})[id(model)] = cost
            weakref.finalize(model, self._drop, v, id(model))

    def _drop(self, visitor: str, key: int) -> None:
        with self._lock:
            entries = self._held.get(visitor, {})
            entries.pop(key, None)
            if not entries:
                self._held.pop(visitor, None)


@st.cache_resource(show_spinner=False)
def visitor_models() -> VisitorModels:
    return VisitorModels()


def hold_model(model, cost: ModelCost) -> None:
    """Count a session model for the current visitor (session and address)."""
    visitor_models().add(visitor_keys(), model, cost)


def admit_model(cost: ModelCost) -> None:
    """ModelLoadError unless the current visitor may hold another model of ``cost``."""
    visitor_models().admit(visitor_keys(), cost, visitor_memory_cap(),
                           settings().max_visitor_params)
