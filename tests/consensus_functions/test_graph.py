"""CSPA, MCLA, HBGF and the shared METIS call: against slow references, properties, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

import cclust
from cclust import Ensemble
from cclust.graph import (
    EDGE_WEIGHT_RESOLUTION,
    MERGE_CAP_DIVISOR,
    canonical_cluster_order,
    cut_dendrogram,
    identical_rows,
    integer_edge_weights,
    meta_graph,
    partition_graph,
    symmetric_graph,
)
from cclust.consensus_functions.graph import cspa, hbgf, mcla
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.metrics import ari
from cclust.testing import same_partition

from reference_graph import first_merges_cut
from reference_graph import bipartite, coassociation, mcla as ref_mcla, merge_identical_objects, meta_similarity

METHODS = {"cspa": cspa, "mcla": mcla, "hbgf": hbgf}


def noisy_ensemble(rng, n=30, r=6, k=3, missing=0.0):
    truth = rng.integers(0, k, size=n)
    labels = np.column_stack([np.where(rng.random(n) < 0.25, rng.integers(0, k + 1, size=n), truth)
                              for _ in range(r)])
    if missing:
        labels[rng.random(labels.shape) < missing] = -1
        labels[(labels < 0).all(axis=1), 0] = 0
    return labels


# The conformance kit runs once per method, in tests/test_registry.py: its n_clusters check
# already asks for 2, K and K + 1 clusters, so a second run at another K repeats every check.


# -- the METIS call ---------------------------------------------------------------------------

def test_integer_weights_scale_to_resolution_and_round():
    w = integer_edge_weights(np.array([0.5, 0.25, 1e-6, 1.0]))
    assert w.tolist() == [EDGE_WEIGHT_RESOLUTION // 2, EDGE_WEIGHT_RESOLUTION // 4, 0, EDGE_WEIGHT_RESOLUTION]
    # Invariant to the scale of the similarities.
    assert np.array_equal(integer_edge_weights(np.array([5.0, 2.5])), integer_edge_weights(np.array([0.5, 0.25])))


def test_partition_graph_is_scale_free_symmetric_and_seeded(seed):
    rng = np.random.default_rng(seed)
    S = rng.random((25, 25))
    S = S + S.T
    S[S < 1.0] = 0.0
    a, cut = partition_graph(S, 3, random_state=seed)
    b, _ = partition_graph(7.0 * S, 3, random_state=seed)
    c, _ = partition_graph(sp.csr_matrix(S), 3, random_state=np.random.default_rng(seed))
    assert np.array_equal(a, b) and np.array_equal(a, c)
    brute = sum(S[i, j] for i in range(25) for j in range(i + 1, 25) if a[i] != a[j])
    assert cut == pytest.approx(brute)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 40])
def test_symmetric_graph_is_the_symmetrising_pass_bit_for_bit(n, dtype, seed):
    """The once-made METIS graph of a dense similarity equals (S + S^T) / 2 without the diagonal
    formed entry by entry (asymmetric S, zeros on one side only and on both), as a sorted CSR of
    the non-zero entries; cutting it with symmetric=True gives partition_graph's parts and cut."""
    rng = np.random.default_rng(seed)
    S = rng.random((n, n)).astype(dtype)
    S[rng.random((n, n)) < 0.3] = 0.0           # zeros on one side of a pair or on both
    G = symmetric_graph(S)
    expected = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                expected[i, j] = 0.5 * float(S[i, j]) + 0.5 * float(S[j, i])
    assert G.has_sorted_indices and G.dtype == np.float64
    assert np.array_equal(G.toarray(), expected)
    assert G.nnz == np.count_nonzero(expected)
    if n > 3:
        parts, cut = partition_graph(G, 3, random_state=seed, symmetric=True)
        parts_a, cut_a = partition_graph(S, 3, random_state=seed)
        assert np.array_equal(parts, parts_a) and cut == cut_a


