"""Soft ensembles (Hornik 2005): validation, views, the dispatcher and the methods accepting them."""
import numpy as np
import pytest

import cclust
from cclust.base import declare, method_info
from cclust.errors import ValidationError
from cclust.soft import SoftEnsemble
from cclust.soft_generators import fuzzy_cmeans, fuzzy_cmeans_memberships, gmm_proba
from tests.factories import random_memberships


def _random_soft(n, ks, seed):
    return random_memberships(n, ks, seed, power=3)


def test_coassociation_is_expected_comembership_literal():
    mats = _random_soft(7, [2, 3, 4], 0)
    w = np.array([0.5, 0.2, 0.3])
    S = SoftEnsemble(mats, weights=w)
    A = np.zeros((7, 7))
    for wi, U in zip(w, mats):
        for x in range(7):
            for y in range(7):
                A[x, y] += wi * sum(U[x, l] * U[y, l] for l in range(U.shape[1]))
    np.testing.assert_allclose(S.coassociation(), A, rtol=0, atol=1e-14)


def test_hard_special_case_equals_ensemble():
    labels = np.array([[0, 1], [0, 1], [1, 0], [2, 0]])
    E = cclust.Ensemble(labels)
    S = SoftEnsemble(E)
    assert S.is_hard and S.n_clusters.tolist() == [3, 2]
    np.testing.assert_array_equal(S.coassociation(), E.coassociation())
    assert S.to_ensemble() == cclust.Ensemble(labels)
    # a list of label vectors and of memberships mixed
    S2 = SoftEnsemble([labels[:, 0], np.eye(2)[labels[:, 1]]])
    assert S2 == S


@pytest.mark.parametrize("bad, match", [
    ([np.array([[0.5, 0.4], [0.5, 0.5]])], r"memberships\[0\]: row 0 sums to"),
    ([np.array([[1.2, -0.2], [0.5, 0.5]])], r"memberships\[0\] has a negative membership"),
    ([np.array([[np.nan, 1.0], [0.5, 0.5]])], r"memberships\[0\] contains NaN"),
    ([np.ones((3, 1))], r"memberships\[0\] has K_i = 1"),
    ([np.eye(2), np.eye(3)], r"memberships: the partitions cover different numbers"),
    ([np.ones((2, 2, 2))], r"memberships\[0\] must be a 2-D"),
    ([], r"memberships must hold at least one"),
])
def test_bad_memberships_name_the_argument(bad, match):
    with pytest.raises(ValidationError, match=match):
        SoftEnsemble(bad)


def test_bad_weights_and_missing():
    with pytest.raises(ValidationError, match="weights"):
        SoftEnsemble([np.eye(2)], weights=[-1])
    with pytest.raises(ValidationError, match="missing labels"):
        SoftEnsemble(cclust.Ensemble([[0, 1, -1]]))


def test_rows_within_tolerance_are_renormalised():
    U = np.array([[0.5 + 1e-9, 0.5], [0.0, 1.0]])
    S = SoftEnsemble([U])
    assert abs(S.memberships[0].sum(1) - 1).max() < 1e-15


def test_dispatcher_refuses_soft_for_hard_only_methods_and_converts_hard():
    soft = SoftEnsemble(_random_soft(20, [2, 3], 1))
    assert not method_info(cclust.get("ivc")).accepts_soft
    with pytest.raises(ValidationError, match=r"ensemble: 'ivc' does not accept soft partitions"):
        cclust.consensus("ivc", soft, 2, random_state=0)
    with pytest.raises(ValidationError, match="ensemble: a hard ensemble is needed"):
        cclust.get("ivc")(soft, 2, random_state=0)
    hard = SoftEnsemble([[0, 0, 1, 1, 1], [0, 0, 0, 1, 1]])
    assert cclust.consensus("ivc", hard, 2, random_state=0).labels.tolist() == [0, 0, 1, 1, 1]


def test_declare_accepts_soft_default_false():
    @declare()
    def f(ensemble, n_clusters, *, random_state=None):
        pass

    @declare(accepts_soft=True)
    def g(ensemble, n_clusters, *, random_state=None):
        pass

    assert method_info(f).accepts_soft is False and method_info(g).accepts_soft is True


def _blob_memberships(seed, n_per=15, noise=0.15):
    """Soft partitions of three well separated groups: membership (1 - noise) on the true cluster."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n_per)
    mats = []
    for _ in range(5):
        perm = rng.permutation(3)
        U = np.full((y.size, 3), noise / 2)
        U[np.arange(y.size), perm[y]] = 1 - noise
        U += rng.random(U.shape) * 0.05
        mats.append(U / U.sum(1, keepdims=True))
    return y, SoftEnsemble(mats)


@pytest.mark.parametrize("method", ["eac", "cspa", "hbgf", "mcla"])
def test_soft_graph_and_pairwise_methods_recover_groups(method):
    y, S = _blob_memberships(0)
    assert method_info(cclust.get(method)).accepts_soft
    labels = cclust.consensus(method, S, 3, random_state=0).labels
    assert cclust.get("ari")(labels, y) == 1.0


def test_soft_eac_uses_expected_comembership():
    from scipy.cluster.hierarchy import cut_tree, linkage
    from scipy.spatial.distance import squareform

    S = SoftEnsemble(_random_soft(12, [2, 3, 3], 3))
    D = np.round(1 - S.coassociation(), 12)
    np.fill_diagonal(D, 0)
    expected = cut_tree(linkage(squareform(D, checks=False), "average"), n_clusters=3).reshape(-1)
    got = cclust.consensus("eac", S, 3).labels
    assert cclust.get("ari")(got, expected) == 1.0


def test_soft_sparse_routes_refused():
    S = SoftEnsemble(_random_soft(12, [2, 3], 3))
    with pytest.raises(ValidationError, match="n_neighbors"):
        cclust.consensus("eac", S, 2, linkage="single", n_neighbors=3)
    with pytest.raises(ValidationError, match="n_neighbors"):
        cclust.consensus("cspa", S, 2, n_neighbors=3)


def test_fuzzy_cmeans_fixed_point_literal():
    X = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.2], [3.0, 3.0], [3.1, 2.9], [2.8, 3.0]])
    U, _ = fuzzy_cmeans_memberships(X, 2, tol=1e-12, max_iter=1000, random_state=0)
    # at convergence U satisfies Bezdek's two update equations
    Um = U ** 2
    C = Um.T @ X / Um.sum(0)[:, None]
    d = np.sqrt(((X[:, None, :] - C[None]) ** 2).sum(-1))
    expected = np.array([[1 / sum((d[x, k] / d[x, j]) ** 2 for j in range(2)) for k in range(2)]
                         for x in range(6)])
    np.testing.assert_allclose(U, expected, atol=1e-9)


@pytest.mark.parametrize("gen", [fuzzy_cmeans, gmm_proba])
def test_soft_generators(gen):
    from cclust.datasets import load_iris

    X, _ = load_iris()
    S = gen(X, 3, n_partitions=3, memberships=True, random_state=0)
    assert isinstance(S, SoftEnsemble) and S.shape == (150, 3)
    S2 = gen(X, 3, n_partitions=3, memberships=True, random_state=0, n_jobs=2)
    assert S == S2
    E = gen(X, 3, n_partitions=3, random_state=0)
    assert isinstance(E, cclust.Ensemble) and E == S.harden()
    with pytest.raises(ValidationError, match="memberships"):
        gen(X, 3, n_partitions=2, memberships="yes")
