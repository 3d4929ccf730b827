"""Median partitions with optimal matching of the clusters: the partition consensus methods of
R's clue (Hornik 2005): SE, HE, SM, HM and DWH.

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
* GV1 and GV3 (Gordon & Vichi 2001) are in :mod:`cclust.consensus_functions.gordon_vichi`, the
  exact symmetric-difference median in :mod:`cclust.consensus_functions.symdiff`; what the
  methods share (memberships, starts, stopping rule) in ``_median``.

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
in n; M is formed once at the end. SM's refit of a hard ensemble reads each object's matched
column in every partition: with 0/1 memberships the linear program's solution is the vertex of
the cluster with the largest matched weight (ties as the greedy order breaks them), found
without sorting the pieces (:func:`l1_simplex_median_of_columns`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust.base import declare
from cclust.consensus_functions._median import (DEFAULT_TOL, Memberships, best_start, check_common, fill_docs,
                                                median_result, project_leading, start_memberships, stochastify,
                                                until_stable)
from cclust.errors import ValidationError
from cclust.matching import match_columns
from cclust.validation import check_int, spawn_seed_sequences
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike
from cclust.result import ConsensusResult

if TYPE_CHECKING:
    from cclust.soft import SoftEnsemble

__all__ = ["se", "he", "dwh", "sm", "hm"]

#: Rows of the (rows, r + 1, K) piece arrays of the L1 refit processed at once.
_L1_CHUNK_ELEMENTS = 1 << 21


# -- Euclidean and Manhattan matching and criteria --------------------------------------------

def _match_euclidean(data, T, k_cols):
    """Each partition's clusters matched to M's columns maximising the matched cross products."""
    return [match_columns(T[data.block(i)], maximize=True) for i in range(data.r)]


def _matched_sum(data, T, assignments):
    return np.array([T[data.offsets[i] + np.arange(data.K[i]), cols].sum() for i, cols in enumerate(assignments)])


def _value_euclidean(data, M_norm2, T, assignments):
    """sum_i w_i ||U_i P_i - M||^2 = sum_i w_i (||U_i||^2 + ||M||^2 - 2 tr(P_i^T U_i^T M))."""
    return float(data.w @ (data.norms2 + M_norm2 - 2.0 * _matched_sum(data, T, assignments)))


def _manhattan_costs(data, i, M, T, s):
    """Square (k_cols, k_cols) cost of matching partition i's clusters (rows; zero columns
    padded below) to M's columns: ``||U_i[:, l] - M[:, c]||_1``; ``s`` is M's column sums."""
    k_cols = M.shape[1]
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
    s = M.sum(axis=0)   # once for all partitions: an n x max K_i sum each time otherwise
    return [match_columns(_manhattan_costs(data, i, M, T, s), maximize=False)[:data.K[i]] for i in range(data.r)]


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


def l1_simplex_median_of_columns(columns, w, k):
    """:func:`l1_simplex_median` of 0/1 memberships, from the column each partition gives each row.

    Parameters
    ----------
    columns : ndarray of int, shape (m, r)
        The column in ``0..k-1`` of row x's single 1 in partition i, or -1 where that row of
        partition i is all zeros (its cluster matched past the first k columns).
    w : ndarray of shape (r,), non-negative, summing to one
    k : int

    With values 0 and 1 only, coordinate j of a row has one piece of positive length, [0, 1),
    after its z_j zeros in sorted order (z_j: the partitions not giving the row column j). Its
    slope is ``2 W_j - 1``, W_j the weight of those partitions, added in partition order as the
    cumulative sum of the stably sorted weights adds it. The whole budget goes to the piece of
    smallest slope, among equal slopes the first in the order (z_j, j) of the pieces there: the
    median is a vertex of the simplex, the same array as :func:`l1_simplex_median` gives, bit
    for bit, with r passes of additions over an (m, k) array and no sort.
    """
    m_rows, r = columns.shape
    rows = np.arange(m_rows)
    zero_weight = np.zeros((m_rows, k))       # W_j, summed in partition order
    given = np.zeros((m_rows, k), dtype=np.intp)
    for i in range(r):
        where = np.flatnonzero(columns[:, i] >= 0)
        cols = columns[where, i]
        kept = zero_weight[where, cols]        # the weight of a partition giving column j is not in W_j
        zero_weight += w[i]
        zero_weight[where, cols] = kept
        given[where, cols] += 1
    slopes = 2.0 * zero_weight - 1.0
    lowest = slopes.min(axis=1, keepdims=True)
    position = (r - given) * k + np.arange(k)  # a piece's place in the stable sort of the slopes
    winner = np.where(slopes == lowest, position, np.iinfo(np.intp).max).argmin(axis=1)
    out = np.zeros((m_rows, k))
    out[rows, winner] = 1.0
    return out


#: Elements of each (rows, max(K, r)) array of the L1 refit of a hard ensemble processed at once.
_HARD_L1_CHUNK_ELEMENTS = 1 << 18
#: Arrays of that size the hard refit holds: the partitions' columns, W, the counts, the slopes,
#: the places and the result.
_HARD_L1_ARRAYS = 6


def _l1_fit(data, assignments, k, k_cols):
    """SM's refit: every row's L1 median (on the simplex) of its matched memberships' first k
    columns; for a hard ensemble from the matched columns alone
    (:func:`l1_simplex_median_of_columns`, the same numbers)."""
    M = np.zeros((data.n, k_cols))
    if data.hard:
        rows = max(1, _HARD_L1_CHUNK_ELEMENTS // max(k, data.r))
        for start in range(0, data.n, rows):
            stop = min(data.n, start + rows)
            columns = np.empty((stop - start, data.r), dtype=np.intp)
            for i, cols in enumerate(assignments):
                target = cols[data.codes_of(i, slice(start, stop))]
                columns[:, i] = np.where(target < k, target, -1)
            M[start:stop, :k] = l1_simplex_median_of_columns(columns, data.w, k)
        return M
    rows = max(1, _L1_CHUNK_ELEMENTS // ((data.r + 1) * k))
    for start in range(0, data.n, rows):
        stop = min(data.n, start + rows)
        V = np.zeros((stop - start, data.r, k))
        for i, cols in enumerate(assignments):
            keep = cols < k
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
    Q = data.matched_scatter(assign, k_cols)
    # A hard B is sparse with unit entries: each vote is a sum of weights in the order of the
    # row's entries, whatever the width of Q, so only the k columns read are formed (an n x
    # max K_i matrix otherwise). A dense (soft) B goes through BLAS, whose sums may depend on that width.
    V = data.combine(np.ascontiguousarray(Q[:, :k])) if data.hard else data.combine(Q)[:, :k]
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
    """B^T M for a one-hot M: the contingency table (compiled) for a hard ensemble, counted for
    the clusters ``ids`` uses only (K of the k_cols, the other columns being zero), so that the
    counting core's tables have K rows and not max K_i."""
    if data.hard:
        used = int(ids.max()) + 1 if ids.size else 1
        T = np.zeros((data.C, k_cols))
        T[:, :used] = data.ensemble.contingency(ids, used).T
        return T
    return data.cross(M)


