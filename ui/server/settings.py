"""Server settings: local use or the public demo, the models offered, the per-visitor caps.

Read once per process from the environment (``settings()`` is cached; tests call
``settings.cache_clear()`` after changing the environment):

``DASHBOARD_MODE``
    ``demo`` turns demo mode on (no visitor input can name, read, probe or write a server path;
    models and datasets come from the host's lists by name; heavy work is capped). Empty or
    ``local`` (the default) is local use: folders and free model / dataset ids are allowed and
    the caps are the library's own limits. Any other value is refused with one line.
``DASHBOARD_RAY_ADDRESS``
    Optional: ``auto`` or ``[ray://]HOST:PORT`` of a Ray cluster (deploy/README.md, "The app on
    a Ray cluster"); the job queue then sends the corpus studies' jobs there
    (``analysis.core.execution.cluster``). Checked with
    :func:`analysis.core.execution.raydata.check_address`; a bad value (or Ray not installed) is not
    fatal: ``ray_error`` holds one line that the page shows, and
    the jobs run in the server process as without it.
``DASHBOARD_SETTINGS``
    Optional path to a TOML file (read with ``tomllib``) in which the host adds to the above.
    Every key is optional; an unknown key or a value of the wrong type is refused with one
    line naming it::

        queue_slots = 1                # corpus jobs running at once, server-wide (>= 1)
        job_nice = 10                  # OS niceness of a running job's thread (0..19)
        cache_mb = 512                 # MiB the byte-bounded caches hold together (charts,
                                       # search indexes and searchers: ui/server/caches.py)
        visitor_cache_mb = 128         # MiB of them one visitor's entries may hold
        cache_idle_s = 120             # an entry unused this long is dropped
        max_epochs = 3                 # caps (demo mode only, unless caps_locally):
        max_examples = 300             #   corpus examples per job
        max_tokens = 256               #   tokens per input text
        max_upload_bytes = 2_097_152   #   bytes per uploaded file or pasted text (2 MB)
        max_line_chars = 2000          #   characters per line / example (longer ones cut)
        max_gradient_examples = 32     #   examples for the No-op page's gradients
        max_job_seconds = 120          #   the estimated seconds (on two idle cores) of a Search
                                       #   index or Drift job: one over it is refused up front
                                       #   with what fits (analysis/core/cost.py)
        max_upload_params = 45_000_000 #   parameters of an uploaded checkpoint (checked from
                                       #   its config and weights header before loading;
                                       #   default: twice the largest listed model)
        max_visitor_mb = 1024          #   memory (MiB) the models one visitor holds in their
                                       #   sessions (uploads, fine-tunes) may need at their
                                       #   peak: their weights and one input's working memory
                                       #   at max_tokens (analysis/core/sizes.py, from the measured
                                       #   peaks; default: twice what an upload at
                                       #   max_upload_params would need)
        max_visitor_params = 90_000_000  # optional: also a cap on those models' parameters
        max_jobs_per_visitor = 1       #   queued + running heavy jobs per visitor (per session
                                       #   and per client address)
        caps_locally = false           # true: the caps above apply outside demo mode too
        visitor_address = "connection" # how a visitor's address is told: "connection" (the
                                       # socket's peer), "forwarded" (the last address of
                                       # X-Forwarded-For: behind a proxy such as Spaces),
                                       # "off" (sessions only)
        public_url = "https://demo.example.org/dashboard"  # the address visitors open the
                                       # app at: the report's links start with it (without
                                       # it they are relative: page path and query)

        [models]                       # display name -> model spec; replaces the default list,
        "all-MiniLM-L6-v2 (embedded)" = "default"     # the first one is the default model
        "BERT base (uncased)" = "bert-base-uncased"

        [datasets."IMDB reviews"]      # Hugging Face datasets offered by name (default: none)
        id = "imdb"                    # the dataset id (in the server's cache or online)
        split = "test"                 # default "train"
        column = "text"                # default "text"
        pair = ""                      # optional pair column

Uploads: Streamlit's server-wide ``maxUploadSize`` is :data:`SERVER_UPLOAD_MB` (the largest
legitimate upload: a checkpoint .zip, about 42 MB for the example in half precision), the same
in ``.streamlit/config.toml``, ``deploy/check.py start`` (the Docker image) and the checkpoint
upload box; every other upload box and reader checks ``max_upload_bytes`` itself.

Specs in ``[models]`` are anything ``analysis.core.models.load_model`` takes (``default``,
``example``, a hub id, a server folder the host chose); visitors only ever see and send the
display names.
"""

from __future__ import annotations

import functools
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from analysis.core.errors import InputError
from analysis.core.models import normalise_spec
from analysis.core.execution.raydata import check_address

