"""Thread safety beyond the kit's per-method check (check_consensus_thread_safety):

* one Ensemble object shared by many threads at once (its lazily filled caches: one-hot,
  co-association, cluster sizes) gives every thread what a fresh Ensemble gives;
* different consensus methods, generators and metrics running side by side, each with its
  compiled core's own threads (n_jobs = 2) inside Python threads;
* the results equal the same calls made one after another, exactly.

Every comparison is of values, never of timings.
"""
import threading
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.registry import method_info
from cclust.testing import blob_partitions

N_THREADS = 6


def _together(jobs):
    """Run zero-argument callables from N_THREADS Python threads started at one barrier."""
    barrier = threading.Barrier(len(jobs))

    def one(job):
        barrier.wait(timeout=60)
        return job()

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        return list(pool.map(one, jobs))


def _dense(matrix):
    return matrix.toarray() if hasattr(matrix, "toarray") else np.asarray(matrix)


def test_a_shared_ensemble_fills_its_caches_right():
    _, _, labels = blob_partitions(4)
    expected_co = Ensemble(labels).coassociation()
    expected_onehot = _dense(Ensemble(labels).one_hot())
    expected_sizes = Ensemble(labels).cluster_sizes
    for _ in range(3):
        shared = Ensemble(labels)  # fresh caches each round, filled concurrently
        jobs = [shared.coassociation, shared.one_hot, lambda shared=shared: shared.cluster_sizes] * 2
        results = _together(jobs)
        for job_result, kind in zip(results, ["co", "onehot", "sizes"] * 2):
            if kind == "co":
                np.testing.assert_array_equal(job_result, expected_co)
            elif kind == "onehot":
                np.testing.assert_array_equal(_dense(job_result), expected_onehot)
            else:
                np.testing.assert_array_equal(job_result, expected_sizes)


METHODS = ["kcc", "ivc", "ipvc", "voting", "eac", "cspa", "mcla", "addremadd", "em-mixture", "wosp"]


def _call(name, ensemble, X, seed):
    fn = cclust.get(name)
    kwargs = {"X": X} if method_info(fn).requires_X else {}
    return fn(ensemble, 4, random_state=seed, **kwargs).labels


def test_many_methods_on_one_shared_ensemble_at_once():
    X, _, labels = blob_partitions(4)
    expected = {name: _call(name, Ensemble(labels), X, 3) for name in METHODS}
    shared = Ensemble(labels)
    results = _together([lambda name=name: _call(name, shared, X, 3) for name in METHODS])
    for name, got in zip(METHODS, results):
        np.testing.assert_array_equal(got, expected[name], err_msg=name)


@pytest.mark.parametrize("name", ["ivc", "kcc", "ipc"])
def test_compiled_threads_inside_python_threads(name):
    # OpenMP teams started from several Python threads at once, each with two threads.
    _, _, labels = blob_partitions(3)
    fn = cclust.get(name)
    seeds = list(range(N_THREADS))
    expected = [fn(Ensemble(labels), 3, random_state=s, n_jobs=1).labels for s in seeds]
    results = _together([lambda s=s: fn(Ensemble(labels), 3, random_state=s, n_jobs=2).labels for s in seeds])
    for s, got, want in zip(seeds, results, expected):
        np.testing.assert_array_equal(got, want, err_msg=f"{name}, random_state={s}")


@pytest.mark.parametrize("name", sorted(cclust.available(kind="generator")))
def test_generators_from_several_threads(name):
    X, _, _ = blob_partitions(3)
    fn = cclust.get(name)
    seeds = list(range(4))
    expected = [fn(X, 3, n_partitions=4, random_state=s, n_jobs=1) for s in seeds]
    results = _together([lambda s=s: fn(X, 3, n_partitions=4, random_state=s, n_jobs=2) for s in seeds])
    for s, got, want in zip(seeds, results, expected):
        np.testing.assert_array_equal(got.labels, want.labels, err_msg=f"{name}, random_state={s}")


def test_metrics_from_several_threads():
    rng = np.random.default_rng(0)
    pairs = [(rng.integers(0, k, 500), rng.integers(0, k + 1, 500)) for k in range(2, 2 + N_THREADS)]
    names = ["ari", "nmi", "ami", "vi", "van-dongen", "accuracy", "rand"]
    expected = [[cclust.get(m)(a, b) for m in names] for a, b in pairs]
    results = _together([lambda a=a, b=b: [cclust.get(m)(a, b) for m in names] for a, b in pairs])
    assert results == expected


