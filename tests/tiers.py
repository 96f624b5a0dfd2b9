"""The test tiers (README, "Tests"): one folder each; tests/conftest.py marks every test by its
folder and puts every folder on sys.path (a module imports helpers from another tier's module by
its basename: ``from test_drift_run import make_finetuned_copy``).

  unit/         the library on tiny models and hand-made inputs (fast)
  app/          Streamlit AppTest of one page (fast)
  integration/  the real default model, the whole app, subprocesses, a venv, nginx, Ray (slow)
  browser/      Debian Chromium against a running server (slow, browser)

``python3 -m pytest -q -m "not slow"`` (tests/unit and tests/app without the few tests of
SLOW_TESTS) is the fast loop; ``python3 -m pytest -q`` runs every tier (what CI runs)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
TIERS = ("unit", "app", "integration", "browser")
SLOW_TIERS = frozenset({"integration", "browser"})

# The modules that start or join a local Ray cluster (``--ray auto`` joins whichever cluster
# runs on this machine), or check what happens without one: one test process runs them all
# (:func:`module_scheduler`), so that two clusters never run at once, those without a cluster
# first (tests/conftest.py), then RAY_CLUSTER_MODULES, which share one cluster
# (tests/builders.py local_ray_cluster), shut down after the last of them.
RAY_CLUSTER_MODULES = frozenset({
    "test_child_ray", "test_cli_representations", "test_jobs_cluster_ray",
    "test_jobs_cluster_ray_pages", "test_scale_ray", "test_scale_ray_more"})
RAY_MODULES = RAY_CLUSTER_MODULES | frozenset({
    "test_jobs_cluster", "test_jobs_cluster_pages", "test_scale_cli", "test_scale_cli_more"})


# The slowest tests of the fast tiers (several seconds each on an idle 2-core machine: a
# 512-token payload, gradients over every example, a timing check, four CLI runs), also marked
# ``slow`` so that ``-m "not slow"`` leaves them out; ``module::test`` (any parameters).
SLOW_TESTS = frozenset({
    "test_attention_views::test_views_payload_of_a_512_token_pair_is_under_two_megabytes",
    "test_importance_gradients::test_importance_is_the_mean_absolute_gradient_per_example",
    "test_security_json::test_the_scan_is_linear_on_the_issues_hostile_strings",
    "test_cli_aspects::test_aspects_subcommands_write_what_the_old_names_write",
})


# Modules whose AppTests run app.py's legacy-navigation workaround as a server's first run does
# (tests/conftest.py's no_legacy_navigation leaves them alone): their checks were written with
# its rerun (an emptied text box's message comes from the rerun's widget state).
KEEP_LEGACY_NAVIGATION = frozenset({"test_page_attention", "test_attention_neuron", "test_export",
                                    "test_jobs_cluster_pages", "test_security"})


def work_unit(nodeid: str) -> str:
    """The unit one test process runs whole: "ray" for the Ray modules, else the module."""
    module = nodeid.split("::", 1)[0]
    return "ray" if Path(module).stem in RAY_MODULES else module


def module_scheduler(config, log):
    """pytest-xdist's scheduler for ``--dist loadgroup`` (pytest.ini), None for other modes:
    whole modules (:func:`work_unit`), and the Ray modules as one unit, each to one process.
    xdist's own loadgroup reads the ``xdist_group`` mark by renaming each test's node id, which
    pytest 9 no longer lets a plugin do (the id is derived): with it, every module's tests were
    spread over both processes (its module-scoped models and servers made twice) and two Ray
    clusters ran at once. ``tests/unit/test_xdist_scheduling.py`` checks the scopes."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ModuleScheduling(config, log)


def tier_of(path: Path) -> str | None:
    """The tier folder a test file lies in (None for a file directly under tests/)."""
    try:
        parts = Path(path).resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[0] in TIERS else None
