"""Median partitions with optimal matching of the clusters: the partition consensus methods of
R's clue (Hornik 2005) -- SE, HE, DWH, GV1, GV3, SM, HM and the symmetric-difference median.

Every basic partition i is an n x K_i membership matrix U_i (0/1 for a hard partition; a
:class:`cclust.soft.SoftEnsemble` holds soft ones) with weight w_i, the weights summing to one.
A consensus partition is an n x K membership matrix M. The methods minimise

* **SE / HE** (Dimitriadou, Weingessel & Hornik 2002; Hornik 2005, sec. 4): the weighted sum
  of squared Euclidean distances ``sum_i w_i min_P ||U_i P - M||_F^2`` over soft (SE) or hard
  (HE) M, P ranging over the matchings of U_i's clusters to M's (both padded with zero columns
  to ``max(K, K_i)``), by alternating optimisation: match every U_i to M (Hungarian, maximising
  ``tr(P^T U_i^T M)``), then refit M: the weighted mean of the matched memberships (SE; if
  K < max K_i, its first K columns are moved towards the simplex by clue's projection
  ``max(y + (1 - sum y) / K, 0)``), or each object's most likely cluster of that mean (HE).
  Stops when the criterion changes by less than ``tol`` relative (clue's ``reltol``).
* **SM / HM** (Hornik & Böhm 2007): the same with Manhattan distance ``||U_i P - M||_1``:
  matching minimises the L1 cost, and the soft refit solves, for every object, the linear
  program ``min_m sum_i w_i ||v_i - m||_1, m >= 0, sum m = 1`` (v_i the object's matched
  memberships in the first K columns). That LP is separable convex piecewise linear with one
  budget constraint, so it is solved exactly by taking the pieces of the coordinates in order
  of increasing slope until the budget 1 is spent (the greedy LP solution; checked against
  :func:`scipy.optimize.linprog` in the tests). HM's refit is HE's (the L1 criterion of a
  hard M is linear in M).
* **DWH** (Dimitriadou, Weingessel & Hornik 2002): one sequential pass in a random order of
  the partitions, ``M <- (1 - s_b) M + s_b U_b P_b`` with ``s_b = w_b / sum_{c <= b} w_c``
  and P_b matching U_b to the running M. Its reported objective is SE's criterion of the
  result.
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
* **symdiff-median**: the exact median of hard partitions under the symmetric-difference
  (Rand) distance, ``min_C sum_i w_i sum_{x<y} |C_i(x, y) - C(x, y)|`` over equivalence
  relations C with exactly K classes (C_i the co-membership of partition i; for soft partitions
  its expectation U_i U_i^T, which enters linearly), as an integer program (the clique
  partitioning problem, Grötschel & Wakabayashi 1989). For K = 2 the cut program: separation
  variables on pairs only (they name no class, so no relabelled copies exist) with the
  triangle inequalities of the cut polytope, and rows that order interchangeable identical
  objects ("twins", :func:`_twin_rows`). For K >= 3 pair variables ``c_xy`` and assignment
  variables ``z_xk`` (``c_xy >= z_xk + z_yk - 1`` and ``c_xy <= 1 - |z_xk - z_yk|``, every
  class used, object x only in the first x + 1 classes, classes opened in order, twins in
  non-decreasing classes). Solved to optimality (zero relative gap) by
  :func:`scipy.optimize.milp` (HiGHS). Refused above ``max_objects`` (default 40).

Choices where clue leaves room, recorded: ties of the most likely cluster go to the first
column (R's ``max.col`` breaks them at random), except in HE/HM's refit, where an object whose
current cluster is among the best stays in it; beyond clue, HE and HM then try tie moves from
their fixed point (``tie_rounds``, :func:`he`), which never raise the criterion; the returned
objective is the criterion of the returned membership with every partition matched to it
afresh (clue reports it with the matchings of its last iteration, which can only be as good);
a requested cluster that no object prefers is filled by the objects closest to preferring it
(:func:`cclust.graph.honour_n_clusters`, ``extras["n_moved"]``), while
``extras["membership"]`` keeps the fixed point (n x K) unchanged.

Speed: a hard ensemble is the sparse one-hot B (n x sum K_i) and every step is a product with
it. When no projection is needed (SE with K >= max K_i, DWH likewise) M stays ``B Q`` for a
small (sum K_i) x K matrix Q, so the iterations run on ``G = B^T B`` (the contingency tables
of every pair of partitions, computed once by the compiled contingency core) and cost nothing
in n; M is formed once at the end.
"""
import numpy as np
import scipy.sparse as sp

from cclust._lloyd import best_of_restarts
from cclust.base import declare
from cclust.ensemble import as_ensemble
from cclust.errors import SizeLimitError, ValidationError
from cclust.graph import honour_n_clusters
from cclust.matching import match_columns
from cclust.result import ConsensusResult
from cclust.soft import is_soft_ensemble
from cclust.validation import (check_distinct_label_vectors, check_float, check_int, check_random_state, memory_budget,
                               require_memory, spawn_seed_sequences)

__all__ = ["se", "he", "dwh", "gv1", "gv3", "sm", "hm", "symdiff_median", "MAX_SYMDIFF_OBJECTS"]

#: Default size limit of the exact symmetric-difference median (objects).
MAX_SYMDIFF_OBJECTS = 40

#: clue's default relative tolerance, sqrt(machine epsilon).
DEFAULT_TOL = float(np.sqrt(np.finfo(float).eps))

#: Largest sum K_i for which the (sum K_i)^2 Gram matrix of the fast SE/DWH route is formed.
_GRAM_MAX_COLUMNS = 4000

#: Rows of the (rows, r + 1, K) piece arrays of the L1 refit processed at once.
_L1_CHUNK_ELEMENTS = 1 << 21


# -- the ensemble as membership blocks ----------------------------------------------------------

def _complete(ensemble, method):
    """The hard ensemble as an Ensemble, refused when a label is missing."""
    E = as_ensemble(ensemble)
    if E.has_missing:
        raise ValidationError(
            f"ensemble has missing labels (-1); {method} compares whole membership matrices, whose rows "
            "must sum to one, so every object must be labelled in every partition. Drop the objects "
            "(ensemble.take(objects=...)) or the partitions with missing labels.")
    return E


