import numpy as np
import pytest


@pytest.fixture(params=[0, 1, 42], ids=lambda s: f"seed{s}")
def seed(request):
    """Checks that take this fixture must pass for any seed."""
    return request.param


@pytest.fixture
def rng(seed):
    return np.random.default_rng(seed)


def pytest_configure(config):
    """Under pytest-xdist (``-n``), keep each costly shared set-up on one worker.

    xdist's default scheduling ("load") hands out a module's tests to every worker, so a module
    or cached fixture -- the Sphinx build, the bad-input catalogue's child process per family,
    the ensembles of a quality cell -- is built once per worker instead of once. Tests marked
    ``xdist_group`` go to one worker with ``--dist loadgroup``, and every other test is handed
    out one by one as under "load"; that mode is chosen here unless ``--dist`` was given.
    """
    config.addinivalue_line("markers", "xdist_group(name): run these tests on the same xdist worker")
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        # A worker parses the command line again (no --dist: "load"); it names each test's
        # group only if told, and the controller tells it (pytest_configure_node below).
        if worker.get("cclust_loadgroup"):
            config.option.loadgroup = True
        return
    args = [str(arg) for arg in config.invocation_params.args]
    chose_dist = any(arg == "--dist" or arg.startswith("--dist=") or arg == "-d" for arg in args)
    if getattr(config.option, "dist", "no") == "load" and not chose_dist:
        config.option.dist = "loadgroup"


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["cclust_loadgroup"] = node.config.getvalue("dist") == "loadgroup"



@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's "loadgroup" scheduling, without its cost per test that grows with the suite.

    Every test outside a group is a work unit of its own, and xdist 3.8 keeps each worker's
    finished units: after every test it counts the pending tests over all the units the worker
    ever had (about 8600 x 4000 steps over the suite), and it finds each test's index by a
    list search. On 8,600 empty tests under ``-n 2`` that took 38 s against 31 s for "load"
    (load average 4.6). Here a finished unit leaves the worker's list and indices come from a
    dict; which tests go to which worker, and when, is unchanged. Where xdist's internals are
    not those this expects, its own scheduler runs.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class LeanLoadGroupScheduling(LoadGroupScheduling):
        def mark_test_complete(self, node, item_index, duration=0):
            nodeid = self.registered_collections[node][item_index]
            scope = self._split_scope(nodeid)
            unit = self.assigned_work[node][scope]
            unit[nodeid] = True
            if all(unit.values()):
                del self.assigned_work[node][scope]
            self._reschedule(node)

        def _assign_work_unit(self, node):
            scope, work_unit = self.workqueue.popitem(last=False)
            self.assigned_work.setdefault(node, {})[scope] = work_unit
            if node not in self.positions:
                self.positions[node] = {nodeid: i for i, nodeid in enumerate(self.registered_collections[node])}
            node.send_runtest_some([self.positions[node][nodeid] for nodeid, done in work_unit.items() if not done])

    scheduler = LeanLoadGroupScheduling(config, log)
    expected = ("assigned_work", "registered_collections", "workqueue", "_split_scope", "_reschedule")
    if not all(hasattr(scheduler, name) for name in expected):
        return LoadGroupScheduling(config, log)
    scheduler.positions = {}
    return scheduler
