"""The BLAS route of U-SPEC's hybrid representative selection (Huang, Wang, Wu, Lai & Kwoh 2020,
sec. 3.1.1) from ``BLAS_MIN_FEATURES`` features on: k-means with distances by products
(``cclust._dense_blocks.BlasDenseBlocks``) under the engine's centre update, empty-cluster reseed and
stopping rule. Checked against the exact route (the engine's bounded Lloyd, Hamerly 2010): the
same partition and objective where both converge to it, valid Lloyd output otherwise, and the
same result for any thread count."""
import numpy as np
import pytest

from cclust import _engine, _spectral as spectral_module
from cclust._spectral import BLAS_MIN_FEATURES, blas_kmeans, engine_kmeans, hybrid_representatives


def objective(Y, labels, centres):
    return float(((Y - centres[labels]) ** 2).sum())


def blobs(n, d, k, rng, spread=0.05):
    centres = rng.normal(size=(k, d)) * 10.0
    return np.ascontiguousarray(centres[rng.integers(0, k, size=n)] + spread * rng.normal(size=(n, d)))


@pytest.mark.parametrize("d", [32, 100])
def test_same_partition_as_the_exact_route(d):
    rng = np.random.default_rng(d)
    Y = blobs(3000, d, 40, rng)
    for k, max_iter in [(40, 10), (120, 10), (7, 30)]:
        labels, centres = blas_kmeans(Y, k, np.random.default_rng(k), max_iter)
        exact_labels, exact_centres = engine_kmeans(Y, k, np.random.default_rng(k), max_iter)
        np.testing.assert_array_equal(labels, exact_labels)
        np.testing.assert_allclose(centres, exact_centres, rtol=1e-12, atol=1e-12)
        exact = objective(Y, exact_labels, exact_centres)
        assert objective(Y, labels, centres) <= exact * (1 + 1e-9)


def test_valid_lloyd_output_on_noise_and_duplicates():
    """Where the two routes may part on a near tie: every cluster non-empty (the reseed ran on
    the duplicates), each object at a nearest centre up to the products' rounding, the
    objective within 1e-9 relative of the exact route's when both converge."""
    rng = np.random.default_rng(3)
    base = rng.normal(size=(40, 48))
    for Y in (np.ascontiguousarray(rng.normal(size=(2000, 48))),
              np.ascontiguousarray(base[rng.integers(0, 40, size=1500)])):
        for k in (30, 40):
            labels, centres = blas_kmeans(Y, k, np.random.default_rng(k), 100)
            assert np.bincount(labels, minlength=k).min() >= 1
            costs = ((Y[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
            own = costs[np.arange(Y.shape[0]), labels]
            scale = (Y * Y).sum(axis=1) + (centres * centres).sum(axis=1).max()
            assert (own <= costs.min(axis=1) + 1e-12 * scale).all()
            exact_labels, exact_centres = engine_kmeans(Y, k, np.random.default_rng(k), 100)
            exact = objective(Y, exact_labels, exact_centres)
            assert objective(Y, labels, centres) <= exact * (1 + 1e-9)


def test_threads_change_nothing():
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(11)
    # five BLAS row pieces; then 1,500 centres, pieces of 682 rows
    for Y, k in [(rng.normal(size=(5000, 64)), 150), (rng.normal(size=(3000, 40)), 1500)]:
        Y = np.ascontiguousarray(Y)
        runs = []
        for blas_threads in (1, 2):
            with threadpool_limits(blas_threads, user_api="blas"):
                for n_threads in (1, 2):
                    runs.append(blas_kmeans(Y, k, np.random.default_rng(0), 10, n_threads))
        for labels, centres in runs[1:]:
            np.testing.assert_array_equal(labels, runs[0][0])
            assert centres.tobytes() == runs[0][1].tobytes()


def test_hybrid_representatives_takes_the_route_by_d(monkeypatch):
    rng = np.random.default_rng(2)
    calls = []
    for name in ("engine_kmeans", "blas_kmeans"):
        original = getattr(spectral_module, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(spectral_module, name, spy)
    for d, route in [(BLAS_MIN_FEATURES - 1, "engine_kmeans"), (BLAS_MIN_FEATURES, "blas_kmeans")]:
        X = rng.normal(size=(1200, d))
        R = hybrid_representatives(X, 50, 0)
        assert calls[-1] == route
        assert R.shape == (50, d)
    # the BLAS route gives the exact route's representatives on separated data
    X = blobs(2000, 40, 20, rng)
    monkeypatch.setattr(spectral_module, "BLAS_MIN_FEATURES", 10**6)
    exact = hybrid_representatives(X, 20, 5)
    monkeypatch.setattr(spectral_module, "BLAS_MIN_FEATURES", BLAS_MIN_FEATURES)
    np.testing.assert_allclose(hybrid_representatives(X, 20, 5), exact, rtol=1e-12, atol=1e-12)


def test_same_seeds_as_the_exact_route():
    rng = np.random.default_rng(4)
    Y = np.ascontiguousarray(rng.normal(size=(400, 33)))
    # max_iter = 0: the assignment to the random seeds, then the centres of that assignment
    labels, centres = blas_kmeans(Y, 25, np.random.default_rng(9), 0)
    exact_labels, exact_centres = engine_kmeans(Y, 25, np.random.default_rng(9), 0)
    np.testing.assert_array_equal(labels, exact_labels)
    np.testing.assert_allclose(centres, exact_centres, rtol=1e-12, atol=1e-12)
    assert _engine.random_seeds(np.random.default_rng(9), 400, 25).shape == (25,)
