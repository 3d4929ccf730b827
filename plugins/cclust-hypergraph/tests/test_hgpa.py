"""Tests of cclust-hypergraph: the conformance kit, the entry point, HGPA against brute force."""
import itertools
from importlib import metadata

import numpy as np
import pytest
from cclust_hypergraph import hgpa

import cclust
from cclust import Ensemble
from cclust.errors import ValidationError
from cclust.testing import check_consensus, parametrize_with_checks, same_partition


def _installed():
    try:
        metadata.distribution("cclust-hypergraph")
    except metadata.PackageNotFoundError:
        return False
    return True


needs_install = pytest.mark.skipif(
    not _installed(), reason="cclust-hypergraph is not installed: python -m pip install ./plugins/cclust-hypergraph"
)


# The hypergraph partitioner's result depends on the order of the vertices (objects), so
# reordering them changes the cut beyond a permutation: the kit checks object order only where
# the answer is unambiguous (hgpa declares object_order="distribution"; kept explicit here so
# the kit runs the same with an older cclust).
OPTIONS = {"object_order": "distribution"}


@parametrize_with_checks([hgpa], kind="consensus", options={hgpa: OPTIONS})
def test_conformance(obj, check):
    check(obj)


@pytest.mark.parametrize("n_clusters, random_state", [(2, 0), (5, 2)])
def test_conformance_kit_other_sizes(n_clusters, random_state):
    check_consensus(hgpa, n_clusters=n_clusters, random_state=random_state, **OPTIONS)


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
    # The plain deterministic preset balances the parts whatever the tolerance (documented).
    assert not same_partition(hgpa(labels, 2, imbalance=1.0, preset="deterministic", random_state=0).labels, truth)


def _random_labels(seed, n=300, r=10, k=4):
    return np.random.default_rng(seed).integers(0, k, size=(n, r))


def test_random_state_changes_the_partition_and_repeats_it():
    # Mt-KaHyPar's deterministic presets ignore its global seed; random_state must still matter
    # (through the vertex numbering) and give the same labels when repeated.
    labels = _random_labels(0)
    runs = [hgpa(labels, 4, random_state=seed).labels for seed in (0, 1, 2, 0)]
    assert np.array_equal(runs[0], runs[3])
    assert not (same_partition(runs[0], runs[1]) and same_partition(runs[0], runs[2]))


@pytest.mark.parametrize("preset", ["deterministic", "deterministic_quality"])
def test_same_labels_on_one_and_two_threads(preset, tmp_path):
    # Mt-KaHyPar is initialised once per process, so each thread count runs in its own
    # interpreter (CCLUST_NUM_THREADS sets it).
    import os
    import subprocess
    import sys

    script = ("import sys, numpy as np; from cclust_hypergraph import hgpa; "
              "L = np.random.default_rng(3).integers(0, 5, size=(400, 12)); "
              f"np.save(sys.argv[1], hgpa(L, 5, preset={preset!r}, random_state=7).labels)")
    out = []
    for threads in ("1", "2"):
        path = tmp_path / f"labels_{threads}.npy"
        # The child must import the same cclust as this process, installed or not.
        root = os.path.dirname(os.path.dirname(cclust.__file__))
        env = {**os.environ, "CCLUST_NUM_THREADS": threads,
               "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        # cwd=root: the working directory goes first on the child's sys.path, and a source
        # checkout there (no compiled extensions) would shadow the installed cclust.
        subprocess.run([sys.executable, "-c", script, str(path)], env=env, check=True, timeout=300, cwd=root)
        out.append(np.load(path))
    assert np.array_equal(out[0], out[1])


@pytest.mark.parametrize("kwargs, match", [
    ({"n_clusters": 2, "preset": "default"}, "preset must be one of 'deterministic', 'deterministic_quality'"),
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
