"""Tests of cclust-example: cclust's conformance kit, the registry, and the algorithm itself."""
import itertools
from importlib import metadata

import cclust_example
import numpy as np
import pytest
from cclust_example import (
    ccpivot,
    disagreement_cost,
    merge_to,
    pivot_clustering,
    split_to,
)

import cclust
from cclust import Ensemble
from cclust.errors import ValidationError
from cclust.base import method_info
from cclust.testing import (
    blob_partitions,
    parametrize_with_checks,
    same_partition,
)


def _installed():
    try:
        metadata.distribution("cclust-example")
    except metadata.PackageNotFoundError:
        return False
    return True


needs_install = pytest.mark.skipif(
    not _installed(), reason="cclust-example is not installed: python -m pip install ./plugins/cclust-example"
)


# -- the conformance kit -------------------------------------------------------------------------

# The pivots are drawn by position, so reordering the objects changes the result beyond a
# permutation (same distribution, other draw): the kit checks object order only where the answer
# is unambiguous. (ccpivot does not declare object_order itself yet; see docs/development.md.)
OPTIONS = {"object_order": "distribution"}


@parametrize_with_checks([ccpivot], kind="consensus", options={ccpivot: OPTIONS})
def test_conformance(obj, check):
    check(obj)


@needs_install
def test_registered_through_the_entry_point():
    cclust.registry.refresh()
    row = cclust.available(kind="consensus")["ccpivot"]
    assert row.provider == "cclust-example"
    assert row.target == "cclust_example:ccpivot"
    fn = cclust.get("ccpivot")
    assert fn.__module__ == "cclust_example" and fn.__name__ == "ccpivot"
    assert method_info(fn).chooses_n_clusters


def test_declared_metadata():
    info = method_info(ccpivot)
    assert info.chooses_n_clusters and info.handles_missing and not info.requires_X


# -- the algorithm against brute force -----------------------------------------------------------

def brute_cost(A, labels):
    n = len(labels)
    return sum((1 - A[x, y]) if labels[x] == labels[y] else A[x, y]
               for x, y in itertools.combinations(range(n), 2))


def brute_pivot(A, order):
    labels = [-1] * A.shape[0]
    k = 0
    for p in order:
        if labels[p] >= 0:
            continue
        labels[p] = k
        for y in range(A.shape[0]):
            if labels[y] < 0 and A[p, y] > 0.5 + 1e-9:
                labels[y] = k
        k += 1
    return labels


@pytest.mark.parametrize("seed", range(5))
def test_cost_and_pivot_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=(9, 6))
    labels[rng.random(labels.shape) < 0.2] = -1
    labels[:, 0] = rng.integers(0, 3, size=9)
    A = Ensemble(labels).coassociation()
    order = rng.permutation(9)
    pivot, k = pivot_clustering(A, order)
    assert pivot.tolist() == brute_pivot(A, order)
    assert k == pivot.max() + 1
    assert disagreement_cost(A, pivot) == pytest.approx(brute_cost(A, pivot), abs=1e-12)


def test_cost_is_average_pair_disagreement():
    # With complete partitions and equal weights the cost is the mean number of pairs on which
    # the labelling and a partition disagree (the median-partition objective / r).
    partitions = np.array([[0, 0, 1, 1, 2], [0, 0, 0, 1, 1], [1, 0, 1, 0, 1]]).T
    labelling = np.array([0, 0, 1, 1, 1])
    A = Ensemble(partitions).coassociation()

    def pair_disagreements(a, b):
        return sum((a[x] == a[y]) != (b[x] == b[y]) for x, y in itertools.combinations(range(len(a)), 2))

    mean = np.mean([pair_disagreements(labelling, partitions[:, j]) for j in range(3)])
    assert disagreement_cost(A, labelling) == pytest.approx(mean)


def test_hand_computed_example():
    ensemble = Ensemble([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]])
    result = ccpivot(ensemble, None, random_state=0)
    assert result.labels.tolist() == [0, 0, 0, 1, 1, 1]
    # Only the second partition disagrees: it separates 2 from 0 and 1 (2 pairs) and joins it
    # with 3, 4 and 5 (3 pairs): 5 pair disagreements in 3 partitions.
    assert result.objective == pytest.approx(5 / 3)
    assert result.method == "ccpivot" and result.n_iter == 10
    assert result.extras["n_pivot_clusters"] == 2


def test_best_of_n_init_is_no_worse_than_one_pivot_order():
    _, _, labels = blob_partitions(4)
    noisy = labels.copy()
    rng = np.random.default_rng(5)
    moved = rng.random(noisy.shape) < 0.4
    noisy[moved] = rng.integers(0, 4, size=int(moved.sum()))
    ensemble = Ensemble(noisy)
    many = ccpivot(ensemble, None, n_init=20, random_state=3)
    A = ensemble.coassociation()
    rng = np.random.default_rng(3)
    costs = [disagreement_cost(A, pivot_clustering(A, rng.permutation(A.shape[0]))[0]) for _ in range(20)]
    assert len(set(costs)) > 1, "pivot orders should matter on this noisy ensemble"
    assert many.extras["pivot_cost"] == pytest.approx(min(costs))
    assert many.objective == pytest.approx(min(costs))


