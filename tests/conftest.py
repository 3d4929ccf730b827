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