DEFAULT_MODELS = {
    "all-MiniLM-L6-v2 (embedded)": "default",
    "Example ABSA checkpoint (fine-tuned on the bundled sample)": "example",
}
SERVER_UPLOAD_MB = 50  # MiB: Streamlit's server.maxUploadSize and the checkpoint .zip box
ADDRESS_MODES = ("connection", "forwarded", "off")
DEMO_CAPS = {
    "max_epochs": 3.0,
    "max_examples": 300,
    "max_tokens": 256,
    "max_upload_bytes": 2 * 1024 * 1024,  # 2 MB as Streamlit counts (server.maxUploadSize)
    "max_line_chars": 2000,
    "max_gradient_examples": 32,
    "max_job_seconds": 120,
    "max_jobs_per_visitor": 1,
    "max_upload_params": None,   # computed: twice the largest listed model (frame.resources)
    "max_visitor_mb": None,      # computed: twice an upload at max_upload_params (frame.resources)
    "max_visitor_params": None,  # none: the memory cap above counts the visitor's models
}
_INT_KEYS = ("max_examples", "max_tokens", "max_upload_bytes", "max_line_chars",
             "max_gradient_examples", "max_job_seconds", "queue_slots", "job_nice",
             "max_jobs_per_visitor", "max_upload_params", "max_visitor_mb", "max_visitor_params")


class SettingsError(Exception):
    """The environment or the settings file is invalid (one plain line for the host)."""


@dataclass(frozen=True)
class Dataset:
    """A Hugging Face dataset the host offers by name."""

    id: str
    split: str = "train"
    column: str = "text"
    pair: str | None = None


