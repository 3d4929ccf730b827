import numpy as np
import pytest
from factories import FakeTerminal

import cclust
from cclust import generators
from cclust.datasets import load_iris
from cclust.errors import ValidationError

GENERATORS = ["kmeans", "subspace", "subsample", "projection"]


@pytest.fixture(scope="module")
def iris():
    return load_iris()


@pytest.mark.parametrize("name", GENERATORS)
def test_shape_determinism_and_n_jobs(iris, name):
    X, _ = iris
    gen = cclust.get(name, kind="generator")
    a = gen(X, 3, n_partitions=12, random_state=4, n_jobs=1)
    b = gen(X, 3, n_partitions=12, random_state=4, n_jobs=2)
    assert isinstance(a, cclust.Ensemble) and a.shape == (150, 12)
    assert a == b
    assert gen(X, 3, n_partitions=12, random_state=5, n_jobs=1) != a


def test_kmeans_k_range_default_and_explicit(iris):
    X, _ = iris
    E = generators.kmeans(X, 3, n_partitions=60, random_state=0)
    assert E.n_clusters.min() >= 3 and E.n_clusters.max() <= 13  # [K, ceil(sqrt(150))]
    E = generators.kmeans(X, 3, n_partitions=60, k_range=(2, 6), random_state=0)
    assert set(E.n_clusters.tolist()) <= set(range(2, 7)) and len(set(E.n_clusters.tolist())) > 2


def test_kmeans_partition_matches_a_textbook_lloyd(iris):
    """Run to convergence, each basic partition is a Lloyd fixed point: every object is at its
    nearest centre."""
    X, _ = iris
    E = generators.kmeans(X, 3, n_partitions=5, random_state=2, max_iter=100)
    for i in range(5):
        labels = E.labels[:, i]
        centres = np.array([X[labels == k].mean(0) for k in range(E.n_clusters[i])])
        d = ((X[:, None, :] - centres[None]) ** 2).sum(-1)
        assert np.array_equal(d.argmin(1), labels)


def _first_seen_codes(labels):
    """Labels renumbered in order of first appearance (partitions equal up to names compare equal)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse]


@pytest.mark.parametrize("max_iter, trials", [(5, None), (100, None), (2, 1)], ids=["default", "former", "other"])
def test_kmeans_partitions_are_the_engines_plain_lloyd_from_the_same_seeds(max_iter, trials):
    """The generator's bounded Lloyd gives the labels of the engine's plain assign + lloyd
    passes from the same k-means++ seeds, partition by partition (duplicate rows included)."""
    from cclust import _engine
    from cclust.validation import spawn_seed_sequences

    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(700, 4)) + 4 * rng.integers(0, 3, size=(700, 1)), np.zeros((20, 4))])
    kw = {} if (max_iter, trials) == (5, None) else {"max_iter": max_iter, "kmeanspp_trials": trials}
    E = generators.kmeans(X, 3, n_partitions=6, k_range=(3, 40), random_state=7, n_jobs=1, **kw)
    space = _engine.MixedSpace.dense(X)
    for j, seq in enumerate(spawn_seed_sequences(7, 6)):
        draw = np.random.default_rng(seq)
        k = int(draw.integers(3, 41))
        seeds = _engine.seed_objects(space, k, "k-means++", draw, 1, n_trials=trials)
        start = _engine.labels_from_seeds(space, seeds, 1)
        run = _engine.lloyd(space, start, k, max_iter=max_iter, tol=1e-4, n_threads=1)
        assert np.array_equal(_first_seen_codes(E.labels[:, j]), _first_seen_codes(run.labels)), j


def test_kmeans_defaults_stop_early_and_cap_k_i_at_50():
    """Five Lloyd iterations at most (some partitions are not converged where 100 iterations
    converge them), greedy k-means++, and K_i at most 50 when sqrt(n) is more."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))  # no clusters: k-means needs many iterations; sqrt(3000) = 55
    E = generators.kmeans(X, 2, n_partitions=8, random_state=0)
    assert E.n_clusters.min() >= 2 and E.n_clusters.max() <= 50
    assert E == generators.kmeans(X, 2, n_partitions=8, k_range=(2, 50), max_iter=5, kmeanspp_trials=None,
                                  random_state=0)
    converged = generators.kmeans(X, 2, n_partitions=8, k_range=(2, 50), max_iter=100, random_state=0)
    assert converged != E
    full = generators.kmeans(X, 2, n_partitions=40, random_state=0, k_range=(2, 55))
    assert full.n_clusters.max() > 50  # the range the cap cuts off


