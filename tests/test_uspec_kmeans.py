"""The bounded dense Lloyd of U-SPEC's hybrid representative selection (Huang, Wang, Wu, Lai &
Kwoh 2020, sec. 3.1.1): ``dense_lloyd_bounded`` (Hamerly 2010's bounds with a rounding slack)
against the engine's own ``assign`` + ``lloyd``, which it must reproduce bit for bit: labels,
centres, objective, n_iter and stop, ties and empty clusters included, for any thread count."""
import numpy as np
import pytest

from cclust import _engine
from cclust._ext import _kmeans
from cclust._spectral import engine_kmeans as uspec_kmeans
from cclust.uspec import hybrid_representatives


def engine_run(Y, seeds, max_iter, tol):
    """The generators' k-means from given seeds: the engine's assign, then its Lloyd driver."""
    space = _engine.MixedSpace.dense(Y)
    start = _engine.labels_from_seeds(space, seeds, 1)
    return _engine.lloyd(space, start, seeds.shape[0], max_iter=max_iter, tol=tol, n_threads=1)


def assert_same(Y, seeds, max_iter, tol=0.0, n_threads=1):
    run = engine_run(Y, seeds, max_iter, tol)
    labels, n_iter, converged, objective, centres, stats = _kmeans.dense_lloyd_bounded(
        Y, seeds, max_iter, tol, n_threads)
    np.testing.assert_array_equal(labels, run.labels)
    assert centres.tobytes() == run.dense_centers.tobytes()
    assert objective == run.objective
    assert (n_iter, converged) == (run.n_iter, run.converged)
    return stats


def data(kind, n, d, rng):
    if kind == "normal":
        return rng.normal(size=(n, d))
    if kind == "grid":  # integer points: many exact ties between centres
        return rng.integers(0, 4, size=(n, d)).astype(np.float64)
    if kind == "duplicates":  # repeated rows: seeds on equal points leave clusters empty
        base = rng.normal(size=(max(2, n // 20), d))
        return base[rng.integers(0, base.shape[0], size=n)]
    if kind == "scales":  # features of very different magnitudes, tiny and huge
        return rng.normal(size=(n, d)) * np.logspace(-150, 150, d)[None, :]
    raise AssertionError(kind)


@pytest.fixture(params=_kmeans.simd_variants())
def simd(request):
    """Each instruction-set variant of the costs of a block of rows this CPU runs."""
    _kmeans._force_simd(request.param)
    yield request.param
    _kmeans._force_simd(None)


@pytest.mark.parametrize("kind", ["normal", "grid", "duplicates", "scales"])
@pytest.mark.parametrize("d", [1, 2, 5, 12, 25])
def test_bitwise_the_engine(kind, d, simd):
    rng = np.random.default_rng(d)
    for n, k, max_iter in [(60, 7, 10), (500, 40, 3), (9000, 90, 10), (300, 300, 5), (50, 1, 4), (700, 29, 5)]:
        Y = np.ascontiguousarray(data(kind, n, d, rng))
        seeds = _engine.random_seeds(rng, n, k)
        assert_same(Y, seeds, max_iter)


def test_bounds_skip_most_costs_and_threads_change_nothing():
    rng = np.random.default_rng(5)
    Y = np.ascontiguousarray(rng.normal(size=(9000, 2)))
    seeds = _engine.random_seeds(rng, 9000, 200)
    full, bounded = assert_same(Y, seeds, 20)
    assert bounded > full  # the bounds do settle objects (a test that can fail)
    for threads in (2, 3):
        assert tuple(assert_same(Y, seeds, 20, n_threads=threads)) == (full, bounded)


def test_tolerance_and_zero_iterations():
    rng = np.random.default_rng(7)
    Y = np.ascontiguousarray(rng.normal(size=(2000, 3)))
    seeds = _engine.random_seeds(rng, 2000, 25)
    for max_iter, tol in [(0, 0.0), (1, 0.0), (100, 1e-3), (100, 0.0)]:
        assert_same(Y, seeds, max_iter, tol)


def test_reseed_of_empty_clusters_is_the_engines():
    # 20 distinct points, 30 clusters: seeds on equal points leave clusters empty at the start.
    rng = np.random.default_rng(3)
    Y = np.ascontiguousarray(np.repeat(rng.normal(size=(20, 2)), 5, axis=0))
    for trial in range(5):
        seeds = _engine.random_seeds(rng, Y.shape[0], 30)
        assert_same(Y, seeds, 10)


def test_uspec_kmeans_is_the_generators_run():
    from cclust.generators import _kmeans_labels

    rng = np.random.default_rng(11)
    Y = np.ascontiguousarray(rng.normal(size=(3000, 4)))
    labels, centres = uspec_kmeans(Y, 50, np.random.default_rng(1), 10, 2)
    ref_labels, ref_centres = _kmeans_labels(Y, 50, np.random.default_rng(1), "random", 10, 0.0, 1)
    np.testing.assert_array_equal(labels, ref_labels)
    assert labels.dtype == ref_labels.dtype
    assert centres.tobytes() == ref_centres.tobytes()
    R = hybrid_representatives(Y, 100, random_state=4, n_jobs=2)
    assert R.tobytes() == hybrid_representatives(Y, 100, random_state=4, n_jobs=1).tobytes()


@pytest.mark.parametrize("bad, match", [
    (lambda Y: (Y, np.array([0, 0], dtype=np.int64)), "distinct"),
    (lambda Y: (Y, np.array([0, 99], dtype=np.int64)), "out of range"),
    (lambda Y: (np.where(np.arange(20)[:, None] == 3, np.nan, Y), np.array([0, 1], dtype=np.int64)), "finite"),
])
def test_bad_input_is_refused(bad, match):
    Y = np.ascontiguousarray(np.random.default_rng(0).normal(size=(20, 2)))
    Z, seeds = bad(Y)
    with pytest.raises(ValueError, match=match):
        _kmeans.dense_lloyd_bounded(np.ascontiguousarray(Z), seeds, 5, 0.0, 1)


def test_tcut_discretisation_is_the_engines(monkeypatch):
    import cclust.graph as graph
    from cclust.datasets import make_moons
    from cclust.uspec import uspec_graph

    def engine_lloyd(X, seeds, max_iter, n_threads):
        return engine_run(np.ascontiguousarray(X), seeds, max_iter, 0.0)

    X, _ = make_moons(3000, random_state=0)
    B = uspec_graph(X, n_representatives=200, random_state=0).affinity
    for k, n_init, max_iter in [(2, 3, 100), (25, 1, 5), (40, 2, 3)]:
        got = graph.tcut(B, k, random_state=k, n_init=n_init, max_iter=max_iter)
        with monkeypatch.context() as patch:
            patch.setattr(_engine, "dense_lloyd", engine_lloyd)
            want = graph.tcut(B, k, random_state=k, n_init=n_init, max_iter=max_iter)
        np.testing.assert_array_equal(got.labels, want.labels)
        assert (got.objective, got.n_iter) == (want.objective, want.n_iter)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 1601, 4099, 4102])
def test_bitwise_the_engine_for_any_count_of_objects_in_a_chunk(n, simd):
    # each pass prices the objects at their own centres four at a time, then the last one to
    # three of a chunk (4096 objects) one by one: every remainder, in one chunk and across two,
    # at the small K of select_k's resamples
    rng = np.random.default_rng(n)
    Y = np.ascontiguousarray(rng.normal(size=(n, 25)) * np.linspace(1.0, 5.0, 25))
    for k in sorted({1, min(n, 2), min(n, 10)}):
        assert_same(Y, _engine.random_seeds(rng, n, k), 100, 1e-4)