@dataclass(frozen=True)
class Settings:
    demo: bool = False
    models: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_MODELS))
    datasets: dict[str, Dataset] = field(default_factory=dict)
    max_epochs: float | None = None
    max_examples: int | None = None
    max_tokens: int | None = None
    max_upload_bytes: int | None = None
    max_line_chars: int | None = None
    max_gradient_examples: int | None = None
    max_job_seconds: int | None = None
    max_jobs_per_visitor: int | None = None
    max_upload_params: int | None = None
    max_visitor_mb: int | None = None
    max_visitor_params: int | None = None
    visitor_address: str = "connection"
    queue_slots: int = 1
    job_nice: int = 10
    cache_mb: int = 512
    visitor_cache_mb: int = 128
    cache_idle_s: int = 120
    ray_address: str | None = None  # DASHBOARD_RAY_ADDRESS, checked
    ray_error: str | None = None    # why DASHBOARD_RAY_ADDRESS is not used (one line)
    public_url: str | None = None   # the app's public address, no trailing slash (checked)

    @property
    def default_model(self) -> str:
        """Display name of the default model (the list's first)."""
        return next(iter(self.models))

    def model_name(self, spec: str) -> str | None:
        """The display name under which ``spec`` is listed, or None (a string comparison: no
        file is looked at)."""
        spec = normalise_spec(spec)
        return next((name for name, s in self.models.items() if normalise_spec(s) == spec), None)

    @property
    def upload_mb(self) -> int | None:
        """An upload box's cap in MB (``max_upload_bytes`` rounded up; None: the server's)."""
        return -(-self.max_upload_bytes // 2**20) if self.max_upload_bytes else None

    def for_local(self, text: str) -> str:
        """``text`` (a command line, a repository path) outside demo mode, "" in demo mode:
        a demo's visitors have neither the repository nor a shell."""
        return "" if self.demo else text

    def cap(self, name: str, value):
        """``value`` limited by the cap ``name`` (unchanged when there is no cap)."""
        limit = getattr(self, name)
        return value if limit is None or value is None else min(value, limit)


def _check_type(key: str, value, kind):
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise SettingsError(f"Settings: {key} must be a whole number, not {value!r}.")
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise SettingsError(f"Settings: {key} must be a finite number, not {value!r}.")
        value = float(value)
    if kind is str and (not isinstance(value, str) or not value.strip()):
        raise SettingsError(f"Settings: {key} must be a non-empty string.")
    return value


def _models(table) -> dict[str, str]:
    if not isinstance(table, dict) or not table:
        raise SettingsError("Settings: [models] must be a table of display name = model spec.")
    return {_check_type("a model's name", k, str).strip(): _check_type(f"models.{k}", v, str)
            .strip() for k, v in table.items()}


def _datasets(table) -> dict[str, Dataset]:
    if not isinstance(table, dict):
        raise SettingsError("Settings: [datasets] must hold one table per dataset.")
    out = {}
    for name, entry in table.items():
        if not isinstance(entry, dict) or "id" not in entry:
            raise SettingsError(f"Settings: datasets.{name} needs at least an id.")
        unknown = set(entry) - {"id", "split", "column", "pair"}
        if unknown:
            raise SettingsError(f"Settings: datasets.{name} has unknown key(s) "
                                f"{', '.join(sorted(unknown))}.")
        vals = {k: _check_type(f"datasets.{name}.{k}", v, str).strip()
                for k, v in entry.items() if not (k == "pair" and v == "")}
        out[str(name).strip()] = Dataset(**vals)
    return out


def _read_file(path: str) -> dict:
    try:
        with open(Path(path).expanduser(), "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise SettingsError(f"Settings: cannot read DASHBOARD_SETTINGS={path}: "
                            f"{exc.strerror or exc}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"Settings: {path} is not valid TOML: {exc}.") from None


def _ray_address(text: str) -> dict:
    """``ray_address`` (checked) or ``ray_error``; nothing is read from Ray when unset."""
    if not text.strip():
        return {}
    try:
        return {"ray_address": check_address(text)}
    except InputError as exc:
        said = str(exc).rstrip(".")
        return {"ray_error": f"DASHBOARD_RAY_ADDRESS {said}. Heavy jobs run in the server "
                             "process instead."}


def _public_url(value) -> str:
    """The host's ``public_url``: an http(s) address with a host, without credentials, query or
    fragment; returned without its trailing slash."""
    text = _check_type("public_url", value, str).strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        parts = None
    if (parts is None or parts.scheme not in ("http", "https") or not parts.hostname
            or "@" in parts.netloc or parts.query or parts.fragment
            or any(c.isspace() or ord(c) < 32 for c in text)):
        raise SettingsError("Settings: public_url must be an http:// or https:// address "
                            "with a host and no query, such as https://demo.example.org/app.")
    return text.rstrip("/")


def load_settings(environ=None) -> Settings:
    """Settings from ``environ`` (default ``os.environ``); raises SettingsError."""
    env = os.environ if environ is None else environ
    mode = env.get("DASHBOARD_MODE", "").strip().lower()
    if mode not in ("", "local", "demo"):
        raise SettingsError(f"DASHBOARD_MODE must be 'demo' or 'local', not {mode!r}.")
    demo = mode == "demo"
    data = _read_file(env["DASHBOARD_SETTINGS"]) if env.get("DASHBOARD_SETTINGS") else {}
    known = set(DEMO_CAPS) | {"queue_slots", "job_nice", "caps_locally", "models", "datasets",
                              "visitor_address", "public_url", "cache_mb", "visitor_cache_mb",
                              "cache_idle_s"}
    unknown = set(data) - known
    if unknown:
        raise SettingsError(f"Settings: unknown key(s) {', '.join(sorted(unknown))} "
                            "(see ui/server/settings.py).")
    caps_locally = data.get("caps_locally", False)
    if not isinstance(caps_locally, bool):
        raise SettingsError("Settings: caps_locally must be true or false.")
    kw: dict = {"demo": demo}
    for key, default in DEMO_CAPS.items():
        value = _check_type(key, data[key], int if key in _INT_KEYS else float) \
            if key in data else default
        if value is None:
            continue
        if value <= 0:
            raise SettingsError(f"Settings: {key} must be above 0, not {value!r}.")
        if demo or (caps_locally and key in data):
            kw[key] = value
    for key, default, lo, hi in (("queue_slots", 1, 1, 64), ("job_nice", 10, 0, 19),
                                 ("cache_mb", 512, 16, 1 << 20),
                                 ("visitor_cache_mb", 128, 1, 1 << 20),
                                 ("cache_idle_s", 120, 1, 1 << 30)):
        value = _check_type(key, data.get(key, default), int)
        if not lo <= value <= hi:
            raise SettingsError(f"Settings: {key} must be from {lo} to {hi}, not {value}.")
        kw[key] = value
    address = data.get("visitor_address", "connection")
    if address not in ADDRESS_MODES:
        raise SettingsError(f"Settings: visitor_address must be one of {', '.join(ADDRESS_MODES)}.")
    kw["visitor_address"] = address
    if "public_url" in data:
        kw["public_url"] = _public_url(data["public_url"])
    kw.update(_ray_address(env.get("DASHBOARD_RAY_ADDRESS", "")))
    if "models" in data:
        kw["models"] = _models(data["models"])
    if "datasets" in data:
        kw["datasets"] = _datasets(data["datasets"])
    return Settings(**kw)


@functools.lru_cache(maxsize=1)
def settings() -> Settings:
    """The process's settings (cached; ``settings.cache_clear()`` re-reads the environment)."""
    return load_settings()