@pytest.mark.parametrize("trials", [0, -1, 1.5, "2"])
def test_kmeanspp_trials_is_checked(iris, trials):
    X, _ = iris
    with pytest.raises(ValidationError, match="kmeanspp_trials"):
        generators.kmeans(X, 3, n_partitions=2, kmeanspp_trials=trials)


def test_kmeanspp_trials_changes_the_seeding_only(iris):
    X, _ = iris
    greedy = generators.kmeans(X, 3, n_partitions=10, random_state=0, max_iter=100)
    one = generators.kmeans(X, 3, n_partitions=10, random_state=0, max_iter=100, kmeanspp_trials=1)
    assert one != greedy
    assert generators.kmeans(X, 3, n_partitions=10, random_state=0, max_iter=100, kmeanspp_trials=None) == greedy


def test_subsample_assigns_everyone_to_nearest_centre(iris):
    X, _ = iris
    E = generators.subsample(X, 3, n_partitions=3, random_state=0)
    assert (E.labels >= 0).all()


def test_inputs_are_not_mutated(iris):
    X, _ = iris
    Xc = X.copy()
    generators.projection(X, 3, n_partitions=3, random_state=0)
    assert np.array_equal(X, Xc)


@pytest.mark.parametrize("name", GENERATORS)
@pytest.mark.parametrize(
    "X, k, kw, match",
    [
        (np.array([[0.0, np.nan], [1.0, 2.0], [3.0, 4.0]]), 2, {}, "NaN or infinity"),
        (np.array([[0.0, np.inf], [1.0, 2.0], [3.0, 4.0]]), 2, {}, "NaN or infinity"),
        (np.zeros(5), 2, {}, "2-D"),
        (np.random.default_rng(0).random((6, 2)), 1, {}, "n_clusters"),
        (np.random.default_rng(0).random((6, 2)), 7, {}, "n_clusters"),
        (np.random.default_rng(0).random((6, 2)), 2, {"k_range": (1, 3)}, "k_range"),
        (np.random.default_rng(0).random((6, 2)), 2, {"k_range": (2, 7)}, "k_range"),
        (np.random.default_rng(0).random((6, 2)), 2, {"n_partitions": 0}, "n_partitions"),
        (np.random.default_rng(0).random((6, 2)), 2, {"init": "kmeans"}, "init"),
    ],
    ids=["nan", "inf", "1-D", "k-one", "k-above-n", "k_range-low", "k_range-high", "no-partitions", "bad-init"],
)
def test_bad_input(name, X, k, kw, match):
    with pytest.raises(ValidationError, match=match):
        cclust.generate(name, X, k, **kw)


@pytest.mark.parametrize("fraction", [0.0, 1.5, float("nan")])
def test_bad_fraction(iris, fraction):
    with pytest.raises(ValidationError, match="fraction"):
        generators.subspace(iris[0], 3, fraction=fraction)


@pytest.mark.parametrize("name", GENERATORS)
def test_verbose_draws_a_bar_over_partitions_on_a_terminal_only(iris, monkeypatch, capsys, name):
    X, _ = iris
    gen = cclust.get(name, kind="generator")
    quiet = gen(X, 3, n_partitions=6, random_state=1, n_jobs=2)
    assert capsys.readouterr().err == ""  # silent by default
    gen(X, 3, n_partitions=6, random_state=1, n_jobs=2, verbose=1)
    assert capsys.readouterr().err == ""  # not a terminal: still silent
    term = FakeTerminal()
    monkeypatch.setattr("sys.stderr", term)
    loud = gen(X, 3, n_partitions=6, random_state=1, n_jobs=2, verbose=2)  # 2: bar left on screen
    assert f"{name} partitions" in term.getvalue() and "6/6" in term.getvalue()
    assert loud == quiet


