"""Optimal one-to-one matching of the clusters of two partitions.

Comparing or averaging partitions whose cluster names are arbitrary needs the permutation of
one partition's clusters that fits the other best: the linear sum assignment problem on a
``k x k`` table, solved here by ``scipy.optimize.linear_sum_assignment`` (a Hungarian-type
solver; Kuhn 1955) and nowhere else. The table is square after padding the smaller side with
empty clusters, as R's clue brings two membership matrices to a common number of columns
(Hornik 2005) before it matches them.

The measures of :mod:`cclust.metrics` (Euclidean, Manhattan and Mallows distances, angle,
diag, Boorman-Arabie A), the bagging generator (:func:`cclust.generators.bag`) and clue's
partition consensus methods (:mod:`cclust.consensus_functions.median`) use it; so can any
method that aligns memberships to a reference. :func:`match_columns` is the one call of the
solver; :func:`match_clusters` pads a table to square first.
"""
import numpy as np

from cclust.errors import ValidationError

__all__ = ["match_clusters", "match_columns", "matched_total", "pad_square"]


def pad_square(table, fill=0):
    """``table`` padded with ``fill`` to a square ``k x k`` array, ``k = max(table.shape)``.

    Parameters
    ----------
    table : array-like of shape (k_a, k_b)
    fill : scalar, default=0
        Value of the added rows or columns (0 for an empty cluster's overlaps).

    Returns
    -------
    square : ndarray of shape (k, k)
        A new array (the input is never written to).
    """
    table = np.asarray(table)
    if table.ndim != 2:
        raise ValidationError(f"table must be 2-D, got an array of shape {table.shape}.")
    k = max(table.shape)
    if table.shape == (k, k):
        return np.array(table, copy=True)
    square = np.full((k, k), fill, dtype=table.dtype)
    square[:table.shape[0], :table.shape[1]] = table
    return square


def match_clusters(table, *, maximize=True):
    """The permutation of columns that best fits the rows of a cluster-by-cluster table.

    Parameters
    ----------
    table : array-like of shape (k_a, k_b)
        ``table[i, j]`` scores matching cluster i of the first partition with cluster j of the
        second: an overlap (contingency count, or the cross-product ``M_a^T M_b`` of membership
        matrices) to maximise, or a cost to minimise. A rectangular table is padded with zeros
        (empty clusters) to ``k = max(k_a, k_b)``; a cost table whose padded entries are not
        zero must be padded by the caller.
    maximize : bool, default=True
        Maximise the matched total (overlaps) or minimise it (costs).

    Returns
    -------
    permutation : ndarray of shape (k,), int64
        ``permutation[i]`` is the column matched to row i; a permutation of ``0..k-1``.
        Column ``permutation[i]`` of the second partition plays cluster i of the first.

    Raises
    ------
    ValidationError
        If ``table`` is not a finite 2-D array.

    Examples
    --------
    >>> from cclust.matching import match_clusters
    >>> match_clusters([[0, 5], [4, 1]]).tolist()
    [1, 0]
    """
    square = pad_square(np.asarray(table, dtype=np.float64))
    if not np.isfinite(square).all():
        raise ValidationError("table must hold finite numbers only (NaN or infinity found).")
    return match_columns(square, maximize=bool(maximize))


def match_columns(score, *, maximize):
    """The column each row of ``score`` is matched to, every column used at most once.

    Unlike :func:`match_clusters` the table is not padded: with fewer rows than columns, the
    rows choose among all the columns, and the solver's order among equal totals is kept
    (clue's DWH relies on it, see :mod:`cclust.consensus_functions.median`).

    Parameters
    ----------
    score : array-like of shape (p, q), p <= q
        ``score[a, b]``: the gain (``maximize=True``) or cost of matching row a to column b.
    maximize : bool

    Returns
    -------
    ndarray of shape (p,), int64
        ``out[a]`` is the column matched to row a; distinct entries.

    Examples
    --------
    >>> match_columns([[1, 5, 0], [4, 2, 0]], maximize=True).tolist()
    [1, 0]
    """
    from scipy.optimize import linear_sum_assignment

    S = np.asarray(score, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] > S.shape[1]:
        raise ValueError(f"score must be a (p, q) matrix with p <= q, got shape {S.shape}.")
    rows, cols = linear_sum_assignment(S, maximize=bool(maximize))
    out = np.empty(S.shape[0], dtype=np.int64)
    out[rows] = cols
    return out


def matched_total(table, *, maximize=True):
    """The matched total ``sum_i table[i, permutation[i]]`` of :func:`match_clusters`, and the permutation.

    Integer tables give an exact Python ``int`` (contingency counts); others a float.

    Examples
    --------
    >>> from cclust.matching import matched_total
    >>> matched_total([[0, 5], [4, 1]])[0]
    9
    """
    table = np.asarray(table)
    permutation = match_clusters(table, maximize=maximize)
    square = pad_square(table)
    picked = square[np.arange(square.shape[0]), permutation]
    total = int(picked.astype(np.int64).sum()) if picked.dtype.kind in "iub" else float(picked.sum())
    return total, permutation
