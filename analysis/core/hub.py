"""Whether the Hugging Face hub can be reached from here: one quick TCP connect, cached per
process, so that an offline machine fails in seconds instead of waiting through the hub
client's retries (models: :mod:`analysis.core.models`; datasets: :mod:`analysis.core.corpus.hf`)."""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

_HUB_STATE: dict = {}


def hub_reachable(timeout: float = 3.0) -> bool:
    """One quick TCP connect to the hub endpoint (``HF_ENDPOINT``, default huggingface.co),
    cached per process."""
    if "ok" not in _HUB_STATE:
        url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            socket.create_connection((url.hostname, port), timeout=timeout).close()
            _HUB_STATE["ok"] = True
        except OSError:
            _HUB_STATE["ok"] = False
    return _HUB_STATE["ok"]
