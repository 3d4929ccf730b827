"""U-SPEC, the uspec generator, usenc and the nonlinear shapes (Huang, Wang, Wu, Lai & Kwoh
2020) against the literal references of ``tests/reference_uspec.py``, and bad input."""
import numpy as np
import pytest

import cclust
from cclust.datasets import make_circles, make_flower, make_moons
from cclust.errors import ValidationError
from cclust.metrics import ari
from cclust.uspec import (
    _nearest_numpy,
    approximate_nearest_representatives,
    nearest_in_index,
    representative_index,
    default_k_range,
    hybrid_representatives,
    uspec,
    uspec_ensemble,
    uspec_graph,
)
import reference_uspec as ref
from factories import same_partition


# -- the pieces against the paper's definitions -----------------------------------------------------

def test_hybrid_selection_with_p_at_least_n_is_the_distinct_points():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[30:] = X[:10]  # duplicates are kept once
    R = hybrid_representatives(X, 10**6, random_state=0)
    assert sorted(map(tuple, R)) == sorted(set(map(tuple, X)))


def test_with_p_equal_to_n_every_clusterer_breaks_distance_ties_at_random():
    # Points 0, 1, ..., 39 on a line: each inner point has two representatives at distance 1,
    # and with K = 2 (itself and one more) the second is a tie. The authors' code lists its
    # candidates in a random order, so the tie goes either way; cclust keeps the drawn order of
    # the representatives (ties go to the lower index), not the data order, which would give
    # every inner point its left neighbour in every clusterer of an ensemble.
    X = np.arange(40, dtype=np.float64)[:, None]
    R = hybrid_representatives(X, 40, random_state=0)
    assert sorted(R[:, 0]) == list(range(40)) and not (np.diff(R[:, 0]) > 0).all()
    right = []
    for seed in range(6):
        graph = uspec_graph(X, n_representatives=40, n_neighbors=2, random_state=seed)
        second = graph.representatives[np.searchsorted(graph.columns, graph.neighbors[:, 1]), 0]
        assert (graph.distances[1:-1] == [0.0, 1.0]).all()
        right.append(second[1:-1] > X[1:-1, 0])
    right = np.array(right)
    assert 0.3 < right.mean() < 0.7  # about half of the ties go to the right-hand point
    assert (right.any(axis=0) & ~right.all(axis=0)).mean() > 0.5  # most points differ between seeds

def test_hybrid_selection_gives_p_centres_of_candidates():
    X, _ = make_flower(3000, random_state=1)
    R = hybrid_representatives(X, 100, random_state=0)
    assert R.shape == (100, 2)
    assert np.unique(R, axis=0).shape[0] == 100
    # k-means centres lie inside the data's bounding box and are (almost surely) not data points
    assert (R.min(axis=0) >= X.min(axis=0)).all() and (R.max(axis=0) <= X.max(axis=0)).all()


@pytest.mark.parametrize("maker, p", [(make_flower, 150), (make_circles, 100), (make_moons, 200)],
                         ids=["flower", "circles", "moons"])
def test_recall_of_the_approximate_nearest_representatives(maker, p):
    X, _ = maker(800, n_features=3, random_state=2)
    R = hybrid_representatives(X, p, random_state=0)
    approx, dist = approximate_nearest_representatives(X, R, 5, random_state=0)
    exact, exact_dist = ref.exact_nearest_representatives(X, R, 5)
    assert ref.recall(approx, exact) >= 0.9
    # every listed distance is the exact distance to that representative
    np.testing.assert_allclose(dist, np.sqrt(((X[:, None, :] - R[approx]) ** 2).sum(axis=2)), rtol=1e-12)
    # the approximation never beats the exact k-th distance
    assert (dist[:, -1] >= exact_dist[:, -1] - 1e-12).all()


def test_exact_when_the_neighbourhood_covers_every_representative():
    # p = 30 <= 10 K + 1: r_l's neighbourhood is all representatives, so the search is exact.
    X, _ = make_moons(300, random_state=3)
    R = hybrid_representatives(X, 30, random_state=0)
    approx, _ = approximate_nearest_representatives(X, R, 3, random_state=0)
    exact, _ = ref.exact_nearest_representatives(X, R, 3)
    assert ref.recall(approx, exact) == 1.0