class _Memberships:
    """The partitions as the stacked membership matrix B (n x sum K_i): CSR 0/1 for a hard
    Ensemble, dense for a SoftEnsemble; weights w summing to one."""

    def __init__(self, ensemble, weights, method):
        if is_soft_ensemble(ensemble):
            E = ensemble.with_weights(weights)
            self.hard = False
            self.B = np.ascontiguousarray(E.stacked())
            self.ensemble = None
        else:
            E = _complete(ensemble, method)
            E = E.with_weights(weights)
            self.hard = True
            self.B = E.one_hot()
            self.ensemble = E
        self.source = E                                  # the weighted ensemble itself
        self.n, self.r = E.n_samples, E.n_partitions
        self.K = np.asarray(E.n_clusters, dtype=np.int64)
        self.offsets = np.asarray(E.offsets, dtype=np.int64)
        self.w = np.asarray(E.weights, dtype=np.float64)
        self.C = int(self.offsets[-1])
        self.k_max = int(self.K.max())
        if self.hard:
            self.norms2 = np.full(self.r, float(self.n))
        else:
            sq = (self.B ** 2).sum(axis=0)
            self.norms2 = np.add.reduceat(sq, self.offsets[:-1])
        self._gram = None

    def block(self, i):
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def cross(self, M):
        """B^T M, (sum K_i, k)."""
        return np.asarray(self.B.T @ M)

    def combine(self, Q):
        """B Q, (n, k)."""
        return np.asarray(self.B @ Q)

    def gram_ok(self, max_bytes=None):
        return self.C <= _GRAM_MAX_COLUMNS and self.C * self.C * 8 <= memory_budget(max_bytes)

    def gram(self):
        """G = B^T B, dense (sum K_i)^2: the pairwise contingency tables (hard) or membership
        cross products (soft)."""
        if self._gram is None:
            if self.hard:
                E = self.ensemble
                G = np.empty((self.C, self.C))
                for i in range(self.r):
                    G[self.block(i)] = E.contingency(E.labels[:, i], int(self.K[i]))
            else:
                G = self.B.T @ self.B
            self._gram = G
        return self._gram

    def matched_scatter(self, assignments, k_cols):
        """Q (sum K_i, k_cols) with ``w_i`` at (cluster l of partition i, its matched column)."""
        Q = np.zeros((self.C, k_cols))
        for i, cols in enumerate(assignments):
            Q[self.offsets[i] + np.arange(self.K[i]), cols] = self.w[i]
        return Q

    def matched_dense(self, i, cols, k_cols):
        """U_i P_i: partition i's memberships in its matched columns, (n, k_cols)."""
        out = np.zeros((self.n, k_cols))
        if self.hard:
            out[np.arange(self.n), cols[self.ensemble.labels[:, i]]] = 1.0
        else:
            out[:, cols] = self.B[:, self.block(i)]
        return out


# -- argument checks and the result -----------------------------------------------------------

def _check_common(ensemble, n_clusters, weights, method, n_init, max_iter, tol):
    data = _Memberships(ensemble, weights, method)
    k = check_int(n_clusters, "n_clusters", low=1, high=data.n)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    return data, k, n_init, max_iter, tol


#: The start rules of SE, HE, SM, HM and GV1 (``init`` as a string).
INITS = ("kcc", "random")


def _starts(init, data, k, n_init, random_state):
    """Starting memberships: the user's ``init`` (an (n, k) matrix or a list of them), or
    ``n_init`` starts by a rule: ``"random"`` draws random stochastic matrices (clue's
    ``.random_stochastic_matrix``); ``"kcc"`` makes the first start the hard KCC consensus of
    the ensemble (:func:`_kcc_start`) and the other ``n_init - 1`` random. Every start has its
    own seed spawned from ``random_state``, so the random starts are the same under both rules."""
    if isinstance(init, str) or init is None:
        rule = "random" if init is None else init
        if rule not in INITS:
            raise ValidationError(f"init must be one of {list(INITS)} or starting memberships of shape "
                                  f"({data.n}, {k}), got {init!r}.")
        out = []
        for j, seq in enumerate(spawn_seed_sequences(random_state, n_init)):
            if j == 0 and rule == "kcc":
                out.append(_kcc_start(data, k, seq))
                continue
            M = np.random.default_rng(seq).random((data.n, k))
            out.append(M / M.sum(axis=1, keepdims=True))
        return out
    mats = [init] if (isinstance(init, np.ndarray) and init.ndim == 2) or (
        not isinstance(init, (list, tuple))) else list(init)
    out = []
    for j, m in enumerate(mats):
        a = np.asarray(m, dtype=np.float64)
        if a.shape != (data.n, k) or not np.isfinite(a).all() or (a < 0).any():
            raise ValidationError(f"init[{j}] must be a finite non-negative ({data.n}, {k}) membership "
                                  f"matrix, got shape {a.shape}.")
        out.append(a / np.where(a.sum(1, keepdims=True) > 0, a.sum(1, keepdims=True), 1.0))
    return out


def _kcc_start(data, k, seed):
    """The one-hot membership of the KCC consensus (Wu et al. 2015; cclust's defaults: utility
    UH, k-means++ seeding, 10 restarts) of the weighted ensemble, a SoftEnsemble's on its
    membership rows: a cheap, seeded partition that already agrees with the members, from which
    the alternating optimisation only has to settle. K = 1 needs no search (every object in the
    one cluster)."""
    if k == 1:
        return np.ones((data.n, 1))
    from cclust.consensus_functions.kcc import kcc

    labels = kcc(data.source, k, random_state=np.random.default_rng(seed)).labels
    M = np.zeros((data.n, k))
    M[np.arange(data.n), labels] = 1.0
    return M


def _stochastify(M):
    """clue's ``.stochastify``: negative entries to zero, rows scaled to sum to one."""
    M = np.maximum(M, 0.0)
    s = M.sum(axis=1, keepdims=True)
    return np.where(s > 0, M / np.where(s > 0, s, 1.0), 1.0 / M.shape[1])


def _project_leading(M, k):
    """clue's ``.project_to_leading_columns``: ``max(y + (1 - sum y) / k, 0)`` on the first k
    columns, zeros in the others."""
    y = M[:, :k]
    out = np.zeros_like(M)
    out[:, :k] = np.maximum(y + (1.0 - y.sum(axis=1, keepdims=True)) / k, 0.0)
    return out


def _result(membership, method, objective, objective_name, n_iter, converged, extras):
    membership = np.ascontiguousarray(membership)
    k = membership.shape[1]
    labels = membership.argmax(axis=1)
    labels, moved = honour_n_clusters(labels, membership, k) if k <= membership.shape[0] else (labels, 0)
    membership.setflags(write=False)
    return ConsensusResult.from_labels(labels, objective=objective, objective_name=objective_name, method=method,
                                       n_iter=n_iter, converged=converged,
                                       extras=dict(extras, membership=membership, n_moved=int(moved)))


# -- Euclidean and Manhattan matching and criteria --------------------------------------------

def _match_euclidean(data, T, k_cols):
    """Each partition's clusters matched to M's columns maximising the matched cross products."""
    return [match_columns(T[data.block(i)], maximize=True) for i in range(data.r)]


def _matched_sum(data, T, assignments):
    return np.array([T[data.offsets[i] + np.arange(data.K[i]), cols].sum() for i, cols in enumerate(assignments)])


def _value_euclidean(data, M_norm2, T, assignments):
    """sum_i w_i ||U_i P_i - M||^2 = sum_i w_i (||U_i||^2 + ||M||^2 - 2 tr(P_i^T U_i^T M))."""
    return float(data.w @ (data.norms2 + M_norm2 - 2.0 * _matched_sum(data, T, assignments)))


