"""Hard or soft partitions as membership matrices, and clue's measures read through the best
one-to-one matching of their clusters (Hornik 2005): Euclidean, Manhattan and Mallows
distances, the matched agreements, angle and diag.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.base import declare
from cclust.validation import check_float, check_same_length, label_vector
from cclust.errors import ValidationError
from cclust.metrics._tables import _table_from_codes


# -- hard or soft partitions: clue's agreement and dissimilarity measures (Hornik 2005) ---------

#: A membership matrix's rows may sum to 1 within this absolute tolerance.
MEMBERSHIP_ROW_TOL = 1e-6


def membership_matrix(memberships: npt.ArrayLike, name: str = "memberships") -> npt.NDArray[np.float64]:
    """Check a soft partition: an (n_samples, n_clusters) matrix of memberships, rows summing to 1.

    Parameters
    ----------
    memberships : array-like of shape (n_samples, n_clusters)
        Non-negative, finite, at least 2 columns, each row summing to 1 within
        :data:`MEMBERSHIP_ROW_TOL` (e.g. a Gaussian mixture's ``predict_proba``, fuzzy c-means
        memberships, or a one-hot matrix of a hard partition).
    name : str
        The argument's name, for the error messages.

    Returns
    -------
    memberships : ndarray of shape (n_samples, n_clusters), float64, C-contiguous
        The caller's array itself when it already is one (read it, never write it).

    Raises
    ------
    ValidationError
        Naming ``name``: not numeric, empty, fewer than 2 columns, NaN or infinity, a negative
        membership, or a row whose sum differs from 1.
    """
    array = np.asarray(memberships)
    if array.ndim != 2:
        raise ValidationError(f"{name} must be a 2-D membership matrix (n_samples, n_clusters), got an "
                              f"array of shape {array.shape}.")
    if array.dtype.kind not in "biuf":
        raise ValidationError(f"{name} is read as a membership matrix (2-D) and must be numeric, got dtype "
                              f"{array.dtype}.")
    n, k = array.shape
    if n == 0:
        raise ValidationError(f"{name} must not be empty.")
    if k < 2:
        raise ValidationError(f"{name} is a membership matrix with {k} column; a soft partition needs at least "
                              "2 clusters (pass a label vector for the one-cluster partition).")
    M = np.ascontiguousarray(array, dtype=np.float64)
    sums = M.sum(axis=1)  # NaN or infinity anywhere in a row makes its sum non-finite
    if not np.isfinite(sums).all() and not np.isfinite(M).all():
        raise ValidationError(f"{name} contains NaN or infinity; memberships must be finite.")
    if M.min() < 0:
        row = int(np.flatnonzero((M < 0).any(axis=1))[0])
        raise ValidationError(f"{name} has a negative membership (row {row}: {M[row].min()!r}); memberships "
                              "must be non-negative.")
    deviation = np.abs(sums - 1.0)
    if (deviation > MEMBERSHIP_ROW_TOL).any():
        row = int(np.argmax(deviation))
        raise ValidationError(f"{name} must have rows summing to 1 (within {MEMBERSHIP_ROW_TOL:g}): row {row} "
                              f"sums to {M[row].sum()!r}.")
    return M


class _Partition:
    """One side of a comparison: hard codes (0..k-1) and, for a soft partition, its memberships."""

    __slots__ = ("codes", "k", "memberships")

    def __init__(self, value, name):
        if np.ndim(value) == 2:
            self.memberships = membership_matrix(value, name)
            # The nearest hard partition, as clue's cl_class_ids (ties: first cluster, not at random).
            self.codes = np.argmax(self.memberships, axis=1).astype(np.int64)
            self.k = self.memberships.shape[1]
        else:
            self.memberships = None
            self.codes, self.k = label_vector(value, name)

    def dense(self, k):
        """Memberships padded with empty clusters to k columns (one-hot for a hard partition); read only."""
        if self.memberships is not None and self.k == k:
            return self.memberships
        n = self.codes.shape[0]
        M = np.zeros((n, k))
        if self.memberships is None:
            M[np.arange(n), self.codes] = 1.0
        else:
            M[:, :self.k] = self.memberships
        return M


def _partitions(partition_a, partition_b):
    a = _Partition(partition_a, "partition_a")
    b = _Partition(partition_b, "partition_b")
    check_same_length(a.codes, b.codes, "partition_a", "partition_b")
    return a, b


def _hard_table(a, b):
    """Contingency table of the two (nearest) hard partitions."""
    return _table_from_codes(a.codes, a.k, b.codes, b.k)


def _soft(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """Both sides as dense membership matrices with a common number of columns, or None if both are hard."""
    if a.memberships is None and b.memberships is None:
        return None
    k = max(a.k, b.k)
    from cclust.validation import require_memory

    require_memory(2 * a.codes.shape[0] * k * 8, f"two {a.codes.shape[0]} x {k} membership matrices",
                   "compare partitions with fewer clusters")
    return a.dense(k), b.dense(k)


def _matched_columns(Ma, Mb):
    """Mb with its columns permuted to fit Ma best (largest trace of Ma^T Mb; Hornik 2005, sec. 4)."""
    from cclust.matching import match_clusters

    return Mb[:, match_clusters(Ma.T @ Mb)]


#: Objects x clusters^2 entries per block of the column-distance pass.
_COLUMN_BLOCK = 1 << 20


def _column_distances(Ma: np.ndarray, Mb: np.ndarray, p: float) -> np.ndarray:
    """C[i, j] = sum_o |Ma[o, i] - Mb[o, j]|^p over row blocks (O(n k^2) time, O(k^2) extra memory)."""
    n, k = Ma.shape
    C = np.zeros((k, k))
    block = max(1, _COLUMN_BLOCK // (k * k))
    for start in range(0, n, block):
        d = np.abs(Ma[start:start + block, :, None] - Mb[start:start + block, None, :])
        if p != 1.0:
            d **= p
        C += d.sum(axis=0)
    return C


def _matched_distance(Ma: np.ndarray, Mb: np.ndarray, p: float) -> float:
    """min over column permutations of sum_j ||Ma[:, j] - Mb[:, perm_j]||_p^p (clue's Manhattan, Mallows)."""
    from cclust.matching import match_clusters

    C = _column_distances(Ma, Mb, p)
    return float(C[np.arange(C.shape[0]), match_clusters(C, maximize=False)].sum())


def _check_p(p):
    return check_float(p, "p", low=1.0)


@declare(higher_is_better=False)
def euclidean_distance(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Euclidean dissimilarity of two partitions under the best matching of their clusters (lower is better).

    ``min_P ||M_a - M_b P||_F`` over column permutations P of the membership matrices, both
    brought to ``k = max(K_a, K_b)`` columns by adding empty clusters (Dimitriadou, Weingessel
    & Hornik 2002; Hornik 2005, clue's ``cl_dissimilarity(method = "euclidean")``). The best P
    maximises ``trace(M_a^T M_b P)`` (``scipy.optimize.linear_sum_assignment`` on the
    cross-product); the distance is then summed directly over the matched memberships. For hard
    partitions it is ``sqrt(2 (n - m))`` with m the largest number of objects on matched
    clusters, read from one compiled contingency pass: twice the transfer distance (Charon et
    al. 2006) under the square root.

    Parameters
    ----------
    partition_a : array-like of shape (n_samples,) or (n_samples, K_a)
        A labelling, or a membership matrix (rows non-negative and summing to 1).
    partition_b : array-like of shape (n_samples,) or (n_samples, K_b)
        The same for the second partition.

    Returns
    -------
    distance : float
        0.0 exactly for identical hard partitions (cluster names aside); at most ``sqrt(2n)``.

    Examples
    --------
    >>> from cclust.metrics import euclidean_distance
    >>> euclidean_distance([0, 0, 1, 1], [1, 1, 0, 0])
    0.0
    >>> euclidean_distance([0, 0, 1, 1], [0, 0, 0, 1]) == 2 ** 0.5
    True
    """
    return _euclidean(*_partitions(partition_a, partition_b))


def _euclidean(a, b):
    soft = _soft(a, b)
    if soft is None:
        return _euclidean_from_table(_hard_table(a, b))
    Ma, Mb = soft
    difference = Ma - _matched_columns(Ma, Mb)
    return float(math.sqrt(np.einsum("ij,ij->", difference, difference)))


@declare(higher_is_better=True)
def euclidean_agreement(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Euclidean agreement ``1 - d / sqrt(2n)`` with d the :func:`euclidean_distance` (higher is better).

    clue's ``cl_agreement(method = "euclidean")`` (Hornik 2005): ``sqrt(2n)`` bounds the
    distance, so the agreement lies in [0, 1], 1 for identical partitions. Parameters as
    :func:`euclidean_distance`.

    Examples
    --------
    >>> from cclust.metrics import euclidean_agreement
    >>> euclidean_agreement([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    a, b = _partitions(partition_a, partition_b)
    return 1.0 - _euclidean(a, b) / math.sqrt(2 * a.codes.shape[0])


@declare(higher_is_better=False)
def manhattan_distance(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Manhattan dissimilarity of two partitions under the best matching of their clusters (lower is better).

    ``min_P sum |M_a - M_b P|`` over column permutations P, the memberships brought to a common
    number of columns (Hornik 2005, clue's ``cl_dissimilarity(method = "manhattan")``). The
    cost of matching cluster i with cluster j is ``sum_o |M_a[o, i] - M_b[o, j]|``; for soft
    partitions it takes one O(n k^2) pass in row blocks, for hard ones it is
    ``n_i + n_j - 2 n_ij`` from the contingency table, so the distance is ``2 (n - m)``
    (twice the transfer distance, Charon et al. 2006). Parameters as :func:`euclidean_distance`.

    Returns
    -------
    distance : float
        0.0 for identical hard partitions; at most ``2n``.

    Examples
    --------
    >>> from cclust.metrics import manhattan_distance
    >>> manhattan_distance([0, 0, 1, 1], [0, 0, 0, 1])
    2.0
    >>> manhattan_distance([[1.0, 0.0], [0.5, 0.5]], [[0.0, 1.0], [0.0, 1.0]])
    1.0
    """
    return _manhattan(*_partitions(partition_a, partition_b))


def _manhattan(a, b):
    soft = _soft(a, b)
    if soft is None:
        return _manhattan_from_table(_hard_table(a, b))
    return _matched_distance(*soft, 1.0)


@declare(higher_is_better=True)
def manhattan_agreement(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Manhattan agreement ``1 - d / (2n)`` with d the :func:`manhattan_distance` (higher is better).

    clue's ``cl_agreement(method = "manhattan")`` (Hornik 2005); in [0, 1], 1 for identical
    partitions. Parameters as :func:`euclidean_distance`.

    Examples
    --------
    >>> from cclust.metrics import manhattan_agreement
    >>> manhattan_agreement([0, 0, 1, 1], [0, 0, 0, 1])
    0.75
    """
    a, b = _partitions(partition_a, partition_b)
    return 1.0 - _manhattan(a, b) / (2.0 * a.codes.shape[0])


@declare(higher_is_better=False)
def mallows_distance(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike, *, p: float = 1.0,
                     alpha: npt.ArrayLike | None = None, beta: npt.ArrayLike | None = None) -> float:
    """Mallows-type distance of Zhou, Li & Zha (2005) (lower is better).

    The p-th root of the least cost ``sum_{jk} w_jk sum_o |M_a[o, j] - M_b[o, k]|^p`` of the
    transportation problem ``w >= 0``, ``sum_k w_jk = alpha_j``, ``sum_j w_jk = beta_k``, the
    memberships brought to ``k = max(K_a, K_b)`` columns (clue's
    ``cl_dissimilarity(method = "Mallows")``, Hornik 2005, with its ``p``, ``alpha`` and
    ``beta``). With the default unit masses the transportation polytope is the Birkhoff
    polytope, whose vertices are permutations, so the optimum is an assignment, solved by
    ``scipy.optimize.linear_sum_assignment``; then ``p = 1`` gives the
    :func:`manhattan_distance`. Other masses solve the transportation LP with
    :func:`scipy.optimize.linprog` (HiGHS; clue calls lpSolve).

    Parameters
    ----------
    partition_a, partition_b : array-like of shape (n_samples,) or (n_samples, K)
        Labellings or membership matrices, as :func:`euclidean_distance`.
    p : float, default=1.0
        Exponent, at least 1.
    alpha, beta : array-like of shape (k,), default=None
        Masses of the k = max(K_a, K_b) clusters of each side (padded clusters included),
        non-negative, with equal totals; all ones if None.

    Returns
    -------
    distance : float
        0.0 for identical hard partitions; ``(2 (n - m))^(1/p)`` for hard ones.

    Examples
    --------
    >>> from cclust.metrics import mallows_distance
    >>> mallows_distance([0, 0, 1, 1], [0, 0, 0, 1], p=2) == 2 ** 0.5
    True
    """
    p = _check_p(p)
    a, b = _partitions(partition_a, partition_b)
    k = max(a.k, b.k)
    alpha, beta = _masses(alpha, k, "alpha"), _masses(beta, k, "beta")
    unit = alpha is None and beta is None
    alpha = np.ones(k) if alpha is None else alpha
    beta = np.ones(k) if beta is None else beta
    if not np.isclose(alpha.sum(), beta.sum(), rtol=1e-9, atol=0):
        raise ValidationError(f"alpha and beta must have equal totals (the transportation problem has no "
                              f"solution otherwise), got {alpha.sum()!r} and {beta.sum()!r}.")
    soft = _soft(a, b)
    if unit:
        if soft is None:
            return _manhattan_from_table(_hard_table(a, b)) ** (1.0 / p)
        return _matched_distance(*soft, p) ** (1.0 / p)
    if soft is None:
        dense = np.zeros((k, k))
        table = _dense_table(_hard_table(a, b))
        dense[:table.shape[0], :table.shape[1]] = table
        cost = np.add.outer(dense.sum(axis=1), dense.sum(axis=0)) - 2.0 * dense   # |u - v|^p = |u - v| on 0/1
    else:
        cost = _column_distances(*soft, p)
    return max(0.0, _transport(cost, alpha, beta, maximize=False)) ** (1.0 / p)


def _masses(values: npt.ArrayLike | None, k: int, name: str,
            clusters: str = "the partitions brought to max(K_a, K_b)") -> np.ndarray | None:
    """None (unit masses), or the k masses of a transportation problem's side, checked."""
    if values is None:
        return None
    masses = np.asarray(values, dtype=np.float64) if not isinstance(values, str) else None
    if masses is None or masses.shape != (k,) or not np.isfinite(masses).all() or (masses < 0).any():
        raise ValidationError(f"{name} must be {k} finite non-negative cluster masses (one per cluster of "
                              f"{clusters} = {k} columns), got {values!r}.")
    return None if (masses == 1.0).all() else masses


def _transport(cost, supply, demand, *, maximize):
    """Optimal value of the transportation problem ``sum cost * w`` over ``w >= 0`` with row sums
    ``supply`` and column sums ``demand`` (equal totals), by :func:`scipy.optimize.linprog`."""
    from scipy.optimize import linprog

    ka, kb = cost.shape
    rows = sp.kron(sp.identity(ka), np.ones((1, kb)))
    cols = sp.kron(np.ones((1, ka)), sp.identity(kb))
    sign = -1.0 if maximize else 1.0
    res = linprog(sign * cost.reshape(-1), A_eq=sp.vstack([rows, cols]).tocsr(),
                  b_eq=np.concatenate([supply, demand]), bounds=(0, None), method="highs")
    if res.status != 0:
        raise ValidationError(f"the transportation problem has no solution ({res.message}); check the "
                              "cluster masses.")
    return sign * float(res.fun)


@declare(higher_is_better=True)
def angle(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Angle agreement: the largest cosine between the membership matrices over matchings (higher is better).

    ``max_P <M_a, M_b P> / (||M_a||_F ||M_b||_F)`` over column permutations P (Hornik 2005,
    clue's ``cl_agreement(method = "angle")``). For hard partitions it equals :func:`diag`,
    ``m / n``. Parameters as :func:`euclidean_distance`.

    Returns
    -------
    angle : float
        In [0, 1]; 1.0 for identical partitions.

    Examples
    --------
    >>> from cclust.metrics import angle
    >>> angle([0, 0, 1, 1], [0, 0, 0, 1])
    0.75
    """
    a, b = _partitions(partition_a, partition_b)
    soft = _soft(a, b)
    if soft is None:
        return _diag_from_table(_hard_table(a, b))
    Ma, Mb = soft
    inner = float(np.einsum("ij,ij->", Ma, _matched_columns(Ma, Mb)))
    return min(1.0, inner / math.sqrt(float(np.einsum("ij,ij->", Ma, Ma)) * float(np.einsum("ij,ij->", Mb, Mb))))


@declare(higher_is_better=True)
def diag(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Diag agreement: the largest co-classification rate over matchings of the clusters (higher is better).

    ``max_P trace(M_a^T M_b P) / n`` (Hornik 2005, clue's ``cl_agreement(method = "diag")``):
    for hard partitions the fraction of objects whose clusters correspond under the best
    one-to-one matching (the Hungarian-matched accuracy, not :func:`accuracy`'s majority vote).
    Parameters as :func:`euclidean_distance`.

    Returns
    -------
    diag : float
        In (0, 1]; 1.0 for identical partitions.

    Examples
    --------
    >>> from cclust.metrics import diag
    >>> diag([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 1])
    0.6666666666666666
    """
    a, b = _partitions(partition_a, partition_b)
    soft = _soft(a, b)
    if soft is None:
        return _diag_from_table(_hard_table(a, b))
    Ma, Mb = soft
    return float(np.einsum("ij,ij->", Ma, _matched_columns(Ma, Mb))) / Ma.shape[0]


# -- clue's measures from a table (Hornik 2005) ------------------------------------------------
# For hard partitions every matched measure reduces to m, the largest number of objects that a
# one-to-one matching of the clusters puts on matched clusters: the squared Euclidean and the
# Manhattan distance of the (padded) membership matrices are both 2 (n - m), and angle = diag = m/n.

def _dense_table(table):
    """A dense int64 copy of a (possibly sparse) table, asking the memory budget first."""
    if not sp.issparse(table):
        return np.asarray(table)
    from cclust.validation import require_memory

    k = max(table.shape)
    require_memory(k * k * 8, f"the {k} x {k} table of the optimal cluster matching",
                   "compare partitions with fewer clusters")
    return table.toarray()


def _matched_count(table):
    """(n, m): objects, and the most objects on matched clusters over one-to-one matchings."""
    from cclust.matching import matched_total

    dense = _dense_table(table)
    return int(dense.sum()), matched_total(dense)[0]


def _euclidean_from_table(table):
    n, m = _matched_count(table)
    return math.sqrt(2 * (n - m))


def _manhattan_from_table(table):
    n, m = _matched_count(table)
    return float(2 * (n - m))


def _euclidean_agreement_from_table(table):
    n, m = _matched_count(table)
    return 1.0 - math.sqrt(2 * (n - m)) / math.sqrt(2 * n) if n else 1.0


def _manhattan_agreement_from_table(table):
    n, m = _matched_count(table)
    return 1.0 - (2 * (n - m)) / (2.0 * n) if n else 1.0


def _diag_from_table(table):
    n, m = _matched_count(table)
    return m / n if n else 1.0