def _busy_processes(count):
    """``count`` child processes that keep one core each busy until killed."""
    import subprocess
    import sys

    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


@pytest.mark.skipif(not __import__("os").path.exists("/proc/loadavg"), reason="needs Linux's /proc/loadavg")
def test_blas_runs_on_one_thread_when_the_other_cores_are_busy(monkeypatch):
    import time

    threadpoolctl = pytest.importorskip("threadpoolctl")
    from cclust.graph import BLAS_TEAM_FROM, blas_team
    from cclust.validation import available_cores, busy_elsewhere, check_n_jobs

    monkeypatch.delenv("CCLUST_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cores = available_cores()
    assert check_n_jobs(None) == cores  # the compiled passes keep every core (they do not spin)
    if cores < 2:
        pytest.skip("one core: BLAS has no team to give up")
    children = _busy_processes(cores)
    try:
        deadline = time.monotonic() + 30
        while busy_elsewhere() < cores and time.monotonic() < deadline:
            time.sleep(0.05)
        assert busy_elsewhere() >= cores
        # a matrix large enough for BLAS's team on an idle machine: one thread while the others are busy
        with blas_team(2 * BLAS_TEAM_FROM):
            blas = [info for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]
            assert blas and all(info["num_threads"] == 1 for info in blas)
    finally:
        for child in children:
            child.kill()
        for child in children:
            child.wait()


def test_a_thread_setting_in_the_environment_is_the_default(monkeypatch):
    from cclust.validation import check_n_jobs, default_threads

    monkeypatch.setenv("CCLUST_NUM_THREADS", "3")
    assert default_threads() == check_n_jobs(None) == 3
    monkeypatch.delenv("CCLUST_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert check_n_jobs(None) == 5
    with pytest.raises(ValueError, match="n_jobs"):
        check_n_jobs(0)


def _pool_threads(threadpoolctl):
    return {info["filepath"]: info["num_threads"] for info in threadpoolctl.threadpool_info()}


def test_one_thread_pools_limits_what_it_is_asked_and_finds_the_libraries_once(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from cclust import validation

    with threadpoolctl.threadpool_limits(limits=2):
        before = _pool_threads(threadpoolctl)
        apis = {info["filepath"]: info["user_api"] for info in threadpoolctl.threadpool_info()}
        with validation.one_thread_pools("blas"):
            inside = _pool_threads(threadpoolctl)
            assert "blas" in apis.values() and all(inside[path] == (1 if apis[path] == "blas" else 2) for path in inside)
            found = validation._POOLS["controller"]
            with validation.one_thread_pools():
                assert validation._POOLS["controller"] is found   # no new look-up
                assert set(_pool_threads(threadpoolctl).values()) == {1}
            assert _pool_threads(threadpoolctl) == inside
            # a module imported since: its library may be a new thread pool, so they are looked up again
            monkeypatch.setitem(__import__("sys").modules, "cclust_test_new_module", types.ModuleType("m"))
            with validation.one_thread_pools():
                assert validation._POOLS["controller"] is not found
                assert set(_pool_threads(threadpoolctl).values()) == {1}
        assert _pool_threads(threadpoolctl) == before


@pytest.mark.parametrize("setting, expected", [
    ({}, "PASSIVE"),
    ({"OMP_WAIT_POLICY": ""}, "PASSIVE"),          # set to nothing: OpenMP's threads would spin
    ({"OMP_WAIT_POLICY": " "}, "PASSIVE"),
    ({"OMP_WAIT_POLICY": "active"}, "active"),     # the user's choice stays
    ({"GOMP_SPINCOUNT": "1000"}, None),             # a spin count is a choice too
    ({"GOMP_SPINCOUNT": ""}, "PASSIVE"),
], ids=["unset", "empty", "blank", "active", "spincount", "empty-spincount"])
def test_openmp_waits_passively_unless_the_user_chose_otherwise(setting, expected, monkeypatch):
    """Importing the compiled cores sets OMP_WAIT_POLICY=PASSIVE before OpenMP reads it, unless
    the environment already holds a wait policy or spin count; an empty value holds none."""
    import importlib
    import os

    import cclust._ext

    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    importlib.reload(cclust._ext)   # runs the package's set-up again; the loaded cores stay
    assert os.environ.get("OMP_WAIT_POLICY") == expected