def test_affinity_is_eq_5_6():
    X, _ = make_circles(500, random_state=4)
    graph = uspec_graph(X, n_representatives=60, n_neighbors=4, random_state=0)
    R_all = np.zeros((graph.columns.max() + 1, 2))
    R_all[graph.columns] = graph.representatives
    dist = np.sqrt(((X[:, None, :] - R_all[graph.neighbors]) ** 2).sum(axis=2))
    expected = ref.gaussian_affinity(graph.neighbors, dist, R_all.shape[0])[:, graph.columns]
    np.testing.assert_allclose(graph.affinity.toarray(), expected, rtol=1e-10, atol=1e-300)
    assert graph.sigma == pytest.approx(dist.mean(), rel=1e-12)
    assert graph.affinity.shape[1] == graph.columns.shape[0] <= 60
    assert (np.diff(graph.affinity.indptr) == 4).all()


def test_uspec_is_the_transfer_cut_of_its_graph():
    # Same seed: the same graph, then the cut; the cut of the graph by the dense reference of the
    # whole bipartite graph gives the same partition.
    X, y = make_moons(600, random_state=5)
    labels = uspec(X, 2, n_representatives=80, random_state=0)
    graph = uspec_graph(X, n_representatives=80, random_state=0)
    dense, _ = ref.dense_bipartite_spectral(graph.affinity.toarray(), 2)
    assert same_partition(labels, dense)


# -- quality, determinism ----------------------------------------------------------------------------

@pytest.mark.parametrize("maker, k", [(make_moons, 2), (make_circles, 3), (make_flower, 10)],
                         ids=["moons", "circles", "flower"])
def test_uspec_recovers_nonlinear_shapes(maker, k):
    X, y = maker(4000, random_state=0)
    assert ari(uspec(X, k, random_state=0), y) >= 0.95


def test_uspec_deterministic_for_any_thread_count():
    X, _ = make_flower(3000, random_state=0)
    a = uspec(X, 10, random_state=7, n_jobs=1)
    assert np.array_equal(a, uspec(X, 10, random_state=7, n_jobs=2))
    assert np.array_equal(a, uspec(X, 10, random_state=7))


def test_uspec_is_an_estimator_function():
    X, y = make_moons(1000, random_state=0)
    E = cclust.generate("estimator", X, 2, estimator=uspec, n_partitions=2, random_state=0)
    assert all(ari(E.labels[:, j], y) > 0.95 for j in range(2))


def test_generator_k_range_and_determinism():
    X, _ = make_circles(1500, random_state=0)
    E = cclust.generate("uspec", X, 3, n_partitions=6, random_state=1)
    assert ((E.n_clusters >= 20) & (E.n_clusters <= 60)).all()
    assert E == cclust.generate("uspec", X, 3, n_partitions=6, random_state=1, n_jobs=2)
    assert default_k_range(150, 150) == (20, 50)
    assert default_k_range(30, 30) == (10, 10)
    assert default_k_range(10**6, 1000) == (20, 60)


@pytest.mark.parametrize("seed", [0, 1])
def test_usenc_is_generate_uspec_then_tcut(seed):
    X, _ = make_moons(1500, random_state=seed)
    result = cclust.get("usenc")(None, 2, X=X, n_partitions=5, random_state=seed)
    E = cclust.generate("uspec", X, 2, n_partitions=5, random_state=seed)
    assert np.array_equal(result.labels, cclust.consensus("tcut", E, 2, random_state=seed).labels)
    rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
    result = cclust.get("usenc")(None, 2, X=X, n_partitions=5, random_state=rng_a)
    E = cclust.generate("uspec", X, 2, n_partitions=5, random_state=rng_b)
    assert np.array_equal(result.labels, cclust.consensus("tcut", E, 2, random_state=rng_b).labels)