def _manhattan_costs(data, i, M, T):
    """Square (k_cols, k_cols) cost of matching partition i's clusters (rows; zero columns
    padded below) to M's columns: ``||U_i[:, l] - M[:, c]||_1``."""
    k_cols = M.shape[1]
    s = M.sum(axis=0)
    cost = np.tile(s, (k_cols, 1))                      # a padded zero column costs ||M_c||_1
    Ki = int(data.K[i])
    if data.hard:
        sizes = data.ensemble.cluster_sizes[data.block(i)].astype(np.float64)
        cost[:Ki] = sizes[:, None] + s[None, :] - 2.0 * T[data.block(i)]
    else:
        U = data.B[:, data.block(i)]
        for l in range(Ki):
            cost[l] = np.abs(U[:, l:l + 1] - M).sum(axis=0)
    return cost


def _match_manhattan(data, M, T):
    return [match_columns(_manhattan_costs(data, i, M, T), maximize=False)[:data.K[i]] for i in range(data.r)]


def _value_manhattan(data, M, T, assignments):
    """sum_i w_i ||U_i P_i - M||_1 (for 0/1 U_i and M in [0, 1]: sum M + n - 2 tr(P_i^T U_i^T M))."""
    if data.hard:
        return float(data.w @ (M.sum() + data.n - 2.0 * _matched_sum(data, T, assignments)))
    k_cols = M.shape[1]
    return float(sum(data.w[i] * np.abs(data.matched_dense(i, cols, k_cols) - M).sum()
                     for i, cols in enumerate(assignments)))


def l1_simplex_median(V, w):
    """Per row, ``argmin_m sum_i w_i ||V[x, i] - m||_1`` subject to ``m >= 0, sum m = 1``.

    Parameters
    ----------
    V : ndarray of shape (m, r, k), entries in [0, 1]
    w : ndarray of shape (r,), non-negative, summing to one

    The objective is a sum over coordinates of convex piecewise-linear functions; on the piece
    of coordinate j between consecutive sorted values ``p_q <= t < p_{q+1}`` its slope is
    ``2 W_q - 1``, W_q the weight of the values ``<= p_q``. Spending the budget 1 on the pieces
    in order of increasing slope is optimal (an exchange argument; the LP of clue's
    ``.l1_fit_M`` has the same optimum value, possibly another optimal vertex).
    """
    m_rows, r, k = V.shape
    order = np.argsort(V, axis=1, kind="stable")
    Vs = np.take_along_axis(V, order, axis=1)
    cw = np.cumsum(w[order], axis=1)
    zeros = np.zeros((m_rows, 1, k))
    starts = np.concatenate([zeros, Vs], axis=1)
    ends = np.concatenate([Vs, np.ones((m_rows, 1, k))], axis=1)
    slopes = 2.0 * np.concatenate([zeros, cw], axis=1) - 1.0
    lengths = np.clip(np.minimum(ends, 1.0) - np.minimum(starts, 1.0), 0.0, None)
    lengths = lengths.reshape(m_rows, -1)
    slopes = slopes.reshape(m_rows, -1)
    coord = np.broadcast_to(np.arange(k), (r + 1, k)).reshape(-1)
    idx = np.argsort(slopes, axis=1, kind="stable")
    L = np.take_along_axis(lengths, idx, axis=1)
    before = np.cumsum(L, axis=1) - L
    take = np.clip(1.0 - before, 0.0, L)
    out = np.zeros((m_rows, k))
    np.add.at(out, (np.repeat(np.arange(m_rows), idx.shape[1]), coord[idx].reshape(-1)), take.reshape(-1))
    return out


