import numpy as np
import pytest

import cclust
from cclust.consensus_functions import mixture
from cclust import Ensemble
from cclust.consensus_functions.mixture import em_mixture
from cclust.errors import ValidationError
import reference_voting as ref
from factories import noisy_labels_with_truth as noisy_labels


def test_registered():
    assert cclust.get("em-mixture") is em_mixture


@pytest.mark.parametrize("smoothing", [0.0, 0.01])
@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
def test_em_step_matches_reference(rng, smoothing, missing):
    L, _ = noisy_labels(rng, n=25, r=4, missing=missing)
    E = Ensemble(L).canonical()
    w = rng.random(4) + 0.5
    w = w / w.sum()
    E = Ensemble(E.labels, weights=w).canonical()
    resp = rng.dirichlet(np.ones(3), size=25)
    alpha, theta = mixture._m_step(E.compact_labels(), np.ascontiguousarray(E.offsets, dtype=np.int64), resp, smoothing, 1)
    scale = np.repeat(E.weights * E.n_partitions, E.n_clusters)
    new, loglik, _ = mixture._e_step(np.ascontiguousarray(E.labels), E.offsets, scale, alpha, theta, 1)
    r_alpha, r_theta, r_new, r_loglik = ref.em_step(E.labels, E.weights, resp, smoothing)
    np.testing.assert_allclose(alpha, r_alpha, rtol=1e-12)
    for (m, j, lab), p in r_theta.items():
        assert theta[E.offsets[j] + lab, m] == pytest.approx(p, rel=1e-12)
    np.testing.assert_allclose(new, r_new, atol=1e-12)
    assert loglik == pytest.approx(r_loglik, rel=1e-12)


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
def test_penalised_log_likelihood_never_decreases(rng, missing):
    L, _ = noisy_labels(rng, n=120, r=10, k=4, missing=missing, noise=0.5)
    res = em_mixture(L, 4, random_state=0, n_init=3)
    trace = res.extras["objective_trace"]
    assert trace.shape[0] == res.n_iter >= 2
    assert (np.diff(trace) >= -1e-9 * np.abs(trace[1:])).all()
    assert res.extras["penalized_log_likelihood"] == trace[-1]
    assert res.objective in res.extras["objectives"].tolist()
    assert res.extras["penalized_log_likelihood"] < res.objective  # log prior of the smoothing is < 0


def test_recovers_truth_of_noisy_partitions(rng):
    L, truth = noisy_labels(rng, n=90, r=12, k=3, noise=0.2)
    res = em_mixture(L, 3, random_state=0)
    assert cclust.get("ari")(truth, res.labels) > 0.9
    np.testing.assert_allclose(res.extras["responsibilities"].sum(axis=1), 1.0)
    assert res.extras["mixing"].sum() == pytest.approx(1.0)


def test_bad_input():
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 0]])
    with pytest.raises(ValidationError, match="distinct label vectors"):
        em_mixture(L, 4)
    with pytest.raises(ValidationError, match="n_init"):
        em_mixture(L, 2, n_init=0)
    with pytest.raises(ValidationError, match="smoothing"):
        em_mixture(L, 2, smoothing=-1.0)
    with pytest.raises(ValidationError, match="tol"):
        em_mixture(L, 2, tol=-1.0)