def test_merge_to_is_greedy_average_linkage():
    # Co-association of four singletons: {0,1} closest (0.9), then {2,3} (0.8), then 0.1 across.
    A = np.array([[1.0, 0.9, 0.1, 0.1],
                  [0.9, 1.0, 0.1, 0.1],
                  [0.1, 0.1, 1.0, 0.8],
                  [0.1, 0.1, 0.8, 1.0]])
    assert merge_to(A, np.arange(4), 3).tolist() == [0, 0, 1, 2]
    assert merge_to(A, np.arange(4), 2).tolist() == [0, 0, 1, 1]
    assert merge_to(A, np.arange(4), 1).tolist() == [0, 0, 0, 0]
    # Average, not single linkage: {0,1} vs 2 averages (0.6 + 0.0) / 2 = 0.3 < 0.35 for 2 vs 3.
    B = np.array([[1.0, 0.9, 0.6, 0.0],
                  [0.9, 1.0, 0.0, 0.0],
                  [0.6, 0.0, 1.0, 0.35],
                  [0.0, 0.0, 0.35, 1.0]])
    assert merge_to(B, np.array([0, 0, 1, 2]), 2).tolist() == [0, 0, 1, 1]


def test_split_to_bisects_the_cheapest_cluster():
    # One cluster {0..3} whose halves {0,1} and {2,3} co-associate at 0.6, and a tight {4,5}.
    A = np.full((6, 6), 0.0)
    A[:4, :4] = 0.6
    A[0, 1] = A[1, 0] = A[2, 3] = A[3, 2] = 1.0
    A[4:, 4:] = 1.0
    np.fill_diagonal(A, 1.0)
    labels = np.array([0, 0, 0, 0, 1, 1])
    out = split_to(A, labels, 3)
    assert same_partition(out, [0, 0, 2, 2, 1, 1])
    assert split_to(A, labels, 6).max() == 5


@pytest.mark.parametrize("n_clusters", [1, 2, 3, 4, 6, 36])
def test_n_clusters_honoured(n_clusters):
    _, _, labels = blob_partitions(3)
    result = ccpivot(Ensemble(labels), n_clusters, random_state=0)
    assert result.n_clusters == n_clusters
    assert np.bincount(result.labels).min() >= 1


def test_recovers_the_blobs():
    X, y, labels = blob_partitions(5)
    result = ccpivot(Ensemble(labels), None, random_state=0)
    assert same_partition(result.labels, y)


def test_missing_labels_use_the_pairs_that_are_labelled():
    labels = np.array([[0, 0, 0, 1, 1, 1], [0, -1, 0, 1, 1, -1], [-1, 0, 0, 1, -1, 1]]).T
    result = ccpivot(labels, None, random_state=0)
    assert result.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert result.objective == pytest.approx(0.0)


def test_accepts_array_likes_and_generators():
    _, _, labels = blob_partitions(3)
    a = ccpivot(labels, 3, random_state=np.random.default_rng(1))
    b = ccpivot(Ensemble(labels), 3, random_state=np.random.default_rng(1))
    assert np.array_equal(a.labels, b.labels)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_clusters": 0}, r"n_clusters must be an int in the range \[1, 6\], got 0"),
    ({"n_clusters": 7}, r"n_clusters must be an int in the range \[1, 6\], got 7"),
    ({"n_clusters": 2.0}, r"n_clusters must be an int, got 2.0"),
    ({"n_clusters": 2, "n_init": 0}, r"n_init must be an int in the range \[1, inf\], got 0"),
    ({"n_clusters": 2, "random_state": -1}, r"random_state must be a non-negative int, got -1"),
    ({"n_clusters": 2, "random_state": "seed"}, r"random_state must be None"),
])
def test_bad_arguments(kwargs, match):
    ensemble = Ensemble([[0, 0, 0, 1, 1, 1]])
    n_clusters = kwargs.pop("n_clusters")
    with pytest.raises(ValidationError, match=match):
        ccpivot(ensemble, n_clusters, **kwargs)


def test_memory_budget_is_respected():
    from cclust.errors import MemoryBudgetError

    with pytest.raises(MemoryBudgetError, match="max_bytes"):
        ccpivot(Ensemble([[0, 0, 0, 1, 1, 1]]), 2, random_state=0, max_bytes=8)


def test_module_is_documented():
    assert cclust_example.__doc__ and ccpivot.__doc__
    assert "Ailon" in ccpivot.__doc__
