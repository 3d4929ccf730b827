"""Ensemble.knn_coassociation and the sparse routes built on it (cspa, eac, wosp with neighbours)."""
import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.consensus_functions.graph import cspa
from cclust.consensus_functions.pairwise import eac
from cclust.consensus_functions.woec import wosp
from cclust.errors import MemoryBudgetError, ValidationError
from factories import noisy_labels, noisy_labels_with_truth, same_partition


def planted_labels(rng, n, r, n_groups=12, noise=0.3, missing=0.0):
    """r partitions of a planted n_groups-cluster truth, each with its own K_i and noise.

    With 30% noise nearly every label row is distinct, so the kNN search cannot fall back to
    comparing all pairs: these cases exercise the sorted-band candidate search.
    """
    truth = rng.integers(0, n_groups, size=n)
    cols = []
    for _ in range(r):
        k = int(rng.integers(4, 16))
        col = rng.integers(0, k, size=n_groups)[truth]
        flip = rng.random(n) < noise
        col[flip] = rng.integers(0, k, size=int(flip.sum()))
        if missing:
            col = np.where(rng.random(n) < missing, -1, col)
        cols.append(col)
    L = np.column_stack(cols)
    L[:, 0] = np.maximum(L[:, 0], 0)
    return L


def dense_without_diagonal(E, dtype=np.float64):
    A = np.array(E.coassociation(dtype=dtype), copy=True)
    np.fill_diagonal(A, 0.0)
    return A


def recall(E, G, k):
    """Fraction of the true top-k co-associations (ties at the k-th value count as hits) kept."""
    A = dense_without_diagonal(E, np.float32)
    np.fill_diagonal(A, -1.0)
    kth = -np.partition(-A, k - 1, axis=1)[:, k - 1]
    G = G.tocsr()
    hits = total = 0
    for x in range(A.shape[0]):
        positive = min(k, int((A[x] > 0).sum()))
        kept = G.data[G.indptr[x]:G.indptr[x + 1]]
        hits += min(positive, int((kept >= kth[x]).sum()))
        total += positive
    return hits / total


def assert_well_formed(G, n):
    assert G.shape == (n, n)
    assert (G != G.T).nnz == 0, "not symmetric"
    coo = G.tocoo()
    assert not (coo.row == coo.col).any(), "diagonal stored"
    assert (G.data > 0).all(), "explicit zeros or negative values"
    assert G.has_sorted_indices


# -- values -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_rows", ["few", "many"], ids=["exact-path", "band-path"])
def test_values_equal_dense_coassociation_at_kept_pairs(rng, n_rows):
    L = noisy_labels(rng, n=60, r=6) if n_rows == "few" else planted_labels(rng, 600, 20)
    E = Ensemble(L)
    G = E.knn_coassociation(8, random_state=0)
    assert_well_formed(G, E.n_samples)
    coo = G.tocoo()
    dense = E.coassociation(dtype=np.float32)
    # Equal weights, complete labels: the same arithmetic as the dense matrix, bit for bit.
    assert np.array_equal(coo.data, dense[coo.row, coo.col])
    assert G.dtype == np.float32


@pytest.mark.parametrize("missing", [0.0, 0.25], ids=["complete", "missing25"])
def test_values_with_weights_and_missing_labels(rng, missing):
    L = planted_labels(rng, 500, 15, missing=missing)
    E = Ensemble(L, weights=rng.random(15) + 0.2)
    G = E.knn_coassociation(10, random_state=1, dtype=np.float64)
    assert G.dtype == np.float64
    assert_well_formed(G, E.n_samples)
    coo = G.tocoo()
    np.testing.assert_allclose(coo.data, E.coassociation()[coo.row, coo.col], rtol=0, atol=1e-12)


def test_every_object_keeps_at_least_k_neighbours(rng):
    L = planted_labels(rng, 800, 20)
    E = Ensemble(L)
    k = 12
    G = E.knn_coassociation(k, random_state=0)
    positive = (dense_without_diagonal(E) > 0).sum(axis=1)
    assert (np.diff(G.indptr) >= np.minimum(k, positive)).all()


# -- quality ------------------------------------------------------------------------------------

def test_recall_of_true_top_k_on_a_seeded_case():
    # 3000 objects, r = 30, every label row distinct: the band search, not the all-pairs path.
    L = planted_labels(np.random.default_rng(7), 3000, 30)
    E = Ensemble(L)
    assert np.unique(L, axis=0).shape[0] - 1 > 2 * 30 * 8     # window 30 (= k), 8 bands
    G = E.knn_coassociation(30, random_state=0)
    # Documented: recall above 0.9 with the defaults on k-means-like ensembles.
    assert recall(E, G, 30) >= 0.9
    # More bands can only add candidates: recall does not fall.
    assert recall(E, E.knn_coassociation(30, n_bands=16, random_state=0), 30) >= recall(E, G, 30) - 1e-9