def test_symmetric_graph_reads_several_row_blocks():
    """Above 2048 objects a block holds fewer rows than the matrix: the blocks meet exactly."""
    rng = np.random.default_rng(0)
    n = 2100
    S = rng.random((n, n), dtype=np.float32)
    S[rng.random((n, n)) < 0.5] = 0.0
    expected = 0.5 * S.astype(np.float64) + 0.5 * S.T.astype(np.float64)
    np.fill_diagonal(expected, 0.0)
    G = symmetric_graph(S)
    assert G.nnz == np.count_nonzero(expected)
    assert np.array_equal(G.toarray(), expected)


@pytest.mark.parametrize("weighted", [False, True])
def test_meta_graph_off_its_diagonal_is_what_partition_graph_cuts(weighted, seed):
    """MCLA's and WOMC's once-made METIS graph: the Jaccard meta-graph's entries off the
    diagonal that are not 0, the same values as the symmetrising pass gives (both triangles are
    equal bit for bit), and the same parts and cut."""
    from cclust.graph._meta import _meta_graph_parts, _off_diagonal

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, size=(120, 6))
    labels[rng.random(labels.shape) < 0.1] = -1
    E = Ensemble(labels)
    _, meta = _meta_graph_parts(E, rng.random(120) + 0.1 if weighted else None, None)
    G = _off_diagonal(meta)
    dense = meta.toarray()
    assert np.array_equal(dense, dense.T)
    np.fill_diagonal(dense, 0.0)
    assert G.has_sorted_indices and np.array_equal(G.toarray(), dense) and G.nnz == np.count_nonzero(dense)
    parts, cut = partition_graph(G, 3, random_state=seed, symmetric=True)
    parts_a, cut_a = partition_graph(meta, 3, random_state=seed)
    assert np.array_equal(parts, parts_a) and cut == cut_a


def test_symmetric_graph_refuses_a_matrix_that_is_not_square():
    with pytest.raises(ValidationError, match="square"):
        symmetric_graph(np.zeros((3, 4)))


def test_zero_edges_are_dropped_and_diagonal_ignored():
    # Two triangles joined by an edge too weak to survive rounding: the cut separates them.
    S = np.zeros((6, 6))
    for block in ((0, 1, 2), (3, 4, 5)):
        for i in block:
            for j in block:
                S[i, j] = 1.0
    S[2, 3] = S[3, 2] = 1e-9
    parts, cut = partition_graph(S, 2, random_state=0)
    assert same_partition(parts, [0, 0, 0, 1, 1, 1])
    assert cut == pytest.approx(1e-9)


def test_canonical_cluster_order_ignores_names_and_partition_order(rng):
    labels = noisy_ensemble(rng)
    E = Ensemble(labels)
    order = canonical_cluster_order(E)
    B = E.one_hot().toarray()[:, order]
    perm = rng.permutation(labels.shape[1])
    renamed = np.column_stack([(labels[:, j] + 7) * (1 if j % 2 else -1) for j in perm])
    E2 = Ensemble(renamed)
    B2 = E2.one_hot().toarray()[:, canonical_cluster_order(E2)]
    assert np.array_equal(B, B2)


# -- against the references -------------------------------------------------------------------

@pytest.mark.parametrize("missing", [0.0, 0.15], ids=["complete", "missing"])
def test_cspa_matches_reference(seed, missing):
    rng = np.random.default_rng(seed)
    labels = noisy_ensemble(rng, missing=missing)
    weights = rng.random(labels.shape[1]) + 0.5
    E = Ensemble(labels, weights=weights)
    A = coassociation(labels, weights)
    np.testing.assert_allclose(E.coassociation(dtype=np.float32), A, atol=1e-6)
    expected, _ = partition_graph(A.astype(np.float32), 3, random_state=np.random.default_rng(seed))
    assert same_partition(cspa(E, 3, random_state=seed).labels, expected)


