"""Optimal matching of cluster labels (the linear sum assignment problem).

Comparing two partitions up to the names of their clusters means matching the clusters of one
to those of the other so that a total score is best (Hornik 2005, sec. 3): the Hungarian
problem, solved here by :func:`scipy.optimize.linear_sum_assignment` and never by a
hand-written solver. This module is the one place cclust pads a rectangular score matrix and
reads the matching off, so that every method that matches labels does it alike.
"""
import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["match_columns"]


def match_columns(score, *, maximize):
    """The column each row of ``score`` is matched to, every column used at most once.

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
    S = np.asarray(score, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] > S.shape[1]:
        raise ValueError(f"score must be a (p, q) matrix with p <= q, got shape {S.shape}.")
    rows, cols = linear_sum_assignment(S, maximize=maximize)
    out = np.empty(S.shape[0], dtype=np.int64)
    out[rows] = cols
    return out