def _l1_fit(data, assignments, k, k_cols):
    """SM's refit: every row's L1 median (on the simplex) of its matched memberships' first k columns."""
    M = np.zeros((data.n, k_cols))
    rows = max(1, _L1_CHUNK_ELEMENTS // ((data.r + 1) * k))
    for start in range(0, data.n, rows):
        stop = min(data.n, start + rows)
        V = np.zeros((stop - start, data.r, k))
        for i, cols in enumerate(assignments):
            keep = cols < k
            if data.hard:
                lab = data.ensemble.labels[start:stop, i]
                target = cols[lab]
                ok = keep[lab]
                V[np.flatnonzero(ok), i, target[ok]] = 1.0
            else:
                U = data.B[start:stop, data.block(i)]
                V[:, i, cols[keep]] = U[:, keep]
        M[start:stop, :k] = l1_simplex_median(V, data.w)
    return M


#: Relative tolerance under which two matched votes count as tied (they are sums of the same
#: weights added in different orders).
_TIE_TOL = 1e-12


def _votes(data, assign, k, k_cols):
    """Every object's matched vote for each of the first k columns, ``(B Q)[:, :k]``, and the
    tolerance below which two votes are tied."""
    V = data.combine(data.matched_scatter(assign, k_cols))[:, :k]
    return V, _TIE_TOL * max(1.0, float(np.abs(V).max(initial=0.0)))


def _one_hot(data, ids, k_cols):
    M = np.zeros((data.n, k_cols))
    M[np.arange(data.n), ids] = 1.0
    return M


def _hard_fit(data, assign, k, k_cols, current=None):
    """HE/HM's refit: every object's most likely of the first k columns of the matched votes.
    A tie goes to the object's ``current`` cluster when that is among the best (so a refit
    moves an object only for a strictly larger vote), else to the first best column."""
    V, tol = _votes(data, assign, k, k_cols)
    ids = V.argmax(axis=1)
    if current is not None:
        rows = np.arange(data.n)
        ids = np.where(V[rows, current] >= V[rows, ids] - tol, current, ids)
    return ids


def _tie_flip(data, assign, ids, k, k_cols):
    """``ids`` with every object whose matched vote for another column ties with its own moved
    to the first such column; None when no object has a tie."""
    V, tol = _votes(data, assign, k, k_cols)
    rows = np.arange(data.n)
    other = V >= V[rows, ids][:, None] - tol
    other[rows, ids] = False
    tied = other.any(axis=1)
    if not tied.any():
        return None
    moved = ids.copy()
    moved[tied] = other[tied].argmax(axis=1)
    return moved


def _cross_of_hard(data, ids, k_cols, M):
    """B^T M for a one-hot M: the contingency table (compiled) for a hard ensemble."""
    if data.hard:
        return data.ensemble.contingency(ids, k_cols).T.astype(np.float64)
    return data.cross(M)


# -- the alternating optimisation of SE, HE, SM, HM --------------------------------------------

def _until_stable(step, old, max_iter, tol):
    """clue's stopping rule: call ``step()`` (one refit and rematch, returning the criterion)
    until it changes by less than ``tol * (|old| + tol)``; returns (value, n_iter, converged)."""
    new = old
    for n_iter in range(1, max_iter + 1):
        new = step()
        if abs(old - new) < tol * (abs(old) + tol):
            return new, n_iter, True
        old = new
    return new, max_iter, False


def _best_of(starts, run):
    """``run(start) -> (M, value, n_iter, converged)`` for every start; the lowest value's
    tuple and the list of values."""
    return best_of_restarts(lambda i: run(starts[i]), len(starts), score=lambda out: out[1])


def _aos(data, k, kind, starts, max_iter, tol, max_bytes=None, tie_rounds=0):
    """clue's alternating optimisation over the starts; returns the best run's
    (M with k_cols columns, value, n_iter, converged, values per start)."""
    k_cols = max(k, data.k_max)
    euclid = kind in ("SE", "HE")
    fast = kind == "SE" and k >= data.k_max and data.gram_ok(max_bytes)

    def run(M0):
        M = np.zeros((data.n, k_cols))
        M[:, :k] = M0
        T = data.cross(M)
        assign = _match_euclidean(data, T, k_cols) if euclid else _match_manhattan(data, M, T)
        old = (_value_euclidean(data, float((M ** 2).sum()), T, assign) if euclid
               else _value_manhattan(data, M, T, assign))
        if kind in ("HE", "HM"):
            return _hard_aos(data, euclid, assign, old, k, k_cols, max_iter, tol, tie_rounds)
        Q = None

        def step():
            nonlocal M, T, assign, Q
            if kind == "SE":
                Q = data.matched_scatter(assign, k_cols)
                if fast:
                    T = data.gram() @ Q
                    M_norm2 = float((Q * T).sum())
                    M = None
                else:
                    M = data.combine(Q)
                    if k < k_cols:
                        M = _project_leading(M, k)
                    T = data.cross(M)
                    M_norm2 = float((M ** 2).sum())
                assign = _match_euclidean(data, T, k_cols)
                return _value_euclidean(data, M_norm2, T, assign)
            M = _l1_fit(data, assign, k, k_cols)  # SM
            T = data.cross(M)
            assign = _match_manhattan(data, M, T)
            return _value_manhattan(data, M, T, assign)

        value, n_iter, converged = _until_stable(step, old, max_iter, tol)
        return (data.combine(Q) if M is None else M), value, n_iter, converged

    best, values = _best_of(starts, run)
    return best + (values,)


def _hard_criterion(data, euclid, ids, k_cols):
    """The criterion of the hard consensus ``ids`` with every partition matched to it afresh,
    and those matchings."""
    M = _one_hot(data, ids, k_cols)
    T = _cross_of_hard(data, ids, k_cols, M)
    if euclid:
        assign = _match_euclidean(data, T, k_cols)
        return _value_euclidean(data, float(data.n), T, assign), assign
    assign = _match_manhattan(data, M, T)
    return _value_manhattan(data, M, T, assign), assign


def _hard_aos(data, euclid, assign, old, k, k_cols, max_iter, tol, tie_rounds):
    """HE/HM from the matchings ``assign`` (criterion ``old``): clue's iteration (refit, then
    rematch) until stable, then up to ``tie_rounds`` rounds of tie moves.

    The tie moves are cclust's addition to clue's HE and HM: from the fixed point, every object
    whose matched vote for another cluster ties with its vote for its own moves to that other
    cluster (the first such); with the matchings fixed this leaves the criterion unchanged (it
    is linear in the hard M, the votes its coefficients), so the rematch and iteration that
    follow can only lower it. A round is kept when the criterion fell by more than ``tol``
    (relative); the first round that does not ends the search. The returned criterion is thus
    never above that of the plain iteration, and everything stays deterministic.
    Returns (M, value, n_iter, converged)."""
    state = {"assign": assign, "ids": None}

    def step():
        state["ids"] = _hard_fit(data, state["assign"], k, k_cols, state["ids"])
        value, state["assign"] = _hard_criterion(data, euclid, state["ids"], k_cols)
        return value

    value, n_iter, converged = _until_stable(step, old, max_iter, tol)
    ids = state["ids"]
    for _ in range(tie_rounds):
        moved = _tie_flip(data, state["assign"], ids, k, k_cols)
        if moved is None:
            break
        kept = (state["assign"], ids)
        state["ids"] = moved
        start, state["assign"] = _hard_criterion(data, euclid, moved, k_cols)
        new, extra, conv = _until_stable(step, start, max_iter, tol)
        n_iter += extra
        if not new < value - tol * (abs(value) + tol):
            state["assign"], state["ids"] = kept
            break
        value, converged, ids = new, conv, state["ids"]
    return _one_hot(data, ids, k_cols), value, n_iter, converged


def _final_value(data, M, kind):
    """The criterion of the returned M with every partition matched to it afresh."""
    T = data.cross(M)
    if kind in ("SE", "HE"):
        return _value_euclidean(data, float((M ** 2).sum()), T, _match_euclidean(data, T, M.shape[1]))
    return _value_manhattan(data, M, T, _match_manhattan(data, M, T))


_NAMES = {
    "SE": "weighted sum of squared Euclidean distances to the partitions, optimally matched (lower is better)",
    "HE": "weighted sum of squared Euclidean distances to the partitions, optimally matched (lower is better)",
    "SM": "weighted sum of Manhattan distances to the partitions, optimally matched (lower is better)",
    "HM": "weighted sum of Manhattan distances to the partitions, optimally matched (lower is better)",
}


def _run_aos(kind, method, ensemble, n_clusters, weights, n_init, max_iter, tol, init, random_state, max_bytes=None,
             tie_rounds=0):
    data, k, n_init, max_iter, tol = _check_common(ensemble, n_clusters, weights, method, n_init, max_iter, tol)
    tie_rounds = check_int(tie_rounds, "tie_rounds", low=0)
    starts = _starts(init, data, k, n_init, random_state)
    M, value, n_iter, converged, values = _aos(data, k, kind, starts, max_iter, tol, max_bytes, tie_rounds)
    M = _stochastify(M) if kind in ("SE", "SM") else M
    k_cols = M.shape[1]
    full = np.zeros((data.n, k_cols))
    full[:, :k] = M[:, :k]
    objective = _final_value(data, full, kind)
    return _result(M[:, :k], method, objective, _NAMES[kind], n_iter, converged,
                   {"objectives": values, "fixed_point_value": value})


_DOC_PARAMS = """Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
        Hard partitions (no missing labels) or soft ones (:class:`cclust.soft.SoftEnsemble`).
    n_clusters : int
        K, the columns of the consensus membership (clue's ``k``), in [1, n_samples].
    weights : array-like of shape (n_partitions,), default=None
        Partition weights (normalised to sum to one); the ensemble's own if None.
    n_init : int, default=3
        Starts tried (clue's ``nruns``, whose default is 1); the run of lowest criterion is kept.
    max_iter : int, default=100
    tol : float, default=sqrt(machine epsilon)
        Stop when the criterion changes by less than ``tol * (|old| + tol)`` (clue's ``reltol``).
    init : {"kcc", "random"}, array-like of shape (n_samples, n_clusters) or list of them, default="kcc"
        ``"kcc"``: the first start is the hard KCC consensus of the ensemble (Wu et al. 2015,
        cclust's :func:`~cclust.consensus_functions.kcc.kcc` with its defaults), the other
        ``n_init - 1`` are random; ``"random"``: ``n_init`` random stochastic matrices, clue's
        start (``init="random", n_init=1`` is clue's default exactly; None means ``"random"``).
        An array, or a list of them, gives the starting memberships (clue's ``start``; rows are
        normalised) and overrides ``n_init``.
    random_state : int, Generator or None
        Seeds the starts (each start has its own seed, so the random starts are the same under
        both rules).
"""

_STARTS_NOTES = """
    Notes
    -----
    Choices where the papers are silent: the start. clue draws one random stochastic matrix
    (``nruns = 1``). From one random start the alternation often stops at a fixed point that
    merges two groups and splits another when the partitions have many more clusters than the
    K columns of M (only K of each partition's clusters are matched). cclust's default starts
    once from the hard KCC consensus of the ensemble (Wu et al. 2015), a seeded partition that
    already agrees with the members, and twice at random, and keeps the lowest criterion: the
    minimiser the method defines, found more often, for about three times the work of one
    start. Where the criterion itself prefers another partition to the plain groups (one group
    much larger than the others and cut into many pieces by the partitions), the lowest
    criterion is kept even so. ``init="random", n_init=1`` is clue's default exactly (for the
    same ``random_state``, the start of this function's former default).
"""

_DOC_RETURNS = """
    Returns
    -------
    ConsensusResult
        ``labels`` the most likely cluster of every object; ``extras["membership"]`` the
        consensus membership matrix (n_samples, n_clusters); ``objective`` the criterion of
        that matrix; ``extras["objectives"]`` the criterion at each start's fixed point.
"""


@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def se(ensemble, n_clusters, *, weights=None, n_init=3, max_iter=100, tol=DEFAULT_TOL, init="kcc",
       random_state=None, max_bytes=None):
    """Soft Euclidean consensus partition, SE (Dimitriadou, Weingessel & Hornik 2002; Hornik 2005).

    The soft membership M minimising ``sum_i w_i min_P ||U_i P - M||_F^2`` by alternating
    optimisation (module docstring): the fixed point of optimal matching and the weighted mean
    of the matched memberships.

    %(params)s    max_bytes : int, default=None
        Budget of the (sum K_i)^2 Gram matrix of the fast route (the iteration otherwise works
        on n x K matrices).
%(returns)s%(notes)s
    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [1, 0, 0]])
    >>> r = se(E, 2, random_state=0)
    >>> r.labels.tolist(), r.extras["membership"].round(3).tolist()[3]
    ([0, 0, 1, 1], [0.333, 0.667])
    """
    return _run_aos("SE", "se", ensemble, n_clusters, weights, n_init, max_iter, tol, init, random_state, max_bytes)


_TIE_DOC = """    tie_rounds : int, default=10
        cclust's addition to clue: rounds of tie moves after the iteration has settled. Matched
        votes are sums of partition weights, so ties are common; clue breaks them at random,
        cclust keeps an object in its cluster on a tie and then, from the fixed point, moves
        every tied object to the other cluster it ties with, rematches and iterates again,
        keeping the round only if the criterion fell (with the matchings fixed the moves leave
        the criterion unchanged, and the rematch can only lower it). The criterion returned is
        never above the plain iteration's; 0 gives the plain iteration.
"""


@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def he(ensemble, n_clusters, *, weights=None, n_init=3, max_iter=100, tol=DEFAULT_TOL, init="kcc",
       random_state=None, tie_rounds=10):
    """Hard Euclidean consensus partition, HE (Dimitriadou, Weingessel & Hornik 2002; Hornik 2005).

    SE's criterion over hard memberships: the refit gives every object its most likely cluster
    of the weighted mean of the matched memberships.

    %(params)s%(ties)s%(returns)s%(notes)s"""
    return _run_aos("HE", "he", ensemble, n_clusters, weights, n_init, max_iter, tol, init, random_state,
                    tie_rounds=tie_rounds)


@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def sm(ensemble, n_clusters, *, weights=None, n_init=3, max_iter=100, tol=DEFAULT_TOL, init="kcc",
       random_state=None):
    """Soft Manhattan consensus partition, SM (Hornik & Böhm 2007; Hornik 2005).

    Minimises ``sum_i w_i min_P ||U_i P - M||_1`` over soft M: matching by L1 cost and the
    refit by the per-object linear program (solved exactly, module docstring).

    %(params)s%(returns)s%(notes)s"""
    return _run_aos("SM", "sm", ensemble, n_clusters, weights, n_init, max_iter, tol, init, random_state)


@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def hm(ensemble, n_clusters, *, weights=None, n_init=3, max_iter=100, tol=DEFAULT_TOL, init="kcc",
       random_state=None, tie_rounds=10):
    """Hard Manhattan consensus partition, HM (Hornik & Böhm 2007; Hornik 2005).

    SM's criterion over hard memberships (for a hard M it is linear in M with the matched
    votes as coefficients, so HE's refit and tie moves apply unchanged).

    %(params)s%(ties)s%(returns)s%(notes)s"""
    return _run_aos("HM", "hm", ensemble, n_clusters, weights, n_init, max_iter, tol, init, random_state,
                    tie_rounds=tie_rounds)


# -- DWH ----------------------------------------------------------------------------------------

def _prefer_empty(T, mass):
    """Break ties of the matching towards the running membership's empty columns: a cluster
    sharing no object with any occupied column then starts a column of its own instead of
    being averaged into an unrelated one (both are optimal matchings; clue's Hungarian solver
    happened to prefer the empty column where we compared). The bonus, 1e-12 of the largest
    entry, is far below any real difference of the cross products."""
    empty = mass <= 0
    if not empty.any():
        return T
    return T + empty[None, :] * (1e-12 * max(1.0, float(np.abs(T).max())))


def _dwh_pass(data, k, order, fast):
    """One DWH pass in ``order``; the (n, k_cols) membership before truncation to k columns."""
    k_cols = max(k, data.k_max)
    w = data.w[order]
    cum = np.cumsum(w)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(cum > 0, w / np.where(cum > 0, cum, 1.0), 0.0)
    first = order[0]
    if fast:
        G = data.gram()
        sizes = np.diag(G) if data.hard else np.asarray(data.B.sum(axis=0)).reshape(-1)
        Q = np.zeros((data.C, k_cols))
        Q[data.offsets[first] + np.arange(data.K[first]), np.arange(data.K[first])] = 1.0
        for b, sb in zip(order[1:], s[1:]):
            T = G[data.block(b)] @ Q
            cols = match_columns(_prefer_empty(T, sizes @ Q), maximize=True)
            Q *= 1.0 - sb
            Q[data.offsets[b] + np.arange(data.K[b]), cols] += sb
        return data.combine(Q)
    M = data.matched_dense(first, np.arange(data.K[first]), k_cols)
    for b, sb in zip(order[1:], s[1:]):
        if data.hard:
            lab = data.ensemble.labels[:, b]
            T = np.stack([np.bincount(lab, weights=M[:, c], minlength=int(data.K[b])) for c in range(k_cols)], axis=1)
        else:
            T = data.B[:, data.block(b)].T @ M
        cols = match_columns(_prefer_empty(T, M.sum(axis=0)), maximize=True)
        M *= 1.0 - sb
        M += sb * data.matched_dense(b, cols, k_cols)
        if k < k_cols:
            M = _project_leading(M, k)
    return M


@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def dwh(ensemble, n_clusters, *, weights=None, n_init=1, order=None, random_state=None, max_bytes=None):
    """DWH: Dimitriadou, Weingessel & Hornik's (2002) sequential soft consensus.

    One pass over the partitions in a random order (or ``order``): the running membership
    moves towards each matched partition by its share of the weight so far,
    ``M <- (1 - s_b) M + s_b U_b P_b``, ``s_b = w_b / sum_{c <= b} w_c``; with fewer columns
    than partitions' clusters, clue's projection to the leading K columns after each step.

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
        K, in [1, n_samples].
    weights : array-like of shape (n_partitions,), default=None
    n_init : int, default=1
        Random orders tried; the result of lowest SE criterion is kept.
    order : array-like of int, default=None
        The order of the partitions (a permutation of ``range(n_partitions)``); overrides
        ``n_init``.
    random_state : int, Generator or None
        Seeds the random orders.
    max_bytes : int, default=None
        Budget of the (sum K_i)^2 Gram matrix of the fast route.

    Returns
    -------
    ConsensusResult
        ``objective``: SE's criterion of ``extras["membership"]`` (n, K), every partition
        optimally matched to it; ``extras["orders"]``, ``extras["objectives"]`` per order.
    """
    data = _Memberships(ensemble, weights, "dwh")
    k = check_int(n_clusters, "n_clusters", low=1, high=data.n)
    n_init = check_int(n_init, "n_init", low=1)
    if order is not None:
        o = np.asarray(order)
        if o.dtype.kind not in "iu" or o.shape != (data.r,) or not np.array_equal(np.sort(o), np.arange(data.r)):
            raise ValidationError(f"order must be a permutation of range({data.r}), got {order!r}.")
        orders = [o.astype(np.int64)]
    else:
        orders = [np.random.default_rng(seq).permutation(data.r) for seq in spawn_seed_sequences(random_state, n_init)]
    fast = k >= data.k_max and data.gram_ok(max_bytes)
    k_cols = max(k, data.k_max)
    def run(o):
        full = np.zeros((data.n, k_cols))
        full[:, :k] = _dwh_pass(data, k, o, fast)[:, :k]
        return full[:, :k], _final_value(data, full, "SE")

    best, values = _best_of(orders, run)
    return _result(best[0], "dwh", best[1], _NAMES["SE"], None, None,
                   {"orders": [o.tolist() for o in orders], "objectives": values})


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


@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def gv1(ensemble, n_clusters, *, weights=None, n_init=3, max_iter=100, tol=DEFAULT_TOL, init="kcc",
        random_state=None):
    """GV1: Gordon & Vichi's (2001) model 1, the soft consensus under matched-cluster least squares.

    Minimises ``sum_i w_i sum_{(j, l) matched} ||U_i[:, l] - M[:, j]||^2`` (each cluster of M
    matched to at most one of U_i; unmatched clusters do not count) by alternating the
    matching (Hungarian on squared column distances) and clue's refit (module docstring).

    %(params)s%(returns)s%(notes)s"""
    data, k, n_init, max_iter, tol = _check_common(ensemble, n_clusters, weights, "gv1", n_init, max_iter, tol)
    starts = _starts(init, data, k, n_init, random_state)

    def run(M):
        T = data.cross(M)
        perms = _gv1_match(data, M, T)

        def step():
            nonlocal M, T, perms
            M = _gv1_fit(data, M, perms)
            T = data.cross(M)
            perms = _gv1_match(data, M, T)
            return _gv1_value(data, M, T, perms)

        value, n_iter, converged = _until_stable(step, _gv1_value(data, M, T, perms), max_iter, tol)
        return M, value, n_iter, converged

    best, values = _best_of(starts, run)
    M = _stochastify(best[0])
    T = data.cross(M)
    objective = _gv1_value(data, M, T, _gv1_match(data, M, T))
    return _result(M, "gv1", objective,
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
    W G and the product W G * (W G)^T of ``||Y||_F^2``), the one-hot (12 bytes an entry) and
    the equivalent of three n x max(k, 20) float64 arrays (the eigen solver's basis of at least
    20 vectors, then the descent's iterates, gradients and products)."""
    return 3 * n_c * n_c * 8 + 12 * n * r + 3 * n * max(k, 20) * 8


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


@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def gv3(ensemble, n_clusters, *, weights=None, n_init=1, max_iter=500, tol=1e-10, random_state=None,
        max_bytes=None):
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
    weights : array-like of shape (n_partitions,), default=None
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

    data = _Memberships(ensemble, weights, "gv3")
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
    best, values = _best_of(starts, lambda S0: _gv3_descent(Y, _simplex_rows(S0), max_iter, tol))
    M = _stochastify(best[0])
    return _result(M, "gv3", Y.loss(M), "squared Frobenius distance between the weighted co-membership and "
                   "M M^T, Gordon & Vichi 2001 model 3 (lower is better)", best[2], best[3], {"objectives": values})


# -- the exact symmetric-difference median ------------------------------------------------------

def _mean_comembership(data):
    """sum_i w_i U_i U_i^T, dense (the n are small here)."""
    Bw = data.B.multiply(np.repeat(data.w, data.K)[None, :]) if data.hard else data.B * np.repeat(data.w, data.K)
    A = np.asarray((Bw @ data.B.T).todense()) if data.hard else Bw @ data.B.T
    return np.asarray(A)


def _check_distinct_rows(data, k):
    """Refuse K above the number of distinct membership rows: objects whose rows are identical
    ("twins") are one object to the criterion, so which of them a larger K splits apart is
    arbitrary, and the program, left to choose among all those equal splits, can search for
    minutes (30 objects with 3 distinct rows asked for K = 6 did not finish in 300 s)."""
    distinct = data.ensemble.n_distinct_rows if data.hard else int(np.unique(data.B, axis=0).shape[0])
    check_distinct_label_vectors(k, distinct)


def symdiff_value(A, labels):
    """sum over pairs x < y of |A_xy - [labels_x == labels_y]| (A the weighted mean co-membership):
    the weighted symmetric-difference distance of ``labels`` to the partitions."""
    same = np.asarray(labels)[:, None] == np.asarray(labels)[None, :]
    iu = np.triu_indices(A.shape[0], 1)
    return float(np.abs(A[iu] - same[iu]).sum())


@declare(handles_missing=False, object_order="distribution", accepts_soft=True)  # optimal ties: HiGHS's pick
def symdiff_median(ensemble, n_clusters, *, weights=None, max_objects=MAX_SYMDIFF_OBJECTS, time_limit=None,
                   random_state=None):
    """The exact symmetric-difference (Rand) median partition with K classes, by integer programming.

    Minimises ``sum_i w_i sum_{x<y} |C_i(x, y) - C(x, y)|`` over equivalence relations C with
    exactly ``n_clusters`` classes (C_i the co-membership of partition i; for soft partitions
    its expectation). Since C is 0/1 the criterion is linear in C with coefficients
    ``1 - 2 A_xy`` (A the weighted mean co-membership): the clique partitioning program of
    Grötschel & Wakabayashi (1989), as the cut program for K = 2 and with class-assignment
    variables that fix the number of classes for K >= 3 (module docstring), solved to
    optimality by :func:`scipy.optimize.milp`. For K = 2 the cut program replaced the
    assignment program (whose relaxation can put every object half in each class): about 5x
    faster at n = 36 (docs/benchmarks.md). For K >= 3 a pair-only program (transitivity and
    class representatives) was tried and dropped: faster on clean ensembles, but over 200 s
    instead of 6 s on a noisy one.

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
        K, in [1, number of distinct label vectors]: identical rows cannot be told apart, so a
        larger K is refused.
    weights : array-like of shape (n_partitions,), default=None
    max_objects : int, default=40
        Largest n accepted: the program has n(n-1)/2 pair variables (and nK assignment
        variables for K >= 3, or 2n(n-1)(n-2)/3 triangle rows for K = 2), and its solution time
        grows steeply. Above it the call is refused with a
        :class:`cclust.errors.SizeLimitError`; raise it knowingly.
    time_limit : float, default=None
        Seconds HiGHS may spend; when reached, the best partition found is returned with
        ``extras["optimal"] = False``.
    random_state : ignored
        The program is solved exactly; accepted for the common contract.

    Returns
    -------
    ConsensusResult
        ``objective`` the weighted symmetric-difference distance (pairs counted once);
        ``extras["optimal"]`` whether HiGHS proved optimality.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> symdiff_median(E, 2).labels.tolist()
    [0, 0, 1, 1]
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    # The size limit is checked on the bare ensemble, before the memberships (and at n = 10^6 a
    # few GiB of one-hot and weighted copies) are built for a program that would be refused.
    source = ensemble if is_soft_ensemble(ensemble) else _complete(ensemble, "symdiff-median")
    n = source.n_samples
    max_objects = check_int(max_objects, "max_objects", low=1)
    if n > max_objects:
        raise SizeLimitError(
            f"ensemble has n_samples = {n} objects, more than max_objects = {max_objects}: the exact "
            f"symmetric-difference median is an integer program with n(n-1)/2 = {n * (n - 1) // 2} pair variables "
            "whose solution time grows steeply with n. Pass max_objects=... to try anyway (with time_limit=...), "
            "or use he/hm (the hard Euclidean/Manhattan consensus) for large n.")
    data = _Memberships(source, weights, "symdiff-median")
    k = check_int(n_clusters, "n_clusters", low=1, high=n)
    _check_distinct_rows(data, k)
    if time_limit is not None:
        time_limit = check_float(time_limit, "time_limit", low=0, low_open=True)
    A = _mean_comembership(data)
    if n == 1 or k == n or k == 1:
        labels = np.arange(n) if k == n else np.zeros(n, dtype=np.int64)
        return ConsensusResult.from_labels(labels, objective=symdiff_value(A, labels),
                                           objective_name=_SYMDIFF_NAME, method="symdiff-median",
                                           extras={"optimal": True})
    iu, ju = np.triu_indices(n, 1)
    together = 1.0 - 2.0 * A[iu, ju]           # criterion = sum A + sum together * c_xy
    pair = np.full((n, n), -1, dtype=np.int64)
    pair[iu, ju] = pair[ju, iu] = np.arange(iu.shape[0])
    if k == 2:
        matrix, lo, hi, cost, n_vars = _symdiff_two_classes(pair, together, k)
        twins = _twin_rows(data, A, pair, n_vars)
        if twins is not None:
            matrix = sp.vstack([matrix, twins]).tocsr()
            lo = np.concatenate([lo, np.full(twins.shape[0], -np.inf)])
            hi = np.concatenate([hi, np.zeros(twins.shape[0])])
        upper = np.ones(n_vars)
    else:
        matrix, lo, hi, cost, n_vars, upper = _symdiff_assignment(data, pair, together, k)
    options = {"mip_rel_gap": 0.0}           # exact: HiGHS's default stops at a relative gap of 1e-4
    if time_limit is not None:
        options["time_limit"] = time_limit
    res = milp(cost, constraints=LinearConstraint(matrix, lo, hi), integrality=np.ones(n_vars),
               bounds=Bounds(np.zeros(n_vars), upper), options=options)
    if res.x is None:
        raise ValidationError(f"symdiff-median: HiGHS found no solution ({res.message}); raise time_limit.")
    if k == 2:
        labels = _classes_of_relation(n, iu, ju, np.rint(res.x[:iu.shape[0]]) < 0.5)
    else:
        labels = np.rint(res.x[iu.shape[0]:]).reshape(n, k).argmax(axis=1)
    return ConsensusResult.from_labels(labels, objective=symdiff_value(A, labels), objective_name=_SYMDIFF_NAME,
                                       method="symdiff-median", extras={"optimal": bool(res.status == 0)})


def _symdiff_assignment(data, pair, together, k):
    """K >= 3: pair variables c_xy and class-assignment variables z_xc (object x in class c),
    linked by ``c_xy >= z_xc + z_yc - 1`` and ``c_xy <= 1 -+ (z_xc - z_yc)``; every object in one
    class, every class used; symmetry cut by letting object x use only classes 0..x, opening
    classes in order (x starts class c >= 1 only if an earlier object is in class c - 1), and
    making the class index non-decreasing along each group of twins (objects with the same
    memberships in every partition: interchangeable, so among the optimal labellings in opening
    order there is one whose twins are assigned, in index order, to the earliest opened class
    that still needs one of them). Returns (matrix, lo, hi, cost, n_vars, upper bounds)."""
    n = pair.shape[0]
    P = together.shape[0]
    iu, ju = np.triu_indices(n, 1)
    n_vars = P + n * k
    cost = np.concatenate([together, np.zeros(n * k)])
    pc = np.repeat(np.arange(P), k)                      # one row per (pair, class)
    cc = np.tile(np.arange(k), P)
    index = np.stack([pc, P + iu[pc] * k + cc, P + ju[pc] * k + cc], axis=1)
    link = [_rows(index, [1.0, -1.0, -1.0], n_vars),    # c_xy - z_xc - z_yc >= -1
            _rows(index, [1.0, 1.0, -1.0], n_vars),     # c_xy + z_xc - z_yc <= 1
            _rows(index, [1.0, -1.0, 1.0], n_vars)]     # c_xy - z_xc + z_yc <= 1
    m = index.shape[0]
    x_of = np.repeat(np.arange(n), k)
    c_of = np.tile(np.arange(k), n)
    one_class = sp.csr_matrix((np.ones(n * k), (x_of, P + np.arange(n * k))), shape=(n, n_vars))
    used = sp.csr_matrix((np.ones(n * k), (c_of, P + np.arange(n * k))), shape=(k, n_vars))
    srows, scols, svals = [], [], []
    row = 0
    for x in range(1, n):
        for c in range(1, min(k, x + 1)):
            srows += [row] * (x + 1)
            scols += [P + x * k + c] + [P + y * k + c - 1 for y in range(x)]
            svals += [1.0] + [-1.0] * x
            row += 1
    classes = np.arange(k, dtype=np.float64)
    for x, y in _twin_groups(data):
        srows += [row] * (2 * k)
        scols += [P + x * k + c for c in range(k)] + [P + y * k + c for c in range(k)]
        svals += classes.tolist() + (-classes).tolist()
        row += 1
    order = sp.csr_matrix((svals, (srows, scols)), shape=(row, n_vars))
    matrix = sp.vstack(link + [one_class, used, order]).tocsr()
    lo = np.concatenate([np.full(m, -1.0), np.full(2 * m, -np.inf), np.ones(n), np.ones(k), np.full(row, -np.inf)])
    hi = np.concatenate([np.full(m, np.inf), np.ones(2 * m), np.ones(n), np.full(k, np.inf), np.zeros(row)])
    upper = np.ones(n_vars)
    upper[P:][c_of > x_of] = 0.0
    return matrix, lo, hi, cost, n_vars, upper


def _triangles(pair):
    """Every triple x < y < z of objects as the ids of its pairs (xy, yz, xz), (T, 3)."""
    n = pair.shape[0]
    x, y, z = (t.reshape(-1) for t in np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij"))
    keep = (x < y) & (y < z)
    x, y, z = x[keep], y[keep], z[keep]
    return np.stack([pair[x, y], pair[y, z], pair[x, z]], axis=1)


def _rows(index_lists, coefficients, n_cols):
    """A CSR matrix with one row per row of ``index_lists`` (T, m) and the m ``coefficients``."""
    t, m = index_lists.shape
    return sp.csr_matrix((np.tile(np.asarray(coefficients, dtype=np.float64), t),
                          (np.repeat(np.arange(t), m), index_lists.reshape(-1))), shape=(t, n_cols))


def _symdiff_two_classes(pair, together, k):
    """Two classes: the cut program. Binary d_xy (x, y in different classes) with the triangle
    inequalities of the cut polytope, ``d_xy <= d_xz + d_yz`` (all three ways) and
    ``d_xy + d_yz + d_xz <= 2``: a 0/1 vector satisfying them is exactly the cut of a
    two-colouring, and ``sum_y d_0y >= 1`` makes both classes non-empty. The criterion is
    linear in d: ``sum together * (1 - d)``. These inequalities make the relaxation far tighter
    than class-assignment variables, whose relaxation can put every object half in each class."""
    n = pair.shape[0]
    P = int(pair.max()) + 1
    tri = _triangles(pair)
    cut = sp.vstack([_rows(tri[:, [0, 1, 2]], [1, -1, -1], P),
                     _rows(tri[:, [1, 0, 2]], [1, -1, -1], P),
                     _rows(tri[:, [2, 0, 1]], [1, -1, -1], P),
                     _rows(tri, [1, 1, 1], P)])
    both_used = sp.csr_matrix((np.ones(n - 1), (np.zeros(n - 1, dtype=np.int64), pair[0, 1:])), shape=(1, P))
    T = tri.shape[0]
    matrix = sp.vstack([cut, both_used]).tocsr()
    lo = np.concatenate([np.full(4 * T, -np.inf), [1.0]])
    hi = np.concatenate([np.zeros(3 * T), np.full(T, 2.0), [np.inf]])
    return matrix, lo, hi, -together, P


def _twin_groups(data):
    """The consecutive pairs (x, y), x < y, of twins: objects with the same memberships in every
    partition (so the same co-memberships with everyone: interchangeable)."""
    dense = data.B.toarray() if data.hard else data.B
    _, group = np.unique(dense, axis=0, return_inverse=True)
    group = group.reshape(-1)
    pairs = []
    for g in np.unique(group):
        members = np.flatnonzero(group == g)
        pairs += list(zip(members[:-1].tolist(), members[1:].tolist()))
    return pairs


def _twin_rows(data, A, pair, n_vars):
    """Rows ``<= 0`` on the separation variables of the cut program that cut symmetric and
    non-optimal copies among twins x < y with ``A_xy > 1/2``.

    Moving x to y's class or y to x's changes the criterion by amounts summing to
    ``2 (1 - 2 A_xy) < 0`` (twins have the same co-memberships with everyone else), so in an
    optimal partition two separated twins never both sit in classes of two or more objects: a
    twin group is one block plus singletons, and since twins are interchangeable the block can
    be taken to hold the group's first objects. For consecutive twins x < y that is
    ``c_yz <= c_xy`` for every other z (if x and y are apart, y is alone); on separation
    variables d = 1 - c, ``d_xy <= d_yz``. Every optimal partition has a relabelling of twins
    that satisfies these rows, so the optimum is unchanged."""
    n = pair.shape[0]
    lists = []
    for x, y in _twin_groups(data):
        if A[x, y] > 0.5:
            others = np.setdiff1d(np.arange(n), [x, y])
            lists.append(np.stack([np.full(others.shape[0], pair[x, y]), pair[y, others]], axis=1))
    if not lists:
        return None
    return _rows(np.concatenate(lists), [1, -1], n_vars)   # d_xy - d_yz <= 0


def _classes_of_relation(n, iu, ju, same):
    """Labels 0, 1, ... in order of first appearance from an equivalence relation given on pairs."""
    labels = np.full(n, -1, dtype=np.int64)
    partner = np.zeros((n, n), dtype=bool)
    partner[iu[same], ju[same]] = True
    next_label = 0
    for x in range(n):
        if labels[x] < 0:
            labels[x] = next_label
            labels[x + 1:][partner[x, x + 1:]] = next_label
            next_label += 1
    return labels


_SYMDIFF_NAME = ("weighted symmetric-difference distance to the partitions, pairs counted once "
                 "(lower is better)")


for _fn in (se, he, sm, hm, gv1):
    _fn.__doc__ = _fn.__doc__.replace("%(params)s", _DOC_PARAMS).replace("%(ties)s", _TIE_DOC).replace(
        "%(returns)s", _DOC_RETURNS).replace("%(notes)s", _STARTS_NOTES)
del _fn