def test_cspa_sparse_route_keeps_the_strongest_neighbours(seed):
    rng = np.random.default_rng(seed)
    labels = noisy_ensemble(rng, n=40)
    E = Ensemble(labels)
    n = labels.shape[0]
    full = cspa(E, 3, n_neighbors=n - 1, random_state=seed)
    dense = cspa(E, 3, random_state=seed)
    assert np.array_equal(full.labels, dense.labels)
    # With few neighbours every object keeps at least its k strongest links.
    from cclust.consensus_functions.graph import _coassociation_graph

    G = _coassociation_graph(E, 5, None).toarray()
    A = coassociation(labels)
    np.fill_diagonal(A, -1)
    for x in range(n):
        kth = np.sort(A[x])[::-1][4]
        # Everything strictly stronger than x's 5th strongest link is kept, with its exact weight.
        stronger = np.flatnonzero(A[x] > kth + 1e-9)
        assert (G[x, stronger] > 0).all()
        kept = G[x] > 0
        assert kept.sum() >= min(5, (A[x] > 0).sum())
        np.testing.assert_allclose(G[x, kept], A[x, kept], atol=1e-6)
    np.testing.assert_array_equal(G, G.T)


@pytest.mark.parametrize("missing", [0.0, 0.15], ids=["complete", "missing"])
def test_cspa_sampled_candidates_keep_exact_weights(seed, missing):
    from cclust.consensus_functions.graph import _sampled_coassociation_graph

    rng = np.random.default_rng(seed)
    labels = noisy_ensemble(rng, n=40, missing=missing)
    E = Ensemble(labels)
    A = coassociation(labels)
    G = _sampled_coassociation_graph(E, 5, 200, np.random.default_rng(seed)).toarray()
    np.testing.assert_array_equal(G, G.T)
    kept = G > 0
    np.testing.assert_allclose(G[kept], A[kept], atol=1e-12)
    assert not np.diag(kept).any()
    # With 200 draws per object every object keeps at least its 5 links (or all it has).
    for x in range(40):
        positive = (A[x] > 0).sum() - 1
        assert kept[x].sum() >= min(5, positive)
    result = cspa(E, 3, n_neighbors=5, n_candidates=200, random_state=seed)
    assert result.n_clusters == 3 and result.extras["n_candidates"] == 200


@pytest.mark.parametrize("balance", ["objects", "clusters"])
@pytest.mark.parametrize("missing", [0.0, 0.15], ids=["complete", "missing"])
def test_mcla_matches_reference(seed, missing, balance):
    rng = np.random.default_rng(seed)
    labels = noisy_ensemble(rng, missing=missing)
    E = Ensemble(labels)
    order, S = meta_graph(E)
    np.testing.assert_allclose(S.toarray(), meta_similarity(labels)[np.ix_(order, order)], atol=1e-12)
    expected, H = ref_mcla(E, 3, seed, balance=balance)
    result = mcla(E, 3, balance=balance, random_state=seed)
    np.testing.assert_allclose(result.extras["association"], H, atol=1e-12)
    assert same_partition(result.labels, expected)


