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


def test_waiting_units_go_to_one_process_and_busy_ones_to_the_other(pytestconfig):
    """Two processes: the first takes the Ray unit and the browser modules in the queue's
    order, the second the rest; once its kind is used up, a process takes the other kind's."""
    from collections import OrderedDict

    from tiers import waits

    assert waits("ray") and waits("tests/browser/test_browser.py")
    assert not waits("tests/integration/test_demo_mode.py") and not waits("tests/unit/test_x.py")

    sched = pytest_xdist_make_scheduler(_config_with_dist(pytestconfig, "loadgroup"), None)

    class Node:
        def __init__(self, name):
            self.gateway = type("Gateway", (), {"id": name})()
            self.sent = []

        def send_runtest_some(self, indices):
            self.sent.append(indices)

    gw0, gw1 = Node("gw0"), Node("gw1")
    units = ["tests/integration/test_a.py", "tests/unit/test_b.py", "ray",
             "tests/browser/test_c.py", "tests/app/test_d.py"]
    sched.workqueue = OrderedDict((u, {f"{u}::t": False}) for u in units)
    sched.registered_collections = {n: [f"{u}::t" for u in units] for n in (gw0, gw1)}
    sched.assigned_work = {gw1: {}, gw0: {}}  # the nodes, in any order: their ids decide
    took = {gw0: [], gw1: []}
    for node in (gw0, gw1, gw0, gw1, gw0, gw1):
        if sched.workqueue:
            sched._assign_work_unit(node)
            took[node].append(list(sched.assigned_work[node])[-1])
    assert took[gw0] == ["ray", "tests/browser/test_c.py", "tests/app/test_d.py"]
    assert took[gw1] == ["tests/integration/test_a.py", "tests/unit/test_b.py"]
