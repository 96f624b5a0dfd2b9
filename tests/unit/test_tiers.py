"""The test suite's own layout (README, "Tests"): every test module lies in one of the four tier
folders, no folder is a package (pytest imports each module by its basename, so basenames are
unique across tiers), each tier gets its markers from tests/conftest.py, and the Ray modules it
names exist (tests/tiers.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tiers import RAY_MODULES, SLOW_TESTS, SLOW_TIERS, TIERS, tier_of

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_is_in_a_tier_and_basenames_are_unique():
    assert not sorted(p.name for p in TESTS.glob("test_*.py")), "a test module outside a tier"
    assert not sorted(str(p) for p in TESTS.rglob("__init__.py"))
    modules = [p for p in TESTS.rglob("test_*.py") if "node_modules" not in p.parts]
    assert {tier_of(p) for p in modules} <= set(TIERS) and None not in {tier_of(p)
                                                                       for p in modules}
    twice = [name for name, n in Counter(p.name for p in modules).items() if n > 1]
    assert not twice, twice
    assert RAY_MODULES <= {p.stem for p in modules}
    for name in SLOW_TESTS:  # each names a test that exists, in a fast tier
        module, test = name.split("::")
        path = next(p for p in modules if p.stem == module)
        assert tier_of(path) in ("unit", "app") and f"def {test}(" in path.read_text()


def test_tier_of_reads_the_folder():
    assert tier_of(TESTS / "unit" / "test_x.py") == "unit"
    assert tier_of(TESTS / "browser" / "test_x.py") == "browser"
    assert tier_of(TESTS / "builders.py") is None
    assert tier_of(TESTS.parent / "app.py") is None


def test_the_markers_follow_the_folders(request, pytestconfig):
    assert request.node.get_closest_marker("slow") is None  # a unit test is not slow
    assert request.node.get_closest_marker("browser") is None
    markers = "\n".join(pytestconfig.getini("markers"))
    for name in ("slow:", "browser:", "ray:"):
        assert name in markers


@pytest.mark.parametrize("tier", ["integration", "browser"])
def test_slow_tiers_are_marked_slow(tier):
    assert tier in SLOW_TIERS and "unit" not in SLOW_TIERS and "app" not in SLOW_TIERS