@pytest.mark.parametrize("missing", [0.0, 0.15], ids=["complete", "missing"])
def test_hbgf_matches_reference(seed, missing):
    rng = np.random.default_rng(seed)
    # n = 960, r = 4: groups of identical objects both below and above the cap (960 // 192 = 5).
    labels = noisy_ensemble(rng, n=960, r=4, missing=missing)
    weights = rng.random(labels.shape[1]) + 0.5
    E = Ensemble(labels, weights=weights)
    M = bipartite(labels, weights)[:, canonical_cluster_order(E)]
    np.testing.assert_allclose(E.one_hot(weighted=True).toarray()[:, canonical_cluster_order(E)], M, atol=1e-12)
    cap = max(1, M.shape[0] // (MERGE_CAP_DIVISOR * 3))
    G, counts, inverse = merge_identical_objects(M, cap=cap)
    assert counts.sum() == M.shape[0] and counts.max() > 1  # the merge is exercised
    assert counts.max() == cap and merge_identical_objects(M)[1].max() > cap  # and so is the cap
    m = G.shape[0]
    W = np.block([[np.zeros((m, m)), G], [G.T, np.zeros((M.shape[1],) * 2)]])
    parts, _ = partition_graph(W, 3, random_state=np.random.default_rng(seed),
                               vertex_weights=np.concatenate([counts, np.ones(M.shape[1], dtype=int)]),
                               resolution=EDGE_WEIGHT_RESOLUTION * G.max() / M.max())
    result = hbgf(E, 3, random_state=seed)
    expected = parts[:m][inverse]
    if np.unique(expected).shape[0] == 3:
        assert same_partition(result.labels, expected)
    assert result.n_clusters == 3


def test_identical_rows_groups_exactly(rng):
    M = sp.csr_matrix(rng.integers(0, 3, size=(60, 3)).astype(np.float64) / 2)
    M.sort_indices()
    first, inverse, counts = identical_rows(M)
    rows, ref_counts, ref_inverse = merge_identical_objects(M.toarray())
    assert np.array_equal(inverse, ref_inverse) and np.array_equal(counts, ref_counts)
    np.testing.assert_array_equal(M[first].toarray() * counts[:, None], rows)
    assert identical_rows(sp.csr_matrix(np.eye(6))) is None
    # A value differing in the last bits is a different row.
    D = sp.csr_matrix(np.array([[1.0, 0.5], [1.0, 0.5 + 1e-15]]))
    assert identical_rows(D) is None


def test_hbgf_merged_objects_share_labels(seed):
    # Duplicated objects are one vertex of METIS's graph (pairs are within the cap once
    # n >= 2 * MERGE_CAP_DIVISOR * K), so they always share a label.
    rng = np.random.default_rng(seed)
    half = MERGE_CAP_DIVISOR * 3
    labels = noisy_ensemble(rng, n=half, r=12)
    twice = hbgf(np.vstack([labels, labels]), 3, random_state=seed)
    assert np.array_equal(twice.labels[:half], twice.labels[half:])
    assert twice.n_clusters == 3


def test_hbgf_ignores_cluster_names_and_partition_order(seed):
    rng = np.random.default_rng(seed)
    labels = noisy_ensemble(rng, n=40, r=8, k=4)
    renamed = np.column_stack([rng.permutation(5)[labels[:, j]] for j in rng.permutation(8)])
    a = hbgf(labels, 4, random_state=seed)
    b = hbgf(renamed, 4, random_state=seed)
    assert np.array_equal(a.labels, b.labels)


def test_hand_computed_mcla():
    # Three partitions of six objects; clusters {0,1,2} and {3,4,5} recur, the third partition
    # moves object 2. Jaccard({0,1,2}, {0,1}) = 2/3.
    labels = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]]).T
    E = Ensemble(labels)
    order, S = meta_graph(E)
    dense = meta_similarity(labels)
    assert dense[0, 4] == pytest.approx(2 / 3)
    np.testing.assert_allclose(S.toarray(), dense[np.ix_(order, order)])
    result = mcla(E, 2, random_state=0)
    assert same_partition(result.labels, [0, 0, 0, 1, 1, 1])


# -- properties -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(METHODS))
def test_results_recover_clear_structure(name, seed):
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(3), 20)
    labels = np.column_stack([np.where(rng.random(60) < 0.1, rng.integers(0, 3, 60), truth) for _ in range(10)])
    result = METHODS[name](labels, 3, random_state=seed)
    assert ari(result.labels, truth) > 0.9


def test_ufactor_lets_cspa_keep_imbalanced_clusters():
    # Clusters of 40 and 8 objects, agreed on by every partition: balanced METIS must cut the
    # big one; a loose balance tolerance keeps both.
    truth = np.repeat([0, 1], [40, 8])
    labels = np.column_stack([truth] * 5)
    balanced = cspa(labels, 2, sizes="equal", random_state=0)
    loose = cspa(labels, 2, sizes="equal", ufactor=1500, random_state=0)
    assert not same_partition(balanced.labels, truth)
    assert same_partition(loose.labels, truth)
    # The default balances the parts by the estimated sizes instead: both clusters kept.
    default = cspa(labels, 2, random_state=0)
    assert same_partition(default.labels, truth)
    assert default.extras["sizes_used"] == "estimated"