def test_usenc_joins_a_given_ensemble():
    X, y = make_moons(1000, random_state=0)
    E = cclust.generate("kmeans", X, 2, n_partitions=4, random_state=0)
    result = cclust.consensus("usenc", E, 2, X=X, n_partitions=4, random_state=0)
    G = cclust.generate("uspec", X, 2, n_partitions=4, random_state=0)
    joined = cclust.Ensemble(np.column_stack([E.labels, G.labels]), weights=[1] * 8)
    assert np.array_equal(result.labels, cclust.consensus("tcut", joined, 2, random_state=0).labels)
    assert result.extras["n_generated"] == 4


# -- nonlinear structure: U-SENC where k-means ensembles fail -------------------------------------------

@pytest.mark.parametrize("maker, k", [(make_moons, 2), (make_circles, 3)], ids=["moons", "circles"])
def test_usenc_recovers_nonlinear_shapes_where_kmeans_ensembles_fail(maker, k):
    X, y = maker(3000, random_state=0)
    assert ari(cclust.get("usenc")(None, k, X=X, n_partitions=10, random_state=0).labels, y) >= 0.95
    E = cclust.generate("kmeans", X, k, n_partitions=20, random_state=0)
    assert ari(cclust.consensus("kcc", E, k, random_state=0).labels, y) < 0.6
    E = cclust.generate("kmeans", X, k, n_partitions=20, k_range=(k, k), random_state=0)
    assert ari(cclust.consensus("tcut", E, k, random_state=0).labels, y) < 0.6


# -- datasets ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("maker", [make_moons, make_circles, make_flower])
@pytest.mark.parametrize("n", [3, 11, 1001])
def test_shapes_deterministic_by_seed_for_any_n(maker, n):
    if maker is make_flower and n < 10:
        pytest.skip("the flower has 10 classes")
    X, y = maker(n, n_features=4, random_state=3)
    assert X.shape == (n, 4) and y.shape == (n,) and y.dtype == np.int64
    X2, y2 = maker(n, n_features=4, random_state=3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert not np.array_equal(X, maker(n, n_features=4, random_state=4)[0])


def test_shape_class_sizes():
    assert np.bincount(make_moons(1001, random_state=0)[1]).tolist() == [501, 500]
    assert np.bincount(make_circles(600, random_state=0)[1]).tolist() == [100, 200, 300]
    y = make_flower(10_000, random_state=0)[1]
    assert y.max() == 9 and np.bincount(y).sum() == 10_000


def test_circles_lie_on_their_radii():
    X, y = make_circles(3000, noise=0.0, random_state=0)
    np.testing.assert_allclose(np.hypot(X[:, 0], X[:, 1]), y + 1.0)


@pytest.mark.parametrize("kwargs, match", [({"n_samples": 1}, "n_samples"), ({"noise": -1.0}, "noise"),
                                           ({"n_features": 1}, "n_features")])
def test_shape_bad_arguments(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        make_moons(**kwargs)


# -- bad input (the list) ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def moons():
    return make_moons(400, random_state=0)


def test_p_larger_than_n_becomes_n(moons):
    X, y = moons
    graph = uspec_graph(X[:50], n_representatives=1000, random_state=0)
    assert graph.representatives.shape[0] <= 50
    assert uspec(X, 2, n_representatives=10**6, random_state=0).shape == (400,)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_neighbors": 0}, "n_neighbors must"),
    ({"n_neighbors": 1.5}, "n_neighbors"),
    ({"n_representatives": 0}, "n_representatives must"),
    ({"n_representatives": 4, "n_neighbors": 5}, r"n_neighbors=5 is larger than the number of representatives \(4"),
    ({"n_representatives": 1, "n_neighbors": 1}, r"n_clusters=2 is larger than the number of representatives \(1"),
    ({"n_init": 0}, "n_init"),
    ({"max_iter": 0}, "max_iter"),
])
def test_bad_parameters_name_the_argument(moons, kwargs, match):
    with pytest.raises(ValidationError, match=match):
        uspec(moons[0], 2, **kwargs)


