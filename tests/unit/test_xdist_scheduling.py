"""The test processes take whole modules, and every Ray module in one process (tests/tiers.py's
module_scheduler, tests/conftest.py's pytest_xdist_make_scheduler): pytest-xdist's own
``loadgroup`` stopped grouping under pytest 9, which spread each module over both processes and
ran two Ray clusters at once."""

from __future__ import annotations


from tiers import module_scheduler as pytest_xdist_make_scheduler, work_unit


def test_a_module_is_one_unit_and_the_ray_modules_are_one():
    assert work_unit("tests/unit/test_pins.py::test_x") == "tests/unit/test_pins.py"
    assert work_unit("tests/unit/test_pins.py::Some::test_x[a::b]") == "tests/unit/test_pins.py"
    assert work_unit("tests/integration/test_scale_ray.py::test_noop_on_ray_equals_in_process") \
        == work_unit("tests/integration/test_child_ray.py::test_fine_tune[x]") == "ray"


def _config_with_dist(pytestconfig, dist: str):
    class Config:  # this run's configuration, as the controller sees ``--dist {dist}``
        option = pytestconfig.option

        def getvalue(self, name):
            return {"dist": dist, "tx": ["2*popen"]}.get(name) or pytestconfig.getvalue(name)

        def getoption(self, name, *default):
            return pytestconfig.getoption(name, *default)

    return Config()


def test_the_scheduler_splits_by_work_unit(pytestconfig):
    sched = pytest_xdist_make_scheduler(_config_with_dist(pytestconfig, "loadgroup"), None)
    assert sched._split_scope("tests/integration/test_scale_cli.py::test_a[nowhere-noop]") == "ray"
    assert sched._split_scope("tests/app/test_page_syntax.py::test_b[1]") == \
        "tests/app/test_page_syntax.py"


def test_other_dist_modes_keep_xdists_own_scheduler(pytestconfig):
    for dist in ("load", "loadfile", "loadscope", "worksteal"):
        assert pytest_xdist_make_scheduler(_config_with_dist(pytestconfig, dist), None) is None