WOEC = ("womc", "wosp", "wohb")


def _call(name, E, k, X, **kwargs):
    fn = cclust.get(name)
    return fn(E, k, X=X, **kwargs) if name in ("wosp", "wohb") else fn(E, k, **kwargs)


@pytest.mark.parametrize("name", sorted(METHODS) + list(WOEC))
def test_sizes_keep_a_cluster_three_times_larger_whole(name):
    # Blobs of 300, 100, 100, 100 objects and a k-means ensemble (K_i in [K, sqrt(n)]): the
    # paper's equal parts cut the large blob; the default keeps it.
    from cclust.testing import easy_ensemble

    X, y, E = easy_ensemble(600, 4, ratio=3, n_partitions=20, seed=1)
    equal = _call(name, E, 4, X, sizes="equal", random_state=0)
    default = _call(name, E, 4, X, random_state=0)
    assert ari(y, equal.labels) < 0.8
    assert np.bincount(equal.labels).max() < 200
    assert ari(y, default.labels) > 0.95
    assert default.extras["sizes"] == "auto" and default.extras["sizes_used"] == "estimated"
    estimated = _call(name, E, 4, X, sizes="estimated", random_state=0)
    assert estimated.extras["sizes_used"] == "estimated"
    assert ari(y, estimated.labels) > 0.95


@pytest.mark.parametrize("name", sorted(METHODS) + list(WOEC))
def test_sizes_auto_keeps_equal_cut_on_balanced_blobs(name):
    from cclust.testing import easy_ensemble

    X, y, E = easy_ensemble(400, 4, n_partitions=20, seed=2)
    default = _call(name, E, 4, X, random_state=0)
    assert ari(y, default.labels) > 0.95
    cuts = default.extras["separated_coassociation"]
    assert set(cuts) == {"equal", "estimated"} and min(cuts.values()) >= 0


@pytest.mark.parametrize("name", sorted(METHODS) + list(WOEC))
def test_bad_sizes(name):
    from cclust.testing import easy_ensemble

    X, _, E = easy_ensemble(200, 3, n_partitions=5, seed=0)
    with pytest.raises(ValidationError, match="sizes must be 'auto', 'estimated' or 'equal', got 'balanced'"):
        _call(name, E, 3, X, sizes="balanced", random_state=0)


def test_size_weights_equalise_cluster_weights():
    from cclust.graph import SIZE_WEIGHT_UNIT, size_weights

    labels = np.repeat([0, 1, 2, 3], [300, 100, 100, 100])
    w = size_weights(labels)
    totals = np.bincount(labels, weights=w)
    assert w.dtype == np.int64 and w.min() >= 1
    assert np.allclose(totals, totals.mean(), rtol=0.06)
    assert w[0] == round(SIZE_WEIGHT_UNIT * 150 / 300)


def test_estimate_clusters_finds_unequal_sizes():
    from cclust.graph import estimate_clusters
    from cclust.testing import easy_ensemble

    # (With K = 3, one blob 5x and K_i up to sqrt(n), the estimate can miss: seed 0 of the
    # 700-object set gives sizes 411/166/123, ARI 0.62; docs/benchmarks.md.)
    _, y, E = easy_ensemble(600, 4, ratio=3, n_partitions=20, seed=1)
    est = estimate_clusters(E, 4, random_state=0)
    assert same_partition(est, y)
    assert np.array_equal(estimate_clusters(E, 4, random_state=0), est)
    _, y, E = easy_ensemble(700, 3, ratio=5, n_partitions=20, seed=1)
    assert same_partition(estimate_clusters(E, 3, random_state=0), y)