def test_more_clusters_than_representatives(moons):
    with pytest.raises(ValidationError, match=r"n_clusters=20 .* pass n_representatives >= 20"):
        uspec(moons[0], 20, n_representatives=10)
    with pytest.raises(ValidationError, match=r"k_range=\(5, 30\) .* n_representatives >= 30"):
        uspec_ensemble(moons[0], 2, k_range=(5, 30), n_representatives=20)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_infinity_are_refused(moons, bad):
    X = moons[0].copy()
    X[3, 1] = bad
    for call in (lambda: uspec(X, 2), lambda: uspec_ensemble(X, 2, n_partitions=2),
                 lambda: cclust.get("usenc")(None, 2, X=X)):
        with pytest.raises(ValidationError, match="X"):
            call()


def test_constant_columns_change_nothing(moons):
    X, y = moons
    padded = np.column_stack([X, np.full(X.shape[0], 7.0), np.zeros(X.shape[0])])
    assert np.array_equal(uspec(padded, 2, random_state=0), uspec(X + 0.0, 2, random_state=0)) or \
        ari(uspec(padded, 2, random_state=0), y) > 0.95


def test_duplicate_points(moons):
    X, y = moons
    doubled = np.vstack([X, X, X])
    assert ari(uspec(doubled, 2, random_state=0), np.concatenate([y, y, y])) > 0.95
    few = np.repeat(np.array([[0.0, 0.0], [5.0, 5.0], [10.0, 0.0]]), 20, axis=0)
    labels = uspec(few, 3, random_state=0)
    assert same_partition(labels, np.repeat([0, 1, 2], 20))
    with pytest.raises(ValidationError, match="distinct representatives"):
        uspec(few, 4, n_neighbors=2)
    E = uspec_ensemble(few, 3, n_partitions=3, random_state=0)  # K_i capped at the 3 distinct points
    assert (E.n_clusters <= 3).all()


def test_all_points_identical():
    X = np.ones((30, 2))
    with pytest.raises(ValidationError, match="distinct representatives"):
        uspec(X, 2, n_neighbors=1)
    with pytest.raises(ValidationError, match="one cluster"):
        cclust.get("usenc")(None, 2, X=X, n_neighbors=1, n_partitions=2)


def test_usenc_rows_must_match(moons):
    X, _ = moons
    with pytest.raises(ValidationError, match="X has 399 rows"):
        cclust.get("usenc")(np.zeros((400, 1), dtype=int) + np.arange(400)[:, None] % 2, 2, X=X[:-1])


def test_no_object_by_representative_matrix(monkeypatch):
    # The coarse-to-fine search compares objects with rep-cluster centres, the members of one
    # rep-cluster and one neighbourhood of K' + 1 representatives: never with all p of them.
    import cclust.uspec as module

    X, _ = make_flower(3000, random_state=0)
    R = hybrid_representatives(X, 400, random_state=0)
    shapes = []
    original = module.squared_distances

    def recording(A, B):
        shapes.append((A.shape[0], B.shape[0]))
        return original(A, B)

    monkeypatch.setattr(module, "squared_distances", recording)
    index = module.representative_index(R, 5, random_state=0)
    shapes.clear()
    module._nearest_numpy(X, index, 5)  # the NumPy reference (the compiled path works per object)
    object_calls = shapes
    assert object_calls and max(b for _, b in object_calls) <= 100


# -- the compiled neighbour search against the NumPy path -------------------------------------------

def _fixtures():
    rng = np.random.default_rng(7)
    yield "flower2", make_flower(3000, random_state=0)[0], 300
    yield "flower6", make_flower(3000, n_features=6, random_state=1)[0], 250
    yield "moons", make_moons(2500, random_state=2)[0], 200
    yield "circles", make_circles(2000, n_features=3, random_state=3)[0], 120
    yield "gauss10", rng.normal(size=(2000, 10)), 400


NEIGHBOURS = [1, 5, 9]


@pytest.mark.parametrize("name, X, p", list(_fixtures()), ids=[f[0] for f in _fixtures()])
@pytest.mark.parametrize("k", NEIGHBOURS)
def test_compiled_search_selects_the_numpy_paths_neighbours(name, X, p, k):
    R = hybrid_representatives(X, p, random_state=0)
    index = representative_index(R, k, random_state=1)
    expected, expected_dist = _nearest_numpy(X, index, k)
    got, got_dist = nearest_in_index(X, index, k, n_threads=1)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(got_dist, expected_dist, rtol=1e-12, atol=1e-12)
    # equal neighbours give equal recall against the exact search; the approximate search's recall
    # is checked against the exact reference above, on inputs small enough for its Python loop