# -- the alternating optimisation of SE, HE, SM, HM --------------------------------------------

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
            M = T = None    # not held through the refits, which start from the matchings alone
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
                        M = project_leading(M, k)
                    T = data.cross(M)
                    M_norm2 = float((M ** 2).sum())
                assign = _match_euclidean(data, T, k_cols)
                return _value_euclidean(data, M_norm2, T, assign)
            M = _l1_fit(data, assign, k, k_cols)  # SM
            T = data.cross(M)
            assign = _match_manhattan(data, M, T)
            return _value_manhattan(data, M, T, assign)

        value, n_iter, converged = until_stable(step, old, max_iter, tol)
        return (data.combine(Q) if M is None else M), value, n_iter, converged

    best, values = best_start(starts, run)
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

    value, n_iter, converged = until_stable(step, old, max_iter, tol)
    ids = state["ids"]
    for _ in range(tie_rounds):
        moved = _tie_flip(data, state["assign"], ids, k, k_cols)
        if moved is None:
            break
        kept = (state["assign"], ids)
        state["ids"] = moved
        start, state["assign"] = _hard_criterion(data, euclid, moved, k_cols)
        new, extra, conv = until_stable(step, start, max_iter, tol)
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


#: Dense (n, max(K, max K_i)) float64 matrices held at once (a hard ensemble's products read
#: its label codes: no one-hot and no int32 label matrix): SE 5 (the best start's memberships,
#: the current ones and the next, their squares, the projection's copies), SM on soft
#: memberships 3 plus its L1 refit's pieces (about 13 float64 arrays of a chunk of at most
#: ``_L1_CHUNK_ELEMENTS`` elements), DWH 2 (the memberships and the next partition's). Fitted on noisy refinements of
#: 4 * 10^4 x 50 and 10^5 x 30 objects x partitions (K_i up to 40) and 4 * 10^4 x 20 (K_i up
#: to 200).
_DENSE_COPIES = {"SE": 5, "SM": 3, "DWH": 2}
_L1_PIECE_BYTES = 13 * 8
#: SM on a hard ensemble: its refit forms no pieces (:func:`l1_simplex_median_of_columns`, six
#: arrays of at most ``_HARD_L1_CHUNK_ELEMENTS`` elements), and its peak is then four dense copies
#: (4.0 to 4.7 of them measured on the noisy refinements above and on 10^5 x 30).
_HARD_SM_DENSE_COPIES = 4