def test_bad_backend_and_misplaced_chunks(iris):
    X, _ = iris
    with pytest.raises(ValidationError, match="backend must be one of"):
        generators.kmeans(X, 3, n_partitions=2, backend="spark")
    with pytest.raises(ValidationError, match="chunks only applies"):
        generators.kmeans(X, 3, n_partitions=2, chunks=4096)


_GENERATORS_ON_X = ["kmeans", "subspace", "subsample", "projection", "boot", "bag", "hierarchical", "gmm", "birch",
                    "pam", "spectral", "fuzzy-cmeans", "heterogeneous"]


@pytest.mark.parametrize("name", _GENERATORS_ON_X)
def test_fewer_distinct_rows_than_n_clusters_is_refused(name):
    # 30 identical rows split into 3 clusters can only be arbitrary (it used to come out as 1, 1, 28)
    X = np.ones((30, 3))
    params = {"generators": [("kmeans", 2, {})]} if name == "heterogeneous" else {}
    with pytest.raises(ValidationError, match="X has only 1 distinct row, fewer than n_clusters=3"):
        cclust.get(name)(X, 3, random_state=0, **({"n_partitions": 2} if not params else params))
    two = np.repeat(np.eye(2), 10, axis=0)  # two distinct rows: K = 2 works, K = 3 is refused
    with pytest.raises(ValidationError, match="only 2 distinct rows.*at most 2"):
        cclust.get(name)(two, 3, random_state=0, **({"n_partitions": 2} if not params else params))


def test_distinct_rows_are_counted_with_minus_zero_as_zero():
    from cclust.validation import check_distinct_rows

    X = np.array([[0.0, 1.0], [-0.0, 1.0], [0.0, 1.0]])
    with pytest.raises(ValidationError, match="only 1 distinct row"):
        check_distinct_rows(X, 2)
    check_distinct_rows(np.vstack([X, [[2.0, 1.0]]]), 2)


def test_kmeans_fit_rows_fits_on_a_sample_and_assigns_everyone(iris):
    X, _ = iris
    full = generators.kmeans(X, 3, n_partitions=6, random_state=2)
    assert generators.kmeans(X, 3, n_partitions=6, random_state=2, fit_rows=150) == full   # >= n: every object
    sampled = generators.kmeans(X, 3, n_partitions=6, random_state=2, fit_rows=40)
    assert sampled == generators.kmeans(X, 3, n_partitions=6, random_state=2, fit_rows=40, n_jobs=2)
    assert sampled != full
    # each partition is a nearest-centre partition of all objects: its own centres reassign nobody
    for j in range(sampled.shape[1]):
        labels = sampled.labels[:, j]
        centres = np.array([X[labels == c].mean(axis=0) for c in range(labels.max() + 1)])
        nearest = ((X[:, None, :] - centres[None]) ** 2).sum(axis=2).argmin(axis=1)
        assert (nearest == labels).mean() > 0.9


@pytest.mark.parametrize("fit_rows, match", [(5, r"fit_rows=5 objects cannot hold the 13 clusters"),
                                             (0, r"fit_rows must be an int in the range \[1"),
                                             (2.5, "fit_rows must be an int"),
                                             ("all", r"fit_rows must be an int >= 1, 'auto' or None, got 'all'")])
def test_kmeans_fit_rows_is_checked(iris, fit_rows, match):
    X, _ = iris
    with pytest.raises(ValidationError, match=match):
        generators.kmeans(X, 3, n_partitions=2, random_state=0, fit_rows=fit_rows)