@pytest.mark.parametrize("n_threads", [2, 3])
def test_compiled_search_same_for_any_thread_count_and_row_block(n_threads):
    X, _ = make_flower(20000, n_features=3, random_state=4)  # several 4,096-object chunks
    index = representative_index(hybrid_representatives(X, 300, random_state=0), 5, random_state=0)
    one, one_dist = nearest_in_index(X, index, 5, n_threads=1)
    many, many_dist = nearest_in_index(X, index, 5, n_threads=n_threads)
    assert np.array_equal(one, many) and np.array_equal(one_dist, many_dist)
    part, part_dist = nearest_in_index(X[5000:13001], index, 5, n_threads=n_threads)
    assert np.array_equal(part, one[5000:13001]) and np.array_equal(part_dist, one_dist[5000:13001])


def test_compiled_search_breaks_ties_by_the_lower_index():
    # Representatives at equal distance from every object: the lower index comes first.
    R = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0], [3.0, 3.0]])
    X = np.zeros((3, 2))
    index = representative_index(R, 3, random_state=0)
    got, dist = nearest_in_index(X, index, 3)
    # nearest representative r_l is the lowest-index member of the nearest rep-cluster; every
    # candidate at distance 1 ranks by index
    assert (dist == 1.0).all()
    for row in got:
        assert list(row) == sorted(row)


def test_compiled_search_refuses_inconsistent_inputs():
    from cclust._ext import _uspec

    X, _ = make_moons(100, random_state=0)
    index = representative_index(hybrid_representatives(X, 20, random_state=0), 2, random_state=0)
    bad = index.neighborhood.copy()
    bad[0, 0] = 999
    with pytest.raises(ValueError, match="neighborhood index"):
        _uspec.nearest_representatives(X, index.R, index.centres, index.member_start, index.members, bad, 2, 1)
    with pytest.raises(ValueError, match="inconsistent"):
        _uspec.nearest_representatives(X, index.R, index.centres, index.member_start, index.members,
                                       index.neighborhood, index.neighborhood.shape[1] + 1, 1)


def test_transfer_rows_are_the_whole_matrix_expression():
    from cclust.graph._tcut import transfer_rows
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    B = sp.random(70000, 50, density=0.1, random_state=1, format="csr")
    V = rng.normal(size=(50, 7))
    degree = np.asarray(B.sum(axis=1)).reshape(-1)
    degree[degree == 0] = 1e-10
    whole = (B @ V) / degree[:, None]
    whole /= np.sqrt((whole * whole).sum(axis=1))[:, None] + 1e-10
    assert np.array_equal(transfer_rows(B, V, degree), whole)


def test_tcut_eigenvectors_from_the_rows_match_the_column_graph():
    # fewer rows than columns (150 objects, hundreds of clusters): the n x n Gram route gives the
    # eigenpairs of the c x c column graph, up to the sign of each vector
    import scipy.sparse as sp

    from cclust.graph._tcut import _column_graph, _dense_leading_eigenvectors_by_rows, dense_leading_eigenvectors

    rng = np.random.default_rng(0)
    n, c = 60, 200
    B = sp.random(n, c, density=0.1, random_state=1, format="csr") + sp.csr_matrix(
        (np.ones(n), (np.arange(n), rng.integers(0, c, n))), shape=(n, c))
    row_scale = rng.random(n) + 0.5
    col_degree = B.T @ np.ones(n) + 1e-3
    inv_sqrt = 1.0 / np.sqrt(col_degree)
    by_rows = _dense_leading_eigenvectors_by_rows(B, row_scale, inv_sqrt, 4)
    by_columns = dense_leading_eigenvectors(_column_graph(B, row_scale), inv_sqrt, 4)
    assert by_rows is not None
    np.testing.assert_allclose(by_rows[0], by_columns[0], rtol=1e-10)
    signs = np.sign((by_rows[1] * by_columns[1]).sum(axis=0))
    np.testing.assert_allclose(by_rows[1] * signs, by_columns[1], atol=1e-9)
