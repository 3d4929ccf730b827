"""The one Python Lloyd driver (``cclust._lloyd``): the engine's stop rule by name, the restart
rule, and the driver over in-memory row blocks against the compiled engine."""
import numpy as np
import pytest

from cclust import _engine, _lloyd
from cclust._blocks import InMemoryRunner
from cclust._dense_blocks import DenseBlocks
from cclust._lloyd import Verdict, best_of_restarts


def test_verdict_names_are_the_engines_codes():
    kernel = _engine._kernel()
    assert Verdict.MAX_ITER == kernel.STOP_MAX_ITER
    assert Verdict.ROSE == kernel.STOP_ROSE


@pytest.mark.parametrize("it, objective, previous, moved, max_iter, tol, expected", [
    (0, 5.0, 0.0, 3, 10, 0.0, Verdict.GO_ON),       # the first pass never rises nor settles
    (2, 4.0, 5.0, 3, 10, 0.0, Verdict.GO_ON),
    (2, 4.0, 5.0, 0, 10, 0.0, Verdict.STABLE),
    (2, 4.9, 5.0, 3, 10, 0.1, Verdict.TOL),          # fell by 0.1 < 0.1 * 5
    (2, 5.5, 5.0, 3, 10, 0.0, Verdict.ROSE),
    (10, 4.0, 5.0, 3, 10, 0.0, Verdict.MAX_ITER),
], ids=["first-pass", "goes-on", "stable", "tol", "rose", "max-iter"])
def test_verdict(it, objective, previous, moved, max_iter, tol, expected):
    assert _lloyd.verdict(it, objective, previous, moved, max_iter, tol) is expected


@pytest.mark.parametrize("scores, higher, expected", [
    ([3.0, 1.0, 1.0, 2.0], False, 1),
    ([1.0, 3.0, 3.0, 2.0], True, 1),
    ([2.0], False, 0),
    ([(False, 9.0), (True, 1.0), (True, 1.0)], True, 1),
], ids=["lowest-first-of-ties", "highest-first-of-ties", "one-run", "tuple-scores"])
def test_best_of_restarts_keeps_the_first_of_the_best(scores, higher, expected):
    calls = []

    def run(i):
        calls.append(i)
        return i

    best, got = best_of_restarts(run, len(scores), score=lambda i: scores[i], higher_is_better=higher)
    assert best == expected
    assert got == scores
    assert calls == list(range(len(scores)))


def _engine_kmeans(X, k, seed, n_init, max_iter):
    """The compiled engine's k-means as the transfer cut runs it: k-means++ with one candidate,
    labels_from_seeds, lloyd with tol = 0, the lowest objective of n_init runs (first on ties)."""
    rng = np.random.default_rng(seed)
    space = _engine.MixedSpace.dense(X)
    runs = []
    for _ in range(n_init):
        seeds = _engine.seed_objects(space, k, "k-means++", rng, 1, n_trials=1)
        start = _engine.labels_from_seeds(space, seeds, 1)
        runs.append(_engine.lloyd(space, start, k, max_iter=max_iter, tol=0.0, n_threads=1))
    return min(runs, key=lambda run: run.objective)


@pytest.mark.parametrize("case", ["blobs", "duplicates"])
def test_driver_on_in_memory_row_blocks_is_the_engine_bit_for_bit(case):
    # Two blocks of rows (the first of 4096) run by the Python driver, k-means++ draw and reseed
    # included, give the labels and objective of the compiled engine's own loop.
    rng = np.random.default_rng(3)
    if case == "blobs":
        X = rng.normal(size=(6000, 4)) + rng.integers(0, 4, size=(6000, 1)) * 3.0
        k, n_init, max_iter = 5, 2, 30
    else:  # 5 distinct points, 8 clusters: empty clusters and repeated k-means++ draws
        X = rng.normal(size=(5, 2))[rng.integers(0, 5, size=6000)]
        k, n_init, max_iter = 8, 2, 10
    X = np.ascontiguousarray(X)
    starts = np.array([0, 4096, X.shape[0]], dtype=np.int64)
    blocks = [np.ascontiguousarray(X[a:b]) for a, b in zip(starts[:-1], starts[1:])]
    labels, objective = DenseBlocks(blocks, starts, InMemoryRunner()).kmeans(k, np.random.default_rng(11), n_init,
                                                                            max_iter)
    expected = _engine_kmeans(X, k, 11, n_init, max_iter)
    np.testing.assert_array_equal(np.concatenate(labels), expected.labels)
    assert objective == expected.objective