def test_few_distinct_rows_give_the_exact_knn_graph(rng):
    L = noisy_labels(rng, n=90, r=5)
    E = Ensemble(L)
    assert recall(E, E.knn_coassociation(10, random_state=0), 10) == 1.0


def test_n_neighbors_at_least_n_keeps_every_positive_pair(rng):
    L = noisy_labels(rng, n=20, r=4)
    E = Ensemble(L)
    G = E.knn_coassociation(50, random_state=0, dtype=np.float64)
    A = dense_without_diagonal(E)
    np.testing.assert_array_equal(G.toarray(), A)


# -- duplicates, tiny inputs, missing -------------------------------------------------------------

def test_duplicate_rows_are_joined_by_a_ring_at_coassociation_one():
    rows = np.array([[0, 0, 0], [0, 1, 1], [1, 1, 2], [2, 2, 2]])
    L = np.repeat(rows, [50, 3, 1, 40], axis=0)
    E = Ensemble(L)
    k = 5
    G = E.knn_coassociation(k, random_state=0, dtype=np.float64)
    assert_well_formed(G, E.n_samples)
    A = E.coassociation()
    coo = G.tocoo()
    np.testing.assert_array_equal(coo.data, A[coo.row, coo.col])
    ones = G.multiply(G >= 1.0).tocsr()
    # A member of a group of 50 keeps k duplicates; the ring's union gives each 2k at most.
    big = np.arange(50)
    degrees = np.diff(ones.indptr)[big]
    assert (degrees >= k).all() and (degrees <= 2 * k).all()
    # A group of 3 is a clique, and the singleton's neighbours are the nearest groups' members.
    assert np.diff(ones.indptr)[50:53].tolist() == [2, 2, 2]
    singleton = 53
    neighbours = G[singleton].indices
    assert set(np.round(A[singleton, neighbours], 12)) <= {round(2 / 3, 12), round(1 / 3, 12)}
    assert neighbours.shape[0] >= k


def test_tiny_inputs():
    one = Ensemble(np.array([[0, 1]])).knn_coassociation(3, random_state=0)
    assert one.shape == (1, 1) and one.nnz == 0
    E = Ensemble([[0, 0, 1], [0, 1, 1]])
    G = E.knn_coassociation(30, random_state=0, dtype=np.float64)
    np.testing.assert_array_equal(G.toarray(), dense_without_diagonal(E))


def test_missing_labels_follow_coassociation():
    # Objects 0 and 1 share a cluster where both are labelled and are never compared elsewhere;
    # object 3 is labelled by no partition: co-association 0 with everyone, so no edges.
    L = np.array([[0, 0, -1], [0, -1, 1], [1, 1, 1], [-1, -1, -1], [1, 1, 0]])
    E = Ensemble(L)
    G = E.knn_coassociation(4, random_state=0, dtype=np.float64)
    np.testing.assert_allclose(G.toarray(), dense_without_diagonal(E), atol=1e-15)
    assert G[3].nnz == 0 and G[0, 1] == 1.0


# -- determinism --------------------------------------------------------------------------------

def test_deterministic_under_random_state_and_threads(rng):
    E = Ensemble(planted_labels(rng, 1500, 20))
    a = E.knn_coassociation(10, random_state=3, n_jobs=1)
    b = E.knn_coassociation(10, random_state=3, n_jobs=2)
    c = E.knn_coassociation(10, random_state=np.random.default_rng(3), n_jobs=4)
    for other in (b, c):
        assert np.array_equal(a.indptr, other.indptr) and np.array_equal(a.indices, other.indices)
        assert np.array_equal(a.data, other.data)


def test_input_is_not_modified(rng):
    L = planted_labels(rng, 300, 10)
    E = Ensemble(L)
    before = E.labels.copy()
    E.knn_coassociation(5, random_state=0)
    assert np.array_equal(E.labels, before)


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    ({"n_neighbors": 0}, "n_neighbors"),
    ({"n_neighbors": -3}, "n_neighbors"),
    ({"n_neighbors": 2.5}, "n_neighbors"),
    ({"n_neighbors": "30"}, "n_neighbors"),
    ({"n_bands": 0}, "n_bands"),
    ({"band_size": 0}, "band_size"),
    ({"band_size": 7}, "band_size"),
    ({"window": 0}, "window"),
    ({"dtype": np.int32}, "dtype must be float32 or float64"),
    ({"random_state": "seed"}, "random_state"),
    ({"n_jobs": 0}, "n_jobs"),
    ({"max_bytes": -1}, "max_bytes"),
])
def test_bad_arguments(kwargs, match):
    E = Ensemble(np.zeros((10, 6), dtype=int))
    kwargs = {"n_neighbors": 3, **kwargs}
    with pytest.raises(ValidationError, match=match):
        E.knn_coassociation(**kwargs)


