"""LWEA and LWGP (Huang, Wang & Lai 2018) against the literal references of
``tests/reference_locally_weighted.py``, hand-computed cases, the transfer cut, and bad input."""
import math

import numpy as np
import pytest
from scipy.cluster.hierarchy import cut_tree, linkage
from scipy.spatial.distance import squareform

import cclust
from cclust import Ensemble
from cclust.consensus_functions.locally_weighted import cluster_uncertainty, eci, lwca, lwea, lwgp
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.graph import identical_label_rows, tcut
import reference_locally_weighted as ref
from factories import noisy_labels, noisy_labels_with_truth, same_partition

MISSING = pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
WEIGHTED = pytest.mark.parametrize("weighted", [False, True], ids=["equal", "weighted"])


def _ensemble(rng, missing, weighted, n=30, r=6):
    L = noisy_labels(rng, n=n, r=r, missing=missing)
    w = rng.uniform(0.5, 2.0, size=L.shape[1]) if weighted else None
    return L, w


# -- the paper's quantities ----------------------------------------------------------------------

def test_hand_computed_uncertainty_and_eci():
    # pi_1 = {0,1,2,3 | 4,5}; pi_2 = {0,1 | 2 | 3,4,5}. Cluster {0,1,2,3} of pi_1 is split
    # 2/1/1 by pi_2: H = -(1/2 log2 1/2 + 2 * 1/4 log2 1/4) = 1.5 bits; {4,5} stays whole: 0.
    # Cluster {3,4,5} of pi_2 is split 1/2 by pi_1: H = 0.918 bits.
    L = np.array([[0, 0], [0, 0], [0, 1], [0, 2], [1, 2], [1, 2]])
    H = cluster_uncertainty(L)
    h3 = -(1 / 3 * math.log2(1 / 3) + 2 / 3 * math.log2(2 / 3))
    np.testing.assert_allclose(H, [1.5, 0.0, 0.0, 0.0, h3], atol=1e-12)
    np.testing.assert_allclose(eci(L, theta=0.5), np.exp(-H / (0.5 * 2)), atol=1e-12)
    A = lwca(L, theta=0.5)
    # Objects 0 and 1 share {0,1,2,3} (ECI e^-1.5) and {0,1} (ECI 1): (e^-1.5 + 1) / 2.
    assert A[0, 1] == pytest.approx((math.exp(-1.5) + 1.0) / 2)
    assert A[3, 4] == pytest.approx(math.exp(-h3) / 2)
    assert A[0, 4] == 0.0 and A[2, 2] == 1.0


def test_paper_example_of_a_cluster_split_two_three_three():
    # Huang et al. (2018, sec. IV-A): eight objects split 2/3/3 by another partition have
    # H = 1.56 bits w.r.t. it.
    L = np.array([[0, 0]] * 2 + [[0, 1]] * 3 + [[0, 2]] * 3 + [[1, 3]] * 2)
    assert cluster_uncertainty(L)[0] == pytest.approx(1.56, abs=0.005)


@MISSING
@WEIGHTED
def test_uncertainty_eci_and_lwca_match_the_reference(rng, missing, weighted):
    L, w = _ensemble(rng, missing, weighted)
    E = Ensemble(L, weights=w)
    np.testing.assert_allclose(cluster_uncertainty(E), ref.uncertainty(L, w), atol=1e-10)
    np.testing.assert_allclose(eci(E, 0.7), ref.eci(L, 0.7, w), atol=1e-12)
    np.testing.assert_allclose(lwca(E, 0.7), ref.lwca(L, 0.7, w), atol=1e-12)


