"""HBGF's graph built from the label matrix against the route through the weighted one-hot.

``hbgf`` forms its bipartite graph straight from the labels (canonical ranks, identical label
rows); these checks hold it to the one-hot route it replaces: the same cluster order, the same
groups of merged objects, the same CSR graph bit for bit, hence the same METIS input and labels.
"""
import numpy as np
import pytest
import scipy.sparse as sp

from cclust import Ensemble
from cclust.graph import (
    MERGE_CAP_DIVISOR,
    hbgf_graph,
    identical_label_rows,
    bipartite_partition,
    canonical_cluster_order,
    cap_groups,
    identical_rows,
    one_hot_in_order,
)
from cclust.consensus_functions.graph import hbgf
from cclust.ensemble import _group_rows

from factories import noisy_labels


def awkward_ensemble(rng, n=600, r=6, k=3, missing=0.0, zero_weight=False, duplicates=True):
    """Labels with repeated rows, optionally missing labels (some objects wholly unlabelled) and
    a partition of weight zero (its clusters are edges of weight 0)."""
    labels = noisy_labels(rng, n=n, r=r, k=k, missing=missing)
    if missing:
        labels[rng.integers(0, n, size=3)] = -1
    if duplicates:
        labels = np.vstack([labels, labels[rng.permutation(n)[: n // 2]]])
    else:  # a partition of singletons: no two rows alike
        labels[:, -1] = rng.permutation(n)
    weights = rng.random(r) + 0.5
    if zero_weight:
        weights[1] = 0.0
    return Ensemble(labels, weights=weights)


VARIANTS = {
    "complete": {},
    "missing": {"missing": 0.3},
    "zero-weight": {"zero_weight": True},
    "missing+zero-weight": {"missing": 0.2, "zero_weight": True},
    "distinct": {"r": 12, "k": 5, "duplicates": False},
}


def by_first_appearance(labels):
    """Labels renamed in order of first appearance: equal exactly for equal partitions."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse.reshape(-1)]


def one_hot_order(E):
    """The canonical cluster order computed from the one-hot's columns (the former route)."""
    B = E.one_hot().tocsc()
    B.sort_indices()
    starts = B.indptr[:-1]
    keys = np.random.default_rng(0x9E3779B9).integers(0, 2**63 - 1, size=E.n_samples, dtype=np.int64)
    member_hash = np.add.reduceat(keys.view(np.uint64)[B.indices], starts)
    weight = np.repeat(E.weights, E.n_clusters)
    return np.lexsort((weight, member_hash, np.diff(B.indptr), B.indices[starts]))


def one_hot_graph(E, n_clusters):
    """HBGF's merged graph through the weighted one-hot: permute, sort, merge identical rows."""
    M = E.one_hot(weighted=True)[:, canonical_cluster_order(E)].tocsr()
    M.sort_indices()
    groups = cap_groups(identical_rows(M), max(1, E.n_samples // (MERGE_CAP_DIVISOR * n_clusters)))
    if groups is None:
        return M, None
    G = M[groups[0]]
    G.data = G.data * np.repeat(groups[2].astype(np.float64), np.diff(G.indptr))
    return G, groups


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
def test_canonical_order_matches_the_one_hot_route(rng, variant):
    E = awkward_ensemble(rng, **variant)
    assert np.array_equal(canonical_cluster_order(E), one_hot_order(E))


def test_canonical_order_ranks_equal_sized_clusters_by_their_members(rng):
    # Every partition's cluster 1 holds object 0 and nine others: same first member, same size,
    # so only the member-set hash orders them. Every row appears twice, so the hash of a merged
    # group must be the sum over all its objects.
    n, r = 60, 8
    base = np.zeros((n, r), dtype=np.int64)
    for j in range(r):
        base[np.concatenate([[0], 1 + rng.choice(n - 1, 9, replace=False)]), j] = 1
    E = Ensemble(np.vstack([base, base]))
    B = E.one_hot().tocsc()
    B.sort_indices()
    with_first = np.diff(B.indptr)[B.indices[B.indptr[:-1]] == 0]
    assert with_first.tolist() == [20] * r  # eight clusters tie on (first member, size)
    assert np.array_equal(canonical_cluster_order(E), one_hot_order(E))


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
def test_canonical_order_takes_the_identical_rows_it_is_given(rng, variant):
    E = awkward_ensemble(rng, **variant)
    assert np.array_equal(canonical_cluster_order(E, identical_label_rows(E.labels)), one_hot_order(E))


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
def test_one_hot_in_order_is_the_permuted_one_hot(rng, variant):
    E = awkward_ensemble(rng, **variant)
    order = canonical_cluster_order(E)
    rows = rng.permutation(E.n_samples)[: E.n_samples // 3]
    values = rng.random(order.shape[0])
    for kwargs, expected in [({}, E.one_hot()[:, order]),
                             ({"rows": rows}, E.one_hot()[rows][:, order]),
                             ({"values": values}, E.one_hot()[:, order] @ sp.diags(values))]:
        expected = sp.csr_matrix(expected)
        expected.sort_indices()
        got = one_hot_in_order(E, order, **kwargs)
        assert got.has_sorted_indices
        assert np.array_equal(got.indptr, expected.indptr) and np.array_equal(got.indices, expected.indices)
        assert np.array_equal(got.data, expected.data)


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
def test_identical_label_rows_match_identical_rows_of_the_one_hot(rng, variant):
    E = awkward_ensemble(rng, **variant)
    expected = identical_rows(E.one_hot(weighted=True))
    got = identical_label_rows(E.labels)
    if "duplicates" in variant:
        assert expected is None and got is None
        return
    assert expected is not None and got is not None
    for a, b in zip(got, expected):
        assert np.array_equal(a, b)
    # A hash putting every row in one bucket, or two different rows together, must not merge them.
    for row_hash in (np.zeros(E.n_samples, dtype=np.uint64), np.arange(E.n_samples, dtype=np.uint64) // 2):
        for a, b in zip(_group_rows(E.labels, row_hash), expected):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
@pytest.mark.parametrize("n_clusters", [2, 3, 7])
def test_hbgf_graph_is_the_one_hot_graph_bit_for_bit(rng, variant, n_clusters):
    E = awkward_ensemble(rng, **variant)
    G, groups, weight_by_rank = hbgf_graph(E, n_clusters)
    ref, ref_groups = one_hot_graph(E, n_clusters)
    assert G.shape == ref.shape and G.has_sorted_indices
    assert np.array_equal(G.indptr, ref.indptr) and np.array_equal(G.indices, ref.indices)
    assert np.array_equal(G.data, ref.data)  # exact: METIS's integer weights must not move
    assert (groups is None) == (ref_groups is None)
    if groups is not None:
        for a, b in zip(groups, ref_groups):
            assert np.array_equal(a, b)
    # 900 objects, 300 repeated: merged vertices of several objects (the cap is 900 // (64 K)).
    assert groups is None if "duplicates" in variant else groups[2].max() > 1
    assert np.array_equal(weight_by_rank, np.repeat(E.weights, E.n_clusters)[canonical_cluster_order(E)])


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
def test_hbgf_equals_bipartite_partition_of_the_weighted_one_hot(seed, variant):
    rng = np.random.default_rng(seed)
    E = awkward_ensemble(rng, **variant)
    M = E.one_hot(weighted=True)[:, canonical_cluster_order(E)]
    for n_clusters in (2, 4):
        result = hbgf(E, n_clusters, random_state=seed)
        labels, cut, moved = bipartite_partition(M, n_clusters, random_state=seed, ufactor=None)
        assert np.array_equal(by_first_appearance(result.labels), by_first_appearance(labels))
        assert result.objective == cut and result.extras["n_moved"] == moved


def test_hbgf_fills_empty_parts_as_the_one_hot_route_does():
    # Few distinct objects and many parts: METIS leaves parts with clusters only, and the
    # objects moved to fill them must be the ones the one-hot route moves.
    moved_somewhere = False
    for seed in range(6):
        rng = np.random.default_rng(seed)
        E = awkward_ensemble(rng, n=40, r=3, k=2, missing=0.2 if seed % 2 else 0.0)
        M = E.one_hot(weighted=True)[:, canonical_cluster_order(E)]
        result = hbgf(E, 9, random_state=seed)
        labels, _, moved = bipartite_partition(sp.csr_matrix(M), 9, random_state=seed, ufactor=None)
        assert np.array_equal(by_first_appearance(result.labels), by_first_appearance(labels))
        assert result.extras["n_moved"] == moved
        assert np.unique(result.labels).shape[0] == 9
        moved_somewhere |= moved > 0
    assert moved_somewhere  # the filling path is exercised