def test_budget_refusal_names_bytes_and_alternative(rng):
    E = Ensemble(planted_labels(rng, 400, 10))
    with pytest.raises(MemoryBudgetError, match=r"kNN co-association of 400 objects \(n_neighbors=30\) needs .*\((\d+) bytes\).*"
                                                r"max_bytes=\1.*lower n_neighbors"):
        E.knn_coassociation(30, max_bytes=10_000)


# -- the methods on the sparse graph ------------------------------------------------------------

def test_cspa_lsh_route(rng):
    L, truth = noisy_labels_with_truth(rng, n=300, r=12, k=3, noise=0.2)
    res = cspa(L, 3, n_neighbors=15, neighbors="lsh", random_state=0)
    assert res.n_clusters == 3 and res.extras["neighbors"] == "lsh"
    assert cclust.get("ari")(res.labels, truth) > 0.8
    again = cspa(L, 3, n_neighbors=15, neighbors="lsh", random_state=0, n_jobs=1)
    assert np.array_equal(res.labels, again.labels)
    # neighbors="lsh" defaults to 30 neighbours and refuses the sampled-candidates option.
    assert cspa(L, 3, neighbors="lsh", random_state=0).extras["n_neighbors"] == 30
    with pytest.raises(ValidationError, match="n_candidates"):
        cspa(L, 3, n_neighbors=10, neighbors="lsh", n_candidates=20)
    with pytest.raises(ValidationError, match="neighbors must be one of"):
        cspa(L, 3, n_neighbors=10, neighbors="approx")


def test_cspa_lsh_runs_where_dense_is_refused(rng):
    L = planted_labels(rng, 2000, 10)
    with pytest.raises(MemoryBudgetError, match="neighbors='lsh'"):
        cspa(L, 4, max_bytes=4_000_000, random_state=0)
    assert cspa(L, 4, n_neighbors=10, neighbors="lsh", max_bytes=4_000_000, random_state=0).n_clusters == 4


def test_eac_single_linkage_on_the_full_graph_equals_dense(rng):
    # With every positive pair kept the spanning forest is dense single linkage's; distinct
    # merge heights near the cut make the cut unambiguous.
    L = noisy_labels(rng, n=45, r=8)
    w = rng.random(8) + 0.1           # unequal weights: distinct co-association values
    dense = eac(Ensemble(L, weights=w), 3, linkage="single")
    sparse = eac(Ensemble(L, weights=w), 3, linkage="single", n_neighbors=44, random_state=0)
    Z = dense.extras["linkage_matrix"]
    heights = np.round(Z[:, 2], 12)
    if heights[45 - 3] == heights[45 - 4]:
        pytest.skip("tied merge heights at the cut: the dense and sparse cuts may legitimately differ")
    assert same_partition(dense.labels, sparse.labels)
    assert sparse.objective == pytest.approx(dense.objective, abs=1e-12)


def test_eac_sparse_recovers_well_separated_groups():
    rng = np.random.default_rng(0)
    L, truth = noisy_labels_with_truth(rng, n=600, r=15, k=4, noise=0.05)
    res = eac(L, 4, linkage="single", n_neighbors=20, random_state=0)
    assert res.n_clusters == 4
    assert same_partition(res.labels, eac(L, 4, linkage="single").labels)
    assert res.extras["n_components"] >= 1


@pytest.mark.parametrize("linkage", ["average", "complete", "weighted"])
def test_eac_sparse_refuses_other_linkages(linkage):
    with pytest.raises(ValidationError, match="linkage='single'"):
        eac(np.zeros((10, 2), dtype=int), 2, linkage=linkage, n_neighbors=5)


def test_wosp_lsh_route(rng):
    X = np.concatenate([rng.normal(c, 0.5, size=(100, 2)) for c in (0.0, 4.0, 8.0)])
    truth = np.repeat(np.arange(3), 100)
    E = cclust.generate("subsample", X, 3, n_partitions=10, random_state=0)
    res = wosp(E, 3, X=X, n_neighbors=15, neighbors="lsh", random_state=0)
    assert res.extras["neighbors"] == "lsh"
    assert cclust.get("ari")(res.labels, truth) > 0.9
    with pytest.raises(ValidationError, match="neighbors must be one of"):
        wosp(E, 3, X=X, n_neighbors=15, neighbors="all")
