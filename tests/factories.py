"""Small ensembles, comparisons and stand-ins shared by the tests."""
import contextlib
import io
import os
from pathlib import Path

import numpy as np
import pytest

import cclust
import cclust.testing


class FakeTerminal(io.StringIO):
    """A stderr stand-in that says it is a terminal, so progress bars are drawn into it."""

    def isatty(self):
        return True


def same_partition(a, b):
    """Equal up to renaming the clusters."""
    return cclust.get("ari")(a, b) == pytest.approx(1.0)


def noisy_labels_with_truth(rng, n=40, r=6, k=3, missing=0.0, noise=0.3):
    """(label matrix, truth): r partitions that copy a k-cluster truth modulo K_i, with noise.

    A fraction ``noise`` of each partition is relabelled at random and a fraction ``missing``
    set to -1 (the first partition keeps every object).
    """
    truth = np.repeat(np.arange(k), n // k + 1)[:n]
    cols = []
    for _ in range(r):
        ki = int(rng.integers(2, k + 3))
        col = np.where(rng.random(n) < noise, rng.integers(0, ki, size=n), truth % ki)
        if missing:
            col = np.where(rng.random(n) < missing, -1, col)
        cols.append(col)
    L = np.column_stack(cols)
    L[:, 0] = np.where(L[:, 0] < 0, 0, L[:, 0])
    return L, truth


def noisy_labels(rng, **kwargs):
    """The label matrix of :func:`noisy_labels_with_truth`."""
    return noisy_labels_with_truth(rng, **kwargs)[0]


def random_memberships(n, ks, seed, power=2):
    """One random soft partition (n x K rows summing to one) per K in ``ks``; ``power`` > 1 makes
    the memberships more decided."""
    rng = np.random.default_rng(seed)
    mats = []
    for k in ks:
        U = rng.random((n, k)) ** power
        mats.append(U / U.sum(1, keepdims=True))
    return mats


def noisy_refinements(n, r, seed=0, shuffled=False, k_high=40):
    """``(X, Ensemble)`` of :func:`cclust.testing.noisy_refinements` with K_i in [8, k_high]."""
    X, _, ensemble = cclust.testing.noisy_refinements(n, r, k_range=(8, k_high), shuffled=shuffled, seed=seed)
    return X, ensemble


def random_labels(rng, n, ks, missing=0.0):
    """int32 labels of n objects, partition j uniform on ``ks[j]`` labels; a fraction ``missing``
    of them -1, every object labelled by at least one partition."""
    labels = np.column_stack([rng.integers(0, k, size=n) for k in ks]).astype(np.int32)
    if missing:
        labels[rng.random(labels.shape) < missing] = -1
        labels[(labels < 0).all(axis=1), 0] = 0
    return labels


@contextlib.contextmanager
def dask_process_cluster():
    """A local Dask cluster of two one-thread worker processes, closed on exit.

    Its workers (and a nanny's restart of a killed one) are forked from a server process that
    imported Dask's dependencies and cclust's Dask routes once ("forkserver", as distributed's
    own tests run), where the platform has it, else spawned (Dask's default): each spawned
    worker imports Dask and cclust again, about a second of CPU, and a worker forked from a
    server that imported only distributed's list (its default) still imports dask.array and
    cclust on its first task, about half of that. How a worker process starts is not what the
    tests check.

    The server must import the cclust this process imported. Python 3.11's forkserver imports
    its preload list with the path of a fresh ``python -c`` (the working directory first), not
    with this process's path, so from a checkout's root it would import the checkout's sources
    instead of an installed cclust: it is started in the directory that holds the imported
    cclust (the workers then move to this process's working directory, as a spawned one does)."""
    import multiprocessing
    from multiprocessing import forkserver

    import dask
    import distributed
    from distributed.utils import get_mp_context

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        if method == "forkserver":
            # distributed names its preload list on its first call (after which it leaves the
            # list alone); the list is read when the server starts
            get_mp_context().set_forkserver_preload(["distributed", "dask.array", "cclust.dask"])
            here = os.getcwd()
            os.chdir(Path(cclust.__file__).resolve().parents[1])
            try:
                forkserver.ensure_running()
            finally:
                os.chdir(here)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
        try:
            yield cluster
        finally:
            cluster.close()