def _two_blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(0, 1, (n // 2, 3)), rng.normal(6, 1, (n - n // 2, 3))])


def test_kmeans_fit_rows_auto_samples_above_the_size_threshold_only():
    n = generators.FIT_ROWS_FROM + 1
    X = _two_blobs(n)
    auto = generators.kmeans(X, 2, n_partitions=2, random_state=3)
    assert auto == generators.kmeans(X, 2, n_partitions=2, random_state=3, fit_rows=generators.FIT_ROWS)
    assert auto == generators.kmeans(X, 2, n_partitions=2, random_state=3, fit_rows="auto", n_jobs=2)
    assert auto != generators.kmeans(X, 2, n_partitions=2, random_state=3, fit_rows=None)
    small = X[:generators.FIT_ROWS_FROM]   # at the threshold: every object, as before
    assert generators.kmeans(small, 2, n_partitions=2, random_state=3) == generators.kmeans(
        small, 2, n_partitions=2, random_state=3, fit_rows=None)


def test_nearest_centre_pass_equals_the_engine():
    from cclust import _engine

    rng = np.random.default_rng(5)
    X = rng.normal(0, 3, (5000, 7))
    grid = np.round(X)                               # many exact ties on an integer grid
    for data, centres in ((X, X[rng.choice(5000, 40, replace=False)] + 0.01),
                          (grid, grid[:30]),
                          (X[:3000], np.vstack([X[:6], X[:6], X[2:3]])),   # equal centres, objects on them
                          (X * 1e6, X[:9] * 1e6), (X[:1], X[:4]), (X[:50], X[:1]),
                          (X, X[rng.choice(5000, 23, replace=False)]),    # 16 + 7 centres: both blocks
                          # rows go in pairs within a chunk of 4096: an odd last row, a chunk of one row
                          (X[:4999], X[rng.choice(5000, 8, replace=False)] + 0.5),
                          (grid[:4097], grid[rng.choice(5000, 50, replace=False)])):
        engine, _ = _engine.assign(_engine.MixedSpace.dense(data), centres, np.empty((len(centres), 0)), 1)
        for threads in (1, 2):
            assert np.array_equal(_engine.nearest_dense(data, centres, threads), engine)


@pytest.mark.parametrize("simd", ["baseline", "avx2", "avx512"])
def test_nearest_centre_pass_equals_the_engine_in_every_variant(simd):
    """The ranking sums in each instruction set (one the CPU lacks falls back to a narrower one):
    K across the tiles' widths (1 to 7 vectors of centres, split in nearly equal tiles) and row
    counts that leave every remainder of the row tiles (up to 8 rows) and of the 24-row blocks."""
    from cclust import _engine
    from cclust._ext import _distances

    rng = np.random.default_rng(11)
    X = rng.normal(0, 2, (3000, 25))
    grid = np.round(X[:, :3])
    for k in (2, 8, 9, 16, 17, 24, 25, 33, 41, 49, 50, 57, 65):
        centres = X[rng.choice(3000, k, replace=False)] + rng.normal(0, 0.05, (k, 25))
        for n in (1, 2, 3, 5, 7, 9, 23, 25, 47, 3000):
            engine, _ = _engine.assign(_engine.MixedSpace.dense(X[:n]), centres, np.empty((k, 0)), 1)
            assert np.array_equal(_distances.nearest_centres(X[:n], centres, 1, simd), engine), (k, n)
        on_grid = grid[rng.choice(3000, k, replace=False)]   # exact ties, decided on the engine's sums
        engine, _ = _engine.assign(_engine.MixedSpace.dense(grid), on_grid, np.empty((k, 0)), 1)
        for threads in (1, 2):
            assert np.array_equal(_distances.nearest_centres(grid, on_grid, threads, simd), engine), k
    # sums that overflow to NaN (features near 1e160) are decided by the scalar scan in every variant
    Z = rng.normal(0, 1, (600, 4))
    Z[::3] *= 1e160
    for centres in (Z[:9], np.vstack([np.zeros((1, 4)), Z[:10:3] + 1.0]), np.vstack([Z[:10:3] + 1.0, Z[1:8]])):
        centres = np.ascontiguousarray(centres)
        assert np.array_equal(_distances.nearest_centres(Z, centres, 1, simd),
                              _distances.nearest_centres(Z, centres, 1, "baseline"))
