"""SEC (Liu, Wu, Liu, Tao & Fu 2017): weighted K-means on D^{-1} B against the explicit matrices."""
import numpy as np
import pytest

import reference_sec as ref
from reference_kmeans import lloyd as ref_lloyd
import cclust
from cclust import Ensemble, _engine
from cclust.consensus_functions.sec import degrees, sec
from cclust.errors import ValidationError
from cclust.metrics import ari
from factories import noisy_labels, noisy_labels_with_truth


def test_registered():
    assert cclust.get("sec") is sec


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing"])
@pytest.mark.parametrize("seed", range(4))
def test_degrees_are_the_coassociation_row_sums(seed, missing):
    rng = np.random.default_rng(seed)
    E = Ensemble(noisy_labels(rng, n=30, missing=missing), weights=rng.random(6) + 0.1)
    S = ref.coassociation(E.labels, E.weights)
    np.testing.assert_allclose(degrees(E), S.sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing"])
@pytest.mark.parametrize("seed", range(5))
def test_matches_weighted_kmeans_on_the_explicit_rows(seed, missing):
    """One restart equals the textbook weighted Lloyd loop on D^{-1} B W^{1/2} with weights D,
    from the same random objects (the engine's tie and empty-cluster rules)."""
    rng = np.random.default_rng(seed)
    E = Ensemble(noisy_labels(rng, n=45, missing=missing), weights=rng.random(6) + 0.1)
    k = 3 + seed % 2
    got = sec(E, k, init="random", n_init=1, random_state=seed)
    X, d = ref.scaled_rows(E.labels, E.weights)
    seeds = _engine.random_seeds(np.random.default_rng(seed), E.n_samples, k)
    dist = ((X[:, None, :] - X[seeds][None, :, :]) ** 2).sum(axis=2)
    start = dist.argmin(axis=1).astype(np.int32)
    want = ref_lloyd(X, 1.0, np.empty((45, 0), dtype=np.int32), np.zeros(1, dtype=np.int64), np.empty(0), 0,
                     0.0, start, k, 100, 0.0, object_weights=d)
    assert ari(got.labels, want[0]) == 1.0
    assert got.objective == pytest.approx(want[4], rel=1e-9)


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing"])
@pytest.mark.parametrize("seed", range(4))
def test_objective_is_ncut_plus_a_constant(seed, missing):
    """Liu et al.'s Theorem 1: weighted K-means objective = sum_i ||b_i||_W^2 / d_i - K + Ncut(S)."""
    rng = np.random.default_rng(seed)
    E = Ensemble(noisy_labels(rng, n=36, missing=missing), weights=rng.random(6) + 0.1)
    res = sec(E, 3, random_state=seed)
    S = ref.coassociation(E.labels, E.weights)
    assert res.objective == pytest.approx(res.extras["ncut_offset"] + ref.ncut(S, res.labels), rel=1e-10)
    # ... for any labelling, not only the optimum: the engine's objective of random labels.
    d = degrees(E)
    space = _engine.MixedSpace(np.empty((36, 0)), 0.0, np.ascontiguousarray(E.labels, dtype=np.int32),
                               E.offsets, E.weights, 0, 0.0).with_weights(d, 1.0 / d)
    labels = rng.integers(0, 3, 36).astype(np.int32)
    labels[:3] = [0, 1, 2]
    from cclust._ext import _kmeans
    dense, cat = _kmeans.centroids(*space._args(), labels, 3, 1, **space._weighting())
    _, total = _kmeans.objective(*space._args(), dense, cat, labels, 1, **space._weighting())
    assert total == pytest.approx(res.extras["ncut_offset"] + ref.ncut(S, labels), rel=1e-10)


def test_recovers_noisy_truth():
    L, truth = noisy_labels_with_truth(np.random.default_rng(0), n=300, r=20, k=4, noise=0.3)
    for init in ("random", "k-means++"):
        assert ari(sec(L, 4, init=init, random_state=0).labels, truth) > 0.95


def test_identical_for_any_thread_count():
    L = noisy_labels(np.random.default_rng(1), n=9000, r=12, k=5, missing=0.1)
    one = sec(L, 5, random_state=3, n_jobs=1)
    two = sec(L, 5, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(one.labels, two.labels)
    assert one.objective == two.objective


@pytest.mark.parametrize("kwargs, match", [
    (dict(init="kmeans"), "init must be one of"),
    (dict(n_init=0), "n_init"),
    (dict(max_iter=0), "max_iter"),
    (dict(tol=-1.0), "tol"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        sec(noisy_labels(np.random.default_rng(0)), 3, **kwargs)


def test_refuses_objects_missing_everywhere():
    L = noisy_labels(np.random.default_rng(0))
    L[4] = -1
    with pytest.raises(ValidationError, match="missing from every partition"):
        sec(L, 3)


def test_refuses_more_clusters_than_objects():
    with pytest.raises(ValidationError, match="n_clusters"):
        sec(noisy_labels(np.random.default_rng(0), n=5), 6)
