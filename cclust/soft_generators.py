"""Generators of soft basic partitions: fuzzy c-means (Bezdek 1981) and Gaussian mixtures.

Both return a hard :class:`cclust.Ensemble` of each object's most likely cluster by default,
as every registered generator does (the conformance kit asks for an Ensemble), and a
:class:`cclust.soft.SoftEnsemble` of the membership matrices with ``memberships=True``, for
the consensus functions that accept soft partitions (Hornik 2005).

Partition j draws from the j-th child seed of ``random_state`` and the results are collected
in order, so the ensemble is the same for any ``n_jobs``.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from cclust.errors import MissingDependencyError, ValidationError
from cclust.validation import (RandomStateLike, check_array_2d, check_distinct_rows, check_float, check_int,
                               check_k_range, check_partition_request, check_n_jobs, spawn_seed_sequences)

if TYPE_CHECKING:
    from cclust.ensemble import Ensemble
    from cclust.soft import SoftEnsemble

__all__ = ["fuzzy_cmeans", "gmm_proba", "fuzzy_cmeans_memberships"]


def fuzzy_cmeans_memberships(X: npt.ArrayLike, n_clusters: int, *, fuzzifier: float = 2.0, max_iter: int = 300,
                             tol: float = 1e-6, random_state: RandomStateLike = None
                             ) -> tuple[npt.NDArray[np.float64], int]:
    """Fuzzy c-means (Bezdek 1981): the (n, K) memberships minimising ``sum u_xk^m ||x - c_k||^2``.

    Alternates ``c_k = sum_x u_xk^m x / sum_x u_xk^m`` and
    ``u_xk = 1 / sum_j (d_xk / d_xj)^(2 / (m - 1))`` (d the Euclidean distance; an object on a
    centre belongs to it, split equally among coinciding centres) from random memberships,
    until the largest change of a membership is below ``tol``.

    Returns
    -------
    U : ndarray of shape (n_samples, n_clusters), rows summing to one
    n_iter : int
    """
    from cclust.validation import check_random_state

    X = check_array_2d(X, "X")
    n = X.shape[0]
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=n)
    check_distinct_rows(X, n_clusters)
    m = check_float(fuzzifier, "fuzzifier", low=1, low_open=True)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    rng = check_random_state(random_state)
    U = rng.random((n, n_clusters))
    U /= U.sum(axis=1, keepdims=True)
    exponent = 2.0 / (m - 1.0)
    sq = (X ** 2).sum(axis=1)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        Um = U ** m
        C = (Um.T @ X) / Um.sum(axis=0)[:, None]
        d2 = np.maximum(sq[:, None] - 2.0 * X @ C.T + (C ** 2).sum(axis=1)[None, :], 0.0)
        zero = d2 <= 1e-300
        with np.errstate(divide="ignore"):
            inv = np.where(zero, 0.0, d2 ** (-exponent / 2.0))
        new = inv / inv.sum(axis=1, keepdims=True) if not zero.any() else None
        if new is None:
            on = zero.any(axis=1)
            new = np.empty_like(U)
            new[~on] = inv[~on] / inv[~on].sum(axis=1, keepdims=True)
            new[on] = zero[on] / zero[on].sum(axis=1, keepdims=True)
        change = float(np.abs(new - U).max())
        U = new
        if change < tol:
            break
    return U, n_iter


def _check_common(X, n_clusters, n_partitions, k_range):
    X = check_array_2d(X, "X")
    n_clusters, n_partitions = check_partition_request(X, n_clusters, n_partitions)
    low, high = check_k_range(k_range, (n_clusters, n_clusters), X.shape[0])
    return X, low, max(2, high), n_partitions


def _collect(one_partition, X, low, high, random_state, n_partitions, n_jobs, memberships, provenance):
    from cclust.soft import SoftEnsemble

    if not isinstance(memberships, (bool, np.bool_)):
        raise ValidationError(f"memberships must be True or False, got {memberships!r}.")
    seqs = spawn_seed_sequences(random_state, n_partitions)
    workers = min(check_n_jobs(n_jobs, "n_jobs"), n_partitions)

    def run(seq):
        rng = np.random.default_rng(seq)
        k = int(rng.integers(max(2, low), high + 1))
        U = one_partition(X, k, int(rng.integers(2**31 - 1)))
        keep = U.sum(axis=0) > 0
        return U[:, keep] if keep.sum() >= 2 else U

    if workers <= 1:
        mats = [run(s) for s in seqs]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            mats = list(pool.map(run, seqs))
    soft = SoftEnsemble(mats, provenance=provenance)
    return soft if memberships else soft.harden()


def fuzzy_cmeans(X: npt.ArrayLike, n_clusters: int, *, n_partitions: int = 10, k_range: tuple[int, int] | None = None,
                 fuzzifier: float = 2.0, max_iter: int = 300, tol: float = 1e-6, memberships: bool = False,
                 random_state: RandomStateLike = None, n_jobs: int | None = None) -> Ensemble | SoftEnsemble:
    """Fuzzy c-means partitions (Bezdek 1981), each from random initial memberships.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        K of every partition unless ``k_range`` is given.
    n_partitions : int, default=10
    k_range : (int, int), default=None
        Inclusive range K_j is drawn from for partition j (at least 2); default ``(K, K)``.
    fuzzifier : float > 1, default=2.0
        The exponent m; near 1 the memberships approach 0/1, larger m makes them fuzzier.
    max_iter, tol : int, float
        Per partition: at most ``max_iter`` alternations, stopping when no membership changes
        by more than ``tol``.
    memberships : bool, default=False
        True: return a :class:`cclust.soft.SoftEnsemble` of the membership matrices; False: the
        :class:`cclust.Ensemble` of each object's most likely cluster.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Partitions computed in parallel threads; the ensemble is identical for any value.

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> S = fuzzy_cmeans(X, 3, n_partitions=4, memberships=True, random_state=0)
    >>> S.shape, bool(abs(S.memberships[0].sum(1) - 1).max() < 1e-12)
    ((150, 4), True)
    """
    X, low, high, n_partitions = _check_common(X, n_clusters, n_partitions, k_range)
    check_float(fuzzifier, "fuzzifier", low=1, low_open=True)

    def one(Xp, k, seed):
        return fuzzy_cmeans_memberships(Xp, k, fuzzifier=fuzzifier, max_iter=max_iter, tol=tol, random_state=seed)[0]

    return _collect(one, X, low, high, random_state, n_partitions, n_jobs, memberships, "fuzzy-cmeans")


def gmm_proba(X: npt.ArrayLike, n_clusters: int, *, n_partitions: int = 10, k_range: tuple[int, int] | None = None,
              covariance_type: str = "full", max_iter: int = 100, memberships: bool = False,
              random_state: RandomStateLike = None, n_jobs: int | None = None) -> Ensemble | SoftEnsemble:
    """Gaussian mixtures by EM (scikit-learn's ``GaussianMixture``), keeping ``predict_proba``.

    Each partition fits a mixture of K_j components from its own seed; its memberships are the
    posterior probabilities of the components. Components that no object has any probability
    for are dropped.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
    n_partitions : int, default=10
    k_range : (int, int), default=None
        Inclusive range K_j is drawn from (at least 2); default ``(K, K)``.
    covariance_type : {"full", "tied", "diag", "spherical"}, default="full"
    max_iter : int, default=100
    memberships : bool, default=False
        True: a :class:`cclust.soft.SoftEnsemble` of the posterior probabilities; False: the
        :class:`cclust.Ensemble` of each object's most probable component.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Partitions computed in parallel threads; the ensemble is identical for any value.
    """
    try:
        from sklearn.mixture import GaussianMixture
    except ImportError:  # pragma: no cover - the sklearn extra
        raise MissingDependencyError("gmm-proba needs scikit-learn, which cannot be imported: "
                                     "pip install 'cclust[sklearn]'.") from None
    X, low, high, n_partitions = _check_common(X, n_clusters, n_partitions, k_range)
    if covariance_type not in ("full", "tied", "diag", "spherical"):
        raise ValidationError(f"covariance_type must be one of 'full', 'tied', 'diag', 'spherical', "
                              f"got {covariance_type!r}.")
    max_iter = check_int(max_iter, "max_iter", low=1)

    def one(Xp, k, seed):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = GaussianMixture(k, covariance_type=covariance_type, max_iter=max_iter, reg_covar=1e-6,
                                    random_state=seed).fit(Xp)
        P = model.predict_proba(Xp)
        return P / P.sum(axis=1, keepdims=True)

    return _collect(one, X, low, high, random_state, n_partitions, n_jobs, memberships, "gmm-proba")