#: HM holds two: the best start's memberships and the refit's one-hot (or, at the end, the
#: result and its padded copy); HE a third, the squares whose sum its criterion reads. Their
#: refits read K columns of the votes and count the contingency table for K clusters, so the
#: rest of their peak is two (sum K_i, max(K, max K_i)) tables (the cross product and the
#: matching's scatter) and the n_init (n, K) starts (the one-hot B is not formed: its products
#: read the label codes).
_HARD_DENSE_COPIES = {"HE": 3, "HM": 2}
_HARD_TABLES = 2


def _run_aos(kind, method, ensemble, n_clusters, n_init, max_iter, tol, init, random_state, max_bytes=None,
             tie_rounds=0):
    data, k, n_init, max_iter, tol = check_common(ensemble, n_clusters, method, n_init, max_iter, tol)
    tie_rounds = check_int(tie_rounds, "tie_rounds", low=0)
    if kind in ("HE", "HM"):
        data.require_dense(k, _HARD_DENSE_COPIES[kind], method, max_bytes, tables=_HARD_TABLES,
                          starts=n_init)
    else:
        copies, pieces = _DENSE_COPIES[kind], 0
        if kind == "SM" and data.hard:
            copies = _HARD_SM_DENSE_COPIES
            pieces = min(_HARD_L1_CHUNK_ELEMENTS, data.n * max(int(k), data.r)) * 8 * _HARD_L1_ARRAYS
        elif kind == "SM":
            pieces = min(_L1_CHUNK_ELEMENTS, data.n * (data.r + 1) * k) * _L1_PIECE_BYTES
        data.require_dense(k, copies, method, max_bytes, extra=pieces)
    starts = start_memberships(init, data, k, n_init, random_state)
    M, value, n_iter, converged, values = _aos(data, k, kind, starts, max_iter, tol, max_bytes, tie_rounds)
    M = stochastify(M) if kind in ("SE", "SM") else M
    k_cols = M.shape[1]
    full = np.zeros((data.n, k_cols))
    full[:, :k] = M[:, :k]
    objective = _final_value(data, full, kind)
    return median_result(M[:, :k], method, objective, _NAMES[kind], n_iter, converged,
                   {"objectives": values, "fixed_point_value": value})


@weights_on_the_ensemble
@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def se(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, n_init: int = 3,
       max_iter: int = 100, tol: float = DEFAULT_TOL, init: str | npt.ArrayLike = "kcc",
       random_state: RandomStateLike = None, max_bytes: int | None = None) -> ConsensusResult:
    """Soft Euclidean consensus partition, SE (Dimitriadou, Weingessel & Hornik 2002; Hornik 2005).

    The soft membership M minimising ``sum_i w_i min_P ||U_i P - M||_F^2`` by alternating
    optimisation (module docstring): the fixed point of optimal matching and the weighted mean
    of the matched memberships.

    %(params)s    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the iteration for its dense n x max(K, max K_i) memberships (five at
        once) and a hard ensemble's one-hot; also the budget of the (sum K_i)^2 Gram matrix of
        the fast route.
%(returns)s%(notes)s
    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [1, 0, 0]])
    >>> r = se(E, 2, random_state=0)
    >>> r.labels.tolist(), r.extras["membership"].round(3).tolist()[3]
    ([0, 0, 1, 1], [0.333, 0.667])
    """
    return _run_aos("SE", "se", ensemble, n_clusters, n_init, max_iter, tol, init, random_state, max_bytes)