def test_eci_follows_the_clusters_when_they_are_renamed_and_reordered(rng):
    L = noisy_labels(rng, n=30, r=5, missing=0.1)
    values = eci(L)
    renamed = L.copy()
    renamed[:, 1] = np.where(L[:, 1] >= 0, 10 - L[:, 1], -1)   # reverses the cluster order of partition 1
    order = [3, 1, 4, 0, 2]
    moved = eci(renamed[:, order])
    E, E2 = Ensemble(L), Ensemble(renamed[:, order])
    for j_new, j in enumerate(order):
        for x in range(L.shape[0]):
            if L[x, j] >= 0:
                assert moved[E2.offsets[j_new] + E2.labels[x, j_new]] == pytest.approx(
                    values[E.offsets[j] + E.labels[x, j]], abs=1e-12)


# -- LWEA ----------------------------------------------------------------------------------------

@MISSING
@WEIGHTED
@pytest.mark.parametrize("k", [2, 4])
def test_lwea_matches_region_merging_on_single_objects(rng, missing, weighted, k):
    L, w = _ensemble(rng, missing, weighted, n=24)
    res = lwea(Ensemble(L, weights=w), k, theta=0.4)
    assert same_partition(res.labels, ref.lwea(L, k, 0.4, w))
    np.testing.assert_allclose(res.extras["lwca"], ref.lwca(L, 0.4, w), atol=1e-12)


@MISSING
def test_lwea_on_microclusters_equals_scipy_average_linkage_on_objects(rng, missing):
    # Many duplicated rows: the microcluster route must give scipy's dendrogram cut of the
    # object-level LWCA.
    L = noisy_labels(rng, n=120, r=4, k=3, noise=0.15, missing=missing)
    assert identical_label_rows(Ensemble(L).labels)[0].shape[0] < 80
    D = np.round(1.0 - lwca(L), 12)
    np.fill_diagonal(D, 0.0)
    Z = linkage(squareform(D, checks=False), method="average")
    for k in (2, 3, 5):
        res = lwea(L, k)
        assert same_partition(res.labels, cut_tree(Z, n_clusters=k).reshape(-1))
        assert res.objective == pytest.approx(Z[L.shape[0] - k, 2], abs=1e-12)


def test_lwea_group_route_with_singleton_groups_is_the_exact_route(rng):
    L = noisy_labels(rng, n=40, r=6)
    exact = lwea(L, 3)
    n_distinct = exact.extras["n_microclusters"]
    assert lwea(L, 3, n_groups=n_distinct).extras["route"] == "microclusters"
    grouped = lwea(L, 3, n_groups=10, random_state=0)
    assert grouped.extras["route"] == "groups"
    assert grouped.n_clusters == 3


def test_lwea_group_distances_are_the_mean_lwca_between_groups(rng):
    from cclust.consensus_functions.locally_weighted import _group_distances, _prepare, _ensemble_values

    L = noisy_labels(rng, n=30, r=5, missing=0.1)
    E, _, _ = _prepare(L)
    _, values = _ensemble_values(E, 0.4)
    weighted = E.weights[np.repeat(np.arange(E.n_partitions), E.n_clusters)] * values
    fine = rng.integers(0, 6, size=30)
    fine = np.unique(fine, return_inverse=True)[1]
    D, sizes = _group_distances(E, weighted, fine, None)
    A = ref.lwca(E.labels, 0.4)
    for g in range(D.shape[0]):
        for h in range(D.shape[0]):
            if g != h:
                mean = A[np.ix_(fine == g, fine == h)].mean()
                assert D[g, h] == pytest.approx(1.0 - mean, abs=1e-12)


def test_lwea_recovers_planted_clusters():
    rng = np.random.default_rng(3)
    L, truth = noisy_labels_with_truth(rng, n=90, r=10, k=3, noise=0.3)
    assert cclust.get("ari")(lwea(L, 3).labels, truth) > 0.9


def test_lwea_refuses_past_the_memory_budget_and_names_the_route(rng):
    L = noisy_labels(rng, n=300, r=8, noise=0.9)
    with pytest.raises(MemoryBudgetError, match="n_groups"):
        lwea(L, 3, max_bytes=100_000)
    assert lwea(L, 3, n_groups=20, max_bytes=400_000, random_state=0).n_clusters == 3


