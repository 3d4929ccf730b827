"""Gordon & Vichi's (2001) median partitions, as R's clue computes them (Hornik 2005): the
least-squares consensus of memberships matched cluster by cluster (GV1) and of co-memberships
(GV3). Every basic partition i is an n x K_i membership matrix U_i with weight w_i (see
:mod:`cclust.consensus_functions.median` for the common setting); the consensus is an n x K
stochastic matrix M.

* **GV1** (Gordon & Vichi 2001, model 1): ``sum_i w_i sum_{matched (j, l)} ||U_i[:, l] -
  M[:, j]||^2`` where a cluster of M is matched to at most one cluster of U_i and unmatched
  clusters do not count; the refit follows clue's (the mean of the matched columns rescaled
  by the weight of the partitions matching each column, pushed into the simplex, and the rows
  summing to more than one projected onto ``{m >= 0, sum m <= 1}`` in the weighted norm).
* **GV3** (Gordon & Vichi 2001, model 3): co-membership least squares
  ``||sum_i w_i U_i U_i^T - M M^T||_F^2`` over stochastic M. clue minimises it by SUMT
  (penalties and conjugate gradients); cclust minimises the same program by projected gradient
  descent on the row simplices (Armijo steps), from clue's start (leading eigenvectors of the
  weighted co-membership, scaled by the roots of the eigenvalues) and perturbations of it. The
  n x n co-membership is never formed: ``Y M = B_w (B^T M)`` with B the stacked memberships.

The starts, the stopping rule and the ties are those of SE (:mod:`cclust.consensus_functions.median`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust.base import declare
from cclust.consensus_functions._median import (DEFAULT_TOL, Memberships, best_start, check_common, fill_docs,
                                                median_result, start_memberships, stochastify, until_stable)
from cclust.matching import match_columns
from cclust.validation import check_float, check_int, check_random_state, require_memory
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike
from cclust.result import ConsensusResult

if TYPE_CHECKING:
    from cclust.soft import SoftEnsemble

__all__ = ["gv1", "gv3"]


# -- GV1 ----------------------------------------------------------------------------------------

def _gv1_match(data, M, T):
    """Per partition, the column of U_i matched to each column of M (K_i or more meaning
    unmatched), minimising squared Euclidean column distances (clue's ``fit_P``)."""
    kM = M.shape[1]
    m2 = (M ** 2).sum(axis=0)
    out = []
    for i in range(data.r):
        Ki = int(data.K[i])
        if data.hard:
            u2 = data.ensemble.cluster_sizes[data.block(i)].astype(np.float64)
        else:
            u2 = (data.B[:, data.block(i)] ** 2).sum(axis=0)
        cost = m2[:, None] + u2[None, :] - 2.0 * T[data.block(i)].T          # (kM, Ki)
        size = max(kM, Ki)
        square = np.zeros((size, size))
        square[:kM, :Ki] = cost
        out.append(match_columns(square, maximize=False)[:kM])
    return out


def _gv1_value(data, M, T, perms):
    m2 = (M ** 2).sum(axis=0)
    total = 0.0
    for i, p in enumerate(perms):
        Ki = int(data.K[i])
        u2 = (data.ensemble.cluster_sizes[data.block(i)].astype(np.float64) if data.hard
              else (data.B[:, data.block(i)] ** 2).sum(axis=0))
        j = np.flatnonzero(p < Ki)
        total += data.w[i] * float((m2[j] + u2[p[j]] - 2.0 * T[data.offsets[i] + p[j], j]).sum())
    return total


def _weighted_simplex_cap(M, alpha):
    """Rows of M (each summing to more than one) projected onto ``{x >= 0, sum x <= 1}`` in the
    norm weighted by ``alpha`` (clue solves this QP row by row with quadprog).

    The constraint ``sum x = 1`` is active, and the KKT conditions give
    ``x_j = max(m_j - tau / alpha_j, 0)`` with tau >= 0 such that the row sums to one (a column
    of zero weight is not penalised: it keeps ``max(m_j, 0)``). ``g(tau) = sum_j x_j`` is
    piecewise linear and decreasing with breakpoints ``b_j = alpha_j m_j``; with the columns
    in decreasing order of b, the top p active give ``tau_p = (sum_{top p} m - 1) /
    (sum_{top p} 1 / alpha)``, and the p whose tau_p lies between ``b_(p+1)`` and ``b_(p)`` is
    the solution: exact, one sort per row, no iteration (it replaced a bisection of 200 steps
    that took most of GV1's time; the two agree to 1e-15 in the tests)."""
    inv = np.where(alpha > 0, 1.0 / np.where(alpha > 0, alpha, 1.0), 0.0)
    breaks = np.where(alpha > 0, M * np.where(alpha > 0, alpha, 0.0), np.inf)
    order = np.argsort(-breaks, axis=1, kind="stable")
    b = np.take_along_axis(breaks, order, axis=1)
    sum_m = np.cumsum(np.take_along_axis(M, order, axis=1), axis=1)
    sum_inv = np.cumsum(inv[order], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (sum_m - 1.0) / sum_inv
    below = np.concatenate([b[:, 1:], np.full((M.shape[0], 1), -np.inf)], axis=1)
    ok = (sum_inv > 0) & (tau <= b) & (tau >= below) & (tau >= 0)
    found = ok.any(axis=1)
    t = np.where(found, tau[np.arange(M.shape[0]), ok.argmax(axis=1)], 0.0)
    out = np.maximum(M - t[:, None] * inv[None, :], 0.0)
    # no tau reaches one when the zero-weight columns alone sum to one or more: the weighted
    # columns go to zero (the limit of tau -> infinity), as the bisection this replaces did
    out[np.ix_(~found, inv > 0)] = 0.0
    return out


def _gv1_fit(data, M, perms):
    n, kM = M.shape
    nz = int((M.sum(axis=0) > 0).sum())
    Kmin, Kmax = int(data.K.min()), int(data.K.max())
    if nz <= Kmin:
        Q = np.zeros((data.C, kM))
        for i, p in enumerate(perms):
            j = np.flatnonzero(p[:nz] < data.K[i])   # all of them unless M's clusters outnumber U_i's
            Q[data.offsets[i] + p[j], j] = data.w[i]
        new = data.combine(Q)
        new[:, nz:] = 0.0
        if nz < Kmax:
            new = np.maximum(new + (1.0 - new.sum(axis=1, keepdims=True)) / kM, 0.0)
        return new
    alpha = np.zeros(kM)
    Q = np.zeros((data.C, kM))
    for i, p in enumerate(perms):
        j = np.flatnonzero(p[:nz] < data.K[i])
        alpha[j] += data.w[i]
        Q[data.offsets[i] + p[j], j] = data.w[i]
    beta = data.combine(Q)
    new = beta * np.where(alpha > 0, 1.0 / np.where(alpha > 0, alpha, 1.0), 0.0)[None, :]
    new[:, nz:] = 0.0
    S = new.sum(axis=1)
    low = S < 1
    if low.any():
        zero = alpha == 0
        if zero.any():
            new[np.ix_(low, zero)] = 1.0 / zero.sum()
        else:
            new[low] = np.maximum(new[low] + (1.0 - S[low, None]) / kM, 0.0)
    high = S > 1
    if high.any():
        new[high] = _weighted_simplex_cap(new[high], alpha)
    return new


def _gv1_bytes(n, r, k, n_init, hard):
    """Bytes GV1 holds at its peak: the equivalent of five n x K float64 arrays (the iterate,
    the refit's terms, the cross products' results) and one n x K float64 start per restart (a
    hard ensemble's products read its label codes, so no one-hot is formed; a soft ensemble's
    dense memberships exist before the call). Measured on hard ensembles with the one-hot: 12.1
    bytes a label and 41 bytes an object and cluster with one start, at 4 * 10^4 objects x 10
    and 50 partitions, K = 8."""
    return 8 * n * k * (5 + n_init)


@weights_on_the_ensemble
@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def gv1(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, n_init: int = 3, max_iter: int = 100,
        tol: float = DEFAULT_TOL, init: str | npt.ArrayLike = "kcc", random_state: RandomStateLike = None,
        max_bytes: int | None = None) -> ConsensusResult:
    """GV1: Gordon & Vichi's (2001) model 1, the soft consensus under matched-cluster least squares.

    Minimises ``sum_i w_i sum_{(j, l) matched} ||U_i[:, l] - M[:, j]||^2`` (each cluster of M
    matched to at most one of U_i; unmatched clusters do not count) by alternating the
    matching (Hungarian on squared column distances) and clue's refit (module docstring).

    %(params)s    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the starts are made: 8 (5 + n_init) bytes an object and cluster (a hard
        ensemble's products read its label codes: no one-hot is formed).
%(returns)s%(notes)s"""
    data, k, n_init, max_iter, tol = check_common(ensemble, n_clusters, "gv1", n_init, max_iter, tol)
    require_memory(_gv1_bytes(data.n, data.r, k, n_init, data.hard),
                   f"GV1's {n_init + 5} {data.n} x {k} membership matrices",
                   "use kcc (memory linear in n r), or fewer restarts (n_init)", max_bytes)
    starts = start_memberships(init, data, k, n_init, random_state)

    def run(M):
        T = data.cross(M)
        perms = _gv1_match(data, M, T)

        def step():
            nonlocal M, T, perms
            M = _gv1_fit(data, M, perms)
            T = data.cross(M)
            perms = _gv1_match(data, M, T)
            return _gv1_value(data, M, T, perms)

        value, n_iter, converged = until_stable(step, _gv1_value(data, M, T, perms), max_iter, tol)
        return M, value, n_iter, converged

    best, values = best_start(starts, run)
    M = stochastify(best[0])
    T = data.cross(M)
    objective = _gv1_value(data, M, T, _gv1_match(data, M, T))
    return median_result(M, "gv1", objective,
                   "weighted sum of squared distances between matched clusters, Gordon & Vichi 2001 model 1 "
                   "(lower is better)", best[2], best[3], {"objectives": values, "fixed_point_value": best[1]})


# -- GV3 ----------------------------------------------------------------------------------------

def _simplex_rows(M):
    """Euclidean projection of every row onto the probability simplex (sort-based)."""
    n, k = M.shape
    u = -np.sort(-M, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    ind = np.arange(1, k + 1)
    cond = u - css / ind > 0
    rho = k - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1)
    return np.maximum(M - theta[:, None], 0.0)


def _gv3_bytes(n, r, n_c, k):
    """Bytes GV3 holds at its peak: three (sum K_i)^2 float64 matrices at once (the Gram matrix G,
    W G and the product W G * (W G)^T of ``||Y||_F^2``) while the Gram matrix is formed from
    contingency tables; afterwards G and the equivalent of three n x max(k, 20) float64 arrays
    (the eigen solver's basis of at least 20 vectors, then the descent's iterates, gradients and
    products; the products with the memberships read the label codes, so no one-hot is formed)."""
    gram = n_c * n_c * 8
    return max(3 * gram, gram + 3 * n * max(k, 20) * 8)


class _CoMembership:
    """Y = sum_i w_i U_i U_i^T as an operator (never formed): Y V = B_w (B^T V)."""

    def __init__(self, data):
        self.data = data
        self.colw = np.repeat(data.w, data.K)
        G = data.gram()
        WG = G * self.colw[:, None]
        self.norm2 = float((WG * WG.T).sum())           # ||Y||_F^2 = tr((W G)^2)

    def times(self, V):
        return self.data.combine(self.data.cross(V) * self.colw[:, None])

    def loss(self, M, YM=None):
        YM = self.times(M) if YM is None else YM
        MtM = M.T @ M
        return self.norm2 - 2.0 * float((M * YM).sum()) + float((MtM * MtM).sum())


def _gv3_descent(Y, M, max_iter, tol):
    """Projected gradient descent with Armijo backtracking on the row simplices."""
    YM = Y.times(M)
    L = Y.loss(M, YM)
    step = 1.0 / max(1.0, 4.0 * float(np.linalg.norm(M.T @ M, 2)) + 4.0 * (Y.norm2 ** 0.5))
    n_iter, converged = 0, False
    for it in range(1, max_iter + 1):
        n_iter = it
        grad = 4.0 * (M @ (M.T @ M) - YM)
        while True:
            cand = _simplex_rows(M - step * grad)
            cYM = Y.times(cand)
            cL = Y.loss(cand, cYM)
            if cL <= L - 1e-4 / step * float(((cand - M) ** 2).sum()) or step < 1e-16:
                break
            step /= 2.0
        change = abs(L - cL)
        M, YM, L = cand, cYM, cL
        step *= 1.5
        if change < tol * (abs(L) + tol):
            converged = True
            break
    return M, L, n_iter, converged


@weights_on_the_ensemble
@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def gv3(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, n_init: int = 1, max_iter: int = 500,
        tol: float = 1e-10, random_state: RandomStateLike = None, max_bytes: int | None = None) -> ConsensusResult:
    """GV3: Gordon & Vichi's (2001) model 3, co-membership least squares.

    The stochastic M (n x K) minimising ``||sum_i w_i U_i U_i^T - M M^T||_F^2``: projected
    gradient descent on the row simplices from clue's start, the leading K eigenvectors of the
    weighted co-membership scaled by the square roots of their eigenvalues (projected onto the
    simplices), and ``n_init - 1`` perturbations of it (normal noise of standard deviation
    ``sd / sqrt(3)``, as clue draws them). clue runs SUMT instead; the program is the same.

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
    n_init : int, default=1
    max_iter : int, default=500
    tol : float, default=1e-10
        Relative change of the criterion that stops the descent.
    random_state : int, Generator or None
        Seeds the perturbed starts (and the eigensolver's start vector).
    max_bytes : int, default=None
        Budget of the (sum K_i)^2 Gram matrix (the loss needs ``||Y||_F^2``).

    Returns
    -------
    ConsensusResult
        ``objective`` the criterion of ``extras["membership"]`` (n, K).
    """
    from scipy.sparse.linalg import LinearOperator, eigsh

    data = Memberships(ensemble, "gv3")
    k = check_int(n_clusters, "n_clusters", low=1, high=data.n)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    require_memory(_gv3_bytes(data.n, data.r, data.C, k),
                   f"GV3's three {data.C} x {data.C} Gram matrices of the partitions' clusters",
                   "use fewer or coarser partitions, or se", max_bytes)
    rng = check_random_state(random_state)
    Y = _CoMembership(data)
    n = data.n
    if n <= max(50, k + 2):
        Yd = Y.times(np.eye(n))
        vals, vecs = np.linalg.eigh((Yd + Yd.T) / 2)
        vals, vecs = vals[::-1][:k], vecs[:, ::-1][:, :k]
    else:
        op = LinearOperator((n, n), matvec=lambda v: Y.times(v.reshape(n, -1)).reshape(-1),
                            matmat=lambda V: Y.times(V), dtype=np.float64)
        vals, vecs = eigsh(op, k=k, which="LA", v0=rng.standard_normal(n))
        order = np.argsort(-vals)
        vals, vecs = vals[order], vecs[:, order]
    E0 = vecs * np.sqrt(np.maximum(vals, 0.0))[None, :]
    # the sign of an eigenvector is arbitrary: make each column's sum non-negative
    E0 = E0 * np.where(E0.sum(axis=0) < 0, -1.0, 1.0)[None, :]
    sd = float(E0.std(ddof=1)) if E0.size > 1 else 0.0
    starts = [E0] + [E0 + rng.normal(scale=sd / np.sqrt(3), size=E0.shape) for _ in range(n_init - 1)]
    best, values = best_start(starts, lambda S0: _gv3_descent(Y, _simplex_rows(S0), max_iter, tol))
    M = stochastify(best[0])
    return median_result(M, "gv3", Y.loss(M), "squared Frobenius distance between the weighted co-membership and "
                   "M M^T, Gordon & Vichi 2001 model 3 (lower is better)", best[2], best[3], {"objectives": values})


fill_docs(gv1)
