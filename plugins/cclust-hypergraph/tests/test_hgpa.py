"""Tests of cclust-hypergraph: the conformance kit, the entry point, HGPA against brute force."""
import itertools
from importlib import metadata

import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.errors import ValidationError
from cclust.testing import CONSENSUS_CHECKS, check_consensus, same_partition

from cclust_hypergraph import hgpa


def _installed():
    try:
        metadata.distribution("cclust-hypergraph")
    except metadata.PackageNotFoundError:
        return False
    return True


needs_install = pytest.mark.skipif(
    not _installed(), reason="cclust-hypergraph is not installed: python -m pip install ./plugins/cclust-hypergraph"
)


@pytest.mark.parametrize("check", CONSENSUS_CHECKS, ids=lambda check: check.__name__)
def test_conformance(check):
    check(hgpa)


@pytest.mark.parametrize("n_clusters, random_state", [(2, 0), (5, 2)])
def test_conformance_kit_other_sizes(n_clusters, random_state):
    check_consensus(hgpa, n_clusters=n_clusters, random_state=random_state)


@needs_install
def test_registered_through_the_entry_point():
    cclust.registry.refresh()
    row = cclust.available(kind="consensus")["hgpa"]
    assert row.provider == "cclust-hypergraph" and row.target == "cclust_hypergraph:hgpa"
    assert cclust.get("hgpa") is hgpa


def hyperedge_cut(labels, parts, weights=None):
    """Brute force: the total weight of clusters whose members fall in more than one part."""
    labels = np.asarray(labels)
    r = labels.shape[1]
    weights = np.full(r, 1.0 / r) if weights is None else np.asarray(weights) / np.sum(weights)
    cut = 0.0
    for j in range(r):
        for value in set(labels[:, j].tolist()) - {-1}:
            if len({int(parts[x]) for x in np.flatnonzero(labels[:, j] == value)}) > 1:
                cut += weights[j]
    return cut


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_cut_is_the_weighted_hyperedge_cut(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, size=24)
    labels = np.column_stack([np.where(rng.random(24) < 0.2, rng.integers(0, 3, 24), truth) for _ in range(6)])
    weights = rng.random(6) + 0.5
    result = hgpa(Ensemble(labels, weights=weights), 3, imbalance=0.5, random_state=seed)
    assert result.objective == pytest.approx(hyperedge_cut(labels, result.labels, weights))


def test_optimal_on_a_tiny_case():
    # Brute force over every balanced bipartition of 6 objects: HGPA finds a minimum cut.
    labels = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1], [1, 1, 1, 0, 0, 0]]).T
    best = min(hyperedge_cut(labels, [int(x in side) for x in range(6)])
               for side in itertools.combinations(range(6), 3))
    result = hgpa(labels, 2, imbalance=0.01, random_state=0)
    assert result.objective == pytest.approx(best)
    assert same_partition(result.labels, [0, 0, 0, 1, 1, 1])


def test_imbalance_lets_large_clusters_stay_whole():
    truth = np.repeat([0, 1], [40, 8])
    labels = np.column_stack([truth] * 4)
    assert not same_partition(hgpa(labels, 2, random_state=0).labels, truth)
    assert same_partition(hgpa(labels, 2, imbalance=1.0, random_state=0).labels, truth)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_clusters": 1}, "n_clusters must be an int in the range"),
    ({"n_clusters": 7}, "n_clusters must be an int in the range"),
    ({"n_clusters": 2, "imbalance": 0.0}, "imbalance must be a finite number"),
    ({"n_clusters": 2, "objective": "soed"}, "objective must be 'cut' or 'km1'"),
])
def test_bad_arguments(kwargs, match):
    n_clusters = kwargs.pop("n_clusters")
    with pytest.raises(ValidationError, match=match):
        hgpa(np.array([[0, 0, 0, 1, 1, 1]]).T, n_clusters, **kwargs)


def test_single_cluster_partitions_are_refused():
    with pytest.raises(ValidationError, match="every partition puts all objects in one cluster"):
        hgpa(np.zeros((8, 3), dtype=int), 2)