def test_lwea_one_partition_gives_it_back():
    part = np.repeat([0, 1, 2], 5)
    assert same_partition(lwea(part[:, None], 3).labels, part)


# -- the transfer cut and LWGP -------------------------------------------------------------------

@MISSING
@WEIGHTED
def test_tcut_embedding_matches_the_reference(rng, missing, weighted):
    L, w = _ensemble(rng, missing, weighted, n=40)
    E = Ensemble(L, weights=w)
    B = ref.bipartite_graph(E.labels, 0.4, w)
    U, values = ref.tcut_embedding(B, 3)
    res = tcut(B, 3, random_state=0)
    np.testing.assert_allclose(res.eigenvalues, values, atol=1e-10)
    # The eigenvectors are defined up to a rotation: compare the Gram matrices of the rows.
    np.testing.assert_allclose(res.embedding @ res.embedding.T, U @ U.T, atol=1e-8)


def test_tcut_merged_rows_equal_the_unmerged_graph(rng):
    L = noisy_labels(rng, n=80, r=3, k=3, noise=0.1)
    E = Ensemble(L)
    B = ref.bipartite_graph(E.labels, 0.4)
    groups = identical_label_rows(E.labels)
    assert groups is not None
    full = tcut(B, 3, random_state=0)
    merged = tcut(B[groups[0]], 3, groups=groups, random_state=0)
    np.testing.assert_allclose(merged.eigenvalues, full.eigenvalues, atol=1e-10)
    np.testing.assert_allclose(merged.embedding[groups[1]] @ merged.embedding[groups[1]].T,
                               full.embedding @ full.embedding.T, atol=1e-8)


def test_tcut_sparse_eigensolver_matches_the_dense_one(rng, monkeypatch):
    from cclust.graph import _tcut

    L = noisy_labels(rng, n=60, r=5)
    B = ref.bipartite_graph(Ensemble(L).labels, 0.4)
    dense = tcut(B, 3, random_state=0)
    monkeypatch.setattr(_tcut, "TCUT_DENSE_MAX", 1)
    lanczos = tcut(B, 3, random_state=0)
    np.testing.assert_allclose(lanczos.eigenvalues, dense.eigenvalues, atol=1e-9)
    np.testing.assert_allclose(lanczos.embedding @ lanczos.embedding.T, dense.embedding @ dense.embedding.T,
                               atol=1e-7)


@MISSING
def test_lwgp_on_the_lanczos_route_reads_the_reference_graph(rng, missing, monkeypatch):
    # Past TCUT_DENSE_MAX LWGP's transfer cut reads the label codes (LabelGraph) instead of
    # Definition 8's sparse matrix: the same eigenvalues, and the partition of the sparse route.
    from cclust.graph import _tcut

    L = noisy_labels(rng, n=36, r=6, missing=missing)
    monkeypatch.setattr(_tcut, "TCUT_DENSE_MAX", 1)
    res = lwgp(L, 3, random_state=5)
    _, values = ref.tcut_embedding(ref.bipartite_graph(Ensemble(L).labels, 0.4), 3)
    np.testing.assert_allclose(res.extras["eigenvalues"], values, atol=1e-10)
    monkeypatch.setattr(_tcut, "ensemble_label_graph", lambda *args: None)
    sparse = lwgp(L, 3, random_state=5)
    assert same_partition(res.labels, sparse.labels)

def test_tcut_separates_two_disconnected_halves():
    B = np.kron(np.eye(2), np.ones((5, 3)))
    labels = tcut(B, 2, random_state=1).labels
    assert same_partition(labels, np.repeat([0, 1], 5))


