"""The exact median partition under the symmetric-difference distance (clue's ``"symdiff"``
method of ``cl_consensus``; Hornik 2005), by integer programming.

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
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust.base import declare
from cclust.consensus_functions._median import Memberships, require_complete
from cclust.errors import SizeLimitError, ValidationError
from cclust.result import ConsensusResult
from cclust.soft import is_soft_ensemble
from cclust.validation import check_distinct_label_vectors, check_float, check_int
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

if TYPE_CHECKING:
    from cclust.soft import SoftEnsemble

__all__ = ["symdiff_median", "symdiff_value", "MAX_SYMDIFF_OBJECTS"]

#: Default size limit of the exact symmetric-difference median (objects).
MAX_SYMDIFF_OBJECTS = 40


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
    """``sum_{x < y} |A_xy - [labels_x == labels_y]|`` (A the weighted mean co-membership): the
    weighted symmetric-difference distance of ``labels`` to the partitions."""
    same = np.asarray(labels)[:, None] == np.asarray(labels)[None, :]
    iu = np.triu_indices(A.shape[0], 1)
    return float(np.abs(A[iu] - same[iu]).sum())


@weights_on_the_ensemble
@declare(handles_missing=False, object_order="distribution", accepts_soft=True)  # optimal ties: HiGHS's pick
def symdiff_median(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *,
                   max_objects: int = MAX_SYMDIFF_OBJECTS, time_limit: float | None = None,
                   max_bytes: int | None = None, random_state: RandomStateLike = None) -> ConsensusResult:
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
    max_objects : int, default=40
        Largest n accepted: the program has n(n-1)/2 pair variables (and nK assignment
        variables for K >= 3, or 2n(n-1)(n-2)/3 triangle rows for K = 2), and its solution time
        grows steeply. Above it the call is refused with a
        :class:`cclust.errors.SizeLimitError`; raise it knowingly.
    time_limit : float, default=None
        Seconds HiGHS may spend; when reached, the best partition found is returned with
        ``extras["optimal"] = False``.
    max_bytes : int, default=None
        Memory budget of the call's guards (the ensemble's one-hot;
        :func:`cclust.validation.memory_budget` if None).
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
    source = ensemble if is_soft_ensemble(ensemble) else require_complete(ensemble, "symdiff-median")
    n = source.n_samples
    max_objects = check_int(max_objects, "max_objects", low=1)
    if n > max_objects:
        raise SizeLimitError(
            f"ensemble has n_samples = {n} objects, more than max_objects = {max_objects}: the exact "
            f"symmetric-difference median is an integer program with n(n-1)/2 = {n * (n - 1) // 2} pair variables "
            "whose solution time grows steeply with n. Pass max_objects=... to try anyway (with time_limit=...), "
            "or use he/hm (the hard Euclidean/Manhattan consensus) for large n.")
    data = Memberships(source, "symdiff-median")
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
