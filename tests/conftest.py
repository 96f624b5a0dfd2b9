"""Shared fixtures: the embedded default model (loaded once), tiny models of each supported
architecture built from configs (no download), and the real data folder beside the repo."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

# Tracebacks stay hidden from users (.streamlit/config.toml); tests want the details.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The app builds the example checkpoint in the background on a first start; tests that need it
# build a tiny stand-in themselves.
os.environ.setdefault("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
# The server's janitor thread (ui.server.housekeeping) collects and drops idle cache entries at
# its own times; in a test process it would race the tests of the collector and the caches.
os.environ.setdefault("DASHBOARD_JANITOR", "0")
# Exact comparisons against CPU references: the tests run the models on the CPU even on a
# machine with a GPU (analysis.core.models.pick_device).
os.environ.setdefault("DASHBOARD_DEVICE", "cpu")


# Every tier folder on sys.path (tests/tiers.py); tests/ itself is there already (apptest_util.py,
# builders.py, ...).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiers import (KEEP_LEGACY_NAVIGATION, RAY_CLUSTER_MODULES, RAY_MODULES,  # noqa: E402
                   SLOW_TESTS, SLOW_TIERS, TESTS, TIERS, module_scheduler, tier_of)

for _tier in (TESTS / t for t in TIERS):
    if str(_tier) not in sys.path:
        sys.path.insert(0, str(_tier))

# Two test processes (pytest.ini: -n 2, --dist loadgroup): each module whole in one process,
# the Ray modules (tests/tiers.py) as one unit in one process (pytest_xdist_make_scheduler
# below). xdist 3.8's own loadgroup does not group under pytest 9 (it renames node ids, which
# pytest now derives): tests were spread one by one, a module's servers and models made in
# both processes, and two Ray clusters could run at once.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    # one compute thread per process (and per server it starts): two processes share 2 cores
    os.environ.setdefault("OMP_NUM_THREADS", str(max(
        1, (os.cpu_count() or 2) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))


# Every AppTest run scans every installed distribution's metadata for Streamlit v2 component
# manifests (streamlit.components.v2.manifest_scanner, ~0.3 s a run on CI's venv); the installed
# packages do not change during a test run, so each test process scans once.
def _scan_once() -> None:
    import functools

    from streamlit.components.v2 import manifest_scanner

    if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(
            manifest_scanner.scan_component_manifests)


_scan_once()


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler for ``--dist loadgroup`` (pytest.ini): tests/tiers.py's
    ``module_scheduler``, whole modules and the Ray modules as one unit, each to one process."""
    return module_scheduler(config, log)


# The order the two processes take the modules in (pytest-xdist hands out whole modules, the
# next one to whichever process is free): the longest first, the many short unit modules last to
# fill the gaps, so that neither process waits long for the other at the end.
RUN_ORDER = {"ray": 0, "browser": 1, "integration": 2, "app": 3, "unit": 4, None: 5}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # (within the Ray unit, the modules without a cluster first: tests/tiers.py)
    items.sort(key=lambda item: (RUN_ORDER["ray" if item.path.stem in RAY_MODULES
                                           else tier_of(item.path)],
                                 item.path.stem in RAY_CLUSTER_MODULES))
    for item in items:
        module = item.path.stem
        tier = tier_of(item.path)
        if tier in SLOW_TIERS or f"{module}::{item.originalname}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        if tier == "browser":
            item.add_marker(pytest.mark.browser)
        if module in RAY_MODULES:  # (which process runs what: module_scheduler, above)
            item.add_marker(pytest.mark.ray)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """The Ray modules' shared cluster (tests/builders.py local_ray_cluster) is shut down once
    the last Ray test has run (the unit's modules run one after the other in one process), so
    that no later module, here or in a subprocess, finds it."""
    try:
        return (yield)
    finally:
        if item.path.stem in RAY_MODULES and (nextitem is None
                                              or nextitem.path.stem not in RAY_MODULES):
            from builders import stop_ray_cluster

            stop_ray_cluster()


@pytest.fixture(autouse=True)
def no_legacy_navigation(request, monkeypatch):
    """In tests/app and tests/integration, app.py's ``leave_legacy_navigation()`` (ui/common/
    legacy_pages.py) does nothing. Under AppTest every run starts in Streamlit's legacy
    pages-folder mode again (each AppTest makes a new PagesManager), so the workaround would
    rerun the first script run of every test, and that rerun drops the page chosen with
    ``switch_page``; on a real server it happens once. A test of the workaround itself puts it
    back (``monkeypatch.setattr(ui.common.frame.sidebar, "leave_legacy_navigation", ...)``)."""
    if tier_of(request.node.path) not in ("app", "integration") or \
            request.node.path.stem in KEEP_LEGACY_NAVIGATION:
        yield
        return
    import ui.common.frame.sidebar

    monkeypatch.setattr(ui.common.frame.sidebar, "leave_legacy_navigation", lambda: None)
    yield


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not available ({SHARED_DATA} is absent)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def default_model():
    from analysis.core.models import load_model

    return load_model("default")


@pytest.fixture(scope="session")
def tiny_mlm_dir(tmp_path_factory) -> str:
    """A tiny BERT with a (random, complete) masked-LM head and the default tokenizer (seeded):
    a model with a loss for the no-op gradients."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from analysis.core.models import default_model_path

    tok = AutoTokenizer.from_pretrained(default_model_path())
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=37, max_position_embeddings=128)
    folder = tmp_path_factory.mktemp("tiny-mlm")
    BertForMaskedLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    """A small fine-tuned ABSA checkpoint folder (tiny BERT, the default tokenizer, QA-M, two
    steps on 8 sentences of the sample: ``test_aspects_checkpoints.make_tiny_checkpoint``),
    made once per test process. Tests read it and never write into it."""
    from test_aspects_checkpoints import make_tiny_checkpoint

    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny-checkpoint") / "ck")


@pytest.fixture(scope="session")
def finetuned_copy(tmp_path_factory) -> Path:
    """A small fine-tuned copy of the default model (2-way classifier, six AdamW steps:
    ``test_drift_run.make_finetuned_copy``), made once per test process: the slowest
    checkpoint the tests build (about 10 s), which six modules used to build each. Tests read
    it and never write into it (copy it to change it)."""
    from test_drift_run import make_finetuned_copy

    return make_finetuned_copy(tmp_path_factory.mktemp("finetuned-copy") / "model")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """Factory: folder with a randomly initialised tiny model of ``arch`` and the default
    model's WordPiece tokenizer (seeded, so values are reproducible)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from analysis.core.models import default_model_path

    made: dict[str, Path] = {}

    def make(arch: str = "bert") -> Path:
        if arch not in made:
            torch.manual_seed(0)
            folder = tmp_path_factory.mktemp(f"tiny-{arch}")
            from builders import _tiny_config

            AutoModel.from_config(_tiny_config(arch)).save_pretrained(folder)
            AutoTokenizer.from_pretrained(default_model_path()).save_pretrained(folder)
            made[arch] = folder
        return made[arch]

    return make