@MISSING
def test_lwgp_uses_the_reference_graph(rng, missing):
    # LWGP's tcut is tcut on Definition 8's graph: same embedding, same seed, same labels.
    L = noisy_labels(rng, n=36, r=6, missing=missing)
    res = lwgp(L, 3, random_state=5)
    B = ref.bipartite_graph(Ensemble(L).labels, 0.4)
    _, values = ref.tcut_embedding(B, 3)
    np.testing.assert_allclose(res.extras["eigenvalues"], values, atol=1e-10)
    np.testing.assert_allclose(res.extras["eci"], ref.eci(L, 0.4), atol=1e-12)


@pytest.mark.parametrize("cut", ["tcut", "metis"])
def test_lwgp_recovers_planted_clusters(cut):
    rng = np.random.default_rng(4)
    L, truth = noisy_labels_with_truth(rng, n=90, r=10, k=3, noise=0.3)
    assert cclust.get("ari")(lwgp(L, 3, cut=cut, random_state=0).labels, truth) > 0.9


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [lwea, lwgp])
@pytest.mark.parametrize("theta", [0, -1.0, float("nan"), float("inf"), "0.4", True])
def test_bad_theta(fn, theta, rng):
    L = noisy_labels(rng)
    before = L.copy()
    with pytest.raises(ValidationError, match="theta"):
        fn(L, 3, theta=theta)
    np.testing.assert_array_equal(L, before)


def test_bad_theta_of_the_helpers():
    for fn in (eci, lwca):
        with pytest.raises(ValidationError, match="theta"):
            fn(np.array([[0, 1], [1, 0]]), theta=0.0)


@pytest.mark.parametrize("fn", [lwea, lwgp])
def test_an_object_without_labels_is_refused(fn, rng):
    L = noisy_labels(rng, missing=0.1)
    L[5] = -1
    with pytest.raises(ValidationError, match="ensemble: 1 object.*missing labels in every partition"):
        fn(L, 3)


@pytest.mark.parametrize("fn", [lwea, lwgp])
def test_one_cluster_everywhere_is_refused(fn):
    with pytest.raises(ValidationError, match="one cluster"):
        fn(np.zeros((10, 3), dtype=int), 2)


@pytest.mark.parametrize("fn", [lwea, lwgp])
def test_more_clusters_than_distinct_rows_is_refused(fn):
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 2], [1, 2]])
    with pytest.raises(ValidationError, match="n_clusters=4 .* distinct label vectors"):
        fn(L, 4)


def test_bad_parameters():
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 2], [1, 2]])
    with pytest.raises(ValidationError, match="n_groups"):
        lwea(L, 3, n_groups=2)
    with pytest.raises(ValidationError, match="cut"):
        lwgp(L, 2, cut="ncut")
    with pytest.raises(ValidationError, match="n_init"):
        lwgp(L, 2, n_init=0)
    with pytest.raises(ValidationError, match="max_iter"):
        lwgp(L, 2, max_iter=0)
    with pytest.raises(ValidationError, match="ufactor"):
        lwgp(L, 2, cut="metis", ufactor=0)
    with pytest.raises(ValidationError, match="n_clusters"):
        tcut(np.eye(3), 4)
    with pytest.raises(ValidationError, match="non-negative"):
        tcut(-np.eye(3), 2)


def test_lwea_group_route_recovers_planted_clusters():
    rng = np.random.default_rng(5)
    L, truth = noisy_labels_with_truth(rng, n=600, r=10, k=3, noise=0.3)
    res = lwea(L, 3, n_groups=60, random_state=0)
    assert res.extras["n_groups"] == 60
    assert cclust.get("ari")(res.labels, truth) > 0.9


def test_lwea_group_route_refuses_a_cut_with_too_few_groups(rng, monkeypatch):
    import cclust.consensus_functions.locally_weighted as module

    L = noisy_labels(rng, n=40, r=6)
    monkeypatch.setattr(module, "_fine_groups", lambda E, *args: np.arange(E.n_samples) % 2)
    with pytest.raises(ValidationError, match="n_groups=10: .* only 2 non-empty groups"):
        lwea(L, 3, n_groups=10, random_state=0)