@weights_on_the_ensemble
@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def he(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, n_init: int = 3,
       max_iter: int = 100, tol: float = DEFAULT_TOL, init: str | npt.ArrayLike = "kcc",
       random_state: RandomStateLike = None, tie_rounds: int = 10, max_bytes: int | None = None) -> ConsensusResult:
    """Hard Euclidean consensus partition, HE (Dimitriadou, Weingessel & Hornik 2002; Hornik 2005).

    SE's criterion over hard memberships: the refit gives every object its most likely cluster
    of the weighted mean of the matched memberships.

    %(params)s    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the iteration for its dense n x max(K, max K_i) memberships
        (three at once, two cluster tables and the starts).
%(ties)s%(returns)s%(notes)s"""
    return _run_aos("HE", "he", ensemble, n_clusters, n_init, max_iter, tol, init, random_state,
                    max_bytes, tie_rounds=tie_rounds)


@weights_on_the_ensemble
@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def sm(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, n_init: int = 3,
       max_iter: int = 100, tol: float = DEFAULT_TOL, init: str | npt.ArrayLike = "kcc",
       random_state: RandomStateLike = None, max_bytes: int | None = None) -> ConsensusResult:
    """Soft Manhattan consensus partition, SM (Hornik & Böhm 2007; Hornik 2005).

    Minimises ``sum_i w_i min_P ||U_i P - M||_1`` over soft M: matching by L1 cost and the
    refit by the per-object linear program (solved exactly, module docstring).

    %(params)s    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the iteration for its dense n x max(K, max K_i) memberships
        (three at once and the refit's pieces of a chunk of rows; four for a hard ensemble,
        whose refit reads the matched columns and forms no pieces).
%(returns)s%(notes)s"""
    return _run_aos("SM", "sm", ensemble, n_clusters, n_init, max_iter, tol, init, random_state, max_bytes)


@weights_on_the_ensemble
@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def hm(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, n_init: int = 3,
       max_iter: int = 100, tol: float = DEFAULT_TOL, init: str | npt.ArrayLike = "kcc",
       random_state: RandomStateLike = None, tie_rounds: int = 10, max_bytes: int | None = None) -> ConsensusResult:
    """Hard Manhattan consensus partition, HM (Hornik & Böhm 2007; Hornik 2005).

    SM's criterion over hard memberships (for a hard M it is linear in M with the matched
    votes as coefficients, so HE's refit and tie moves apply unchanged).

    %(params)s    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the iteration for its dense n x max(K, max K_i) memberships
        (two at once, two cluster tables and the starts).
%(ties)s%(returns)s%(notes)s"""
    return _run_aos("HM", "hm", ensemble, n_clusters, n_init, max_iter, tol, init, random_state,
                    max_bytes, tie_rounds=tie_rounds)


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
        T = data.cross_block(b, M)   # a hard ensemble's: one pass over the codes, summed in object order
        cols = match_columns(_prefer_empty(T, M.sum(axis=0)), maximize=True)
        M *= 1.0 - sb
        if data.hard:
            # U_b P_b has a single one per row: add s_b there, in place (adding s_b * 0 to the
            # other entries changes nothing), instead of forming the dense (n, k_cols) matrix
            rows = np.arange(data.n)
            M[rows, cols[data.codes_of(b)]] += sb
        else:
            M += sb * data.matched_dense(b, cols, k_cols)
        if k < k_cols:
            M = project_leading(M, k)
    return M


@weights_on_the_ensemble
@declare(handles_missing=False, object_order="distribution", accepts_soft=True)
def dwh(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, n_init: int = 1,
        order: npt.ArrayLike | None = None, random_state: RandomStateLike = None,
        max_bytes: int | None = None) -> ConsensusResult:
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
    n_init : int, default=1
        Random orders tried; the result of lowest SE criterion is kept.
    order : array-like of int, default=None
        The order of the partitions (a permutation of ``range(n_partitions)``); overrides
        ``n_init``.
    random_state : int, Generator or None
        Seeds the random orders.
    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the pass for its two dense n x max(K, max K_i) memberships; also the
        budget of the (sum K_i)^2 Gram matrix of the fast route.

    Returns
    -------
    ConsensusResult
        ``objective``: SE's criterion of ``extras["membership"]`` (n, K), every partition
        optimally matched to it; ``extras["orders"]``, ``extras["objectives"]`` per order.
    """
    data = Memberships(ensemble, "dwh")
    k = check_int(n_clusters, "n_clusters", low=1, high=data.n)
    data.require_dense(k, _DENSE_COPIES["DWH"], "dwh", max_bytes)
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

    best, values = best_start(orders, run)
    return median_result(best[0], "dwh", best[1], _NAMES["SE"], None, None,
                   {"orders": [o.tolist() for o in orders], "objectives": values})


fill_docs(se, he, sm, hm)