def test_mcla_balance_objects_survives_outlier_clusters(seed):
    # Half the partitions isolate one outlier each, half give the two true groups. Balancing
    # meta-clusters by number of clusters pairs the 10 tiny outlier clusters against the rest;
    # balancing by objects covered pairs the true groups.
    truth = np.repeat([0, 1], 30)
    outliers = [np.where(np.arange(60) == j, 1, 0) for j in range(10)]
    labels = np.column_stack(outliers + [truth] * 10)
    by_clusters = mcla(labels, 2, balance="clusters", random_state=seed)
    by_objects = mcla(labels, 2, random_state=seed)   # the default
    assert ari(by_clusters.labels, truth) < 0.9
    assert same_partition(by_objects.labels, truth)
    assert by_objects.extras["balance"] == "objects"


def test_mcla_bad_balance():
    with pytest.raises(ValidationError, match="balance must be 'clusters' or 'objects', got 'sizes'"):
        mcla(np.array([[0, 0, 0, 1, 1, 1]]).T, 2, balance="sizes")


def test_registered_names():
    for name in METHODS:
        assert cclust.get(name) is METHODS[name]


# -- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(METHODS))
@pytest.mark.parametrize("k", [1, 0, 7])
def test_bad_n_clusters(name, k):
    with pytest.raises(ValidationError, match="n_clusters must be an int in the range"):
        METHODS[name](np.array([[0, 0, 0, 1, 1, 1]]).T, k)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_single_cluster_partitions_are_refused(name):
    with pytest.raises(ValidationError, match="every partition puts all objects in one cluster"):
        METHODS[name](np.zeros((10, 4), dtype=int), 2)


def test_cspa_memory_budget():
    labels = np.column_stack([np.arange(100) % 3, np.arange(100) % 4])
    with pytest.raises(MemoryBudgetError, match=r"bytes.*n_neighbors"):
        cspa(labels, 3, max_bytes=10_000)
    assert cspa(labels, 3, n_neighbors=10, max_bytes=10_000, random_state=0).n_clusters == 3


@pytest.mark.parametrize("kwargs, match", [
    ({"ufactor": 0}, "ufactor must be an int"),
    ({"n_neighbors": 0}, "n_neighbors must be an int"),
    ({"n_candidates": 10}, "n_candidates needs n_neighbors"),
    ({"n_neighbors": 2, "n_candidates": 0}, "n_candidates must be an int"),
    ({"random_state": -1}, "random_state must be a non-negative int"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        cspa(np.array([[0, 0, 0, 1, 1, 1]]).T, 2, **kwargs)


def test_hbgf_merge_keeps_the_balanced_cut():
    # 3,000+ identical objects must not become one vertex too heavy for METIS to balance: the
    # unmerged graph gives two parts of about 2,400 objects, and so must the merged one.
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1], [4000, 800])
    labels = np.column_stack([np.where(rng.random(4800) < 0.05, rng.integers(0, 2, 4800), truth)
                              for _ in range(8)])
    for seed in (0, 1):
        sizes = np.bincount(hbgf(labels, 2, sizes="equal", random_state=seed).labels)
        assert sizes.min() >= 0.48 * 4800, sizes


@pytest.mark.parametrize("method", ["single", "average", "complete"])
@pytest.mark.parametrize("seed", range(6))
def test_cut_dendrogram_is_the_first_merges_also_at_tied_heights(method, seed):
    """Points on a 4 x 4 grid: most merge heights are tied, so the cut often falls inside a tie."""
    from scipy.cluster.hierarchy import linkage

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(int(rng.integers(2, 50)), 2)).astype(float)
    Z = linkage(X, method)
    before = Z.copy()
    for k in range(1, X.shape[0] + 1):
        labels = cut_dendrogram(Z, k)
        assert np.unique(labels).shape[0] == k
        assert same_partition(labels, first_merges_cut(Z, k))
    np.testing.assert_array_equal(Z, before)


@pytest.mark.parametrize("k", [0, 6, 2.5, "2"])
def test_cut_dendrogram_refuses_a_bad_number_of_clusters(k):
    from scipy.cluster.hierarchy import linkage

    Z = linkage(np.arange(5.0).reshape(-1, 1), "single")
    with pytest.raises(ValidationError, match="n_clusters"):
        cut_dendrogram(Z, k)
