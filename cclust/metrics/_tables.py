"""Contingency tables of two labellings, and what every metric reads from them.

A table's rows are the clusters of the first labelling, its columns those of the second. A
table with more than ``max(n_samples, 2**22)`` cells is kept sparse (CSR); the readers below
take either form.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.validation import check_n_jobs, check_same_length, label_vector


#: Tables with at most this many cells (or at most n_samples cells) are built dense.
_DENSE_CELLS = 1 << 22


# -- contingency tables --------------------------------------------------------------------------

def _codes(labels_true, labels_pred, name_true, name_pred):
    a, ka = label_vector(labels_true, name_true)
    b, kb = label_vector(labels_pred, name_pred)
    check_same_length(a, b, name_true, name_pred)
    return a, ka, b, kb


def _sparse_table(a, ka, b, kb):
    """CSR table from sorted cell keys: O(n log n), memory bounded by the non-empty cells."""
    keys, counts = np.unique(a * np.int64(kb) + b, return_counts=True)
    rows, cols = np.divmod(keys, np.int64(kb))
    indptr = np.zeros(ka + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=ka), out=indptr[1:])
    return sp.csr_array((counts.astype(np.int64), cols, indptr), shape=(ka, kb))


def _table_from_codes(a, ka, b, kb, *, sparse=None):
    """The (ka, kb) table of two code vectors: dense from the compiled pass, or CSR."""
    if sparse is None:
        sparse = ka * kb > max(a.shape[0], _DENSE_CELLS)
    if sparse:
        return _sparse_table(a, ka, b, kb)
    from cclust._ext import _contingency

    return _contingency.pair_table(a, b, ka, kb, check_n_jobs(None))


def _labels_table(labels_true, labels_pred, name_true="labels_true", name_pred="labels_pred"):
    return _table_from_codes(*_codes(labels_true, labels_pred, name_true, name_pred))


def contingency_table(labels_a: npt.ArrayLike, labels_b: npt.ArrayLike, *,
                      sparse: bool = False) -> npt.NDArray[np.int64] | sp.csr_array:
    """Contingency table of two labellings of the same objects.

    ``table[i, j]`` counts the objects in cluster i of ``labels_a`` and cluster j of
    ``labels_b``; clusters are numbered in the sorted order of their labels. This is the table
    every metric of this module reads (the matrix :math:`M = (m_{kk'})` of Nguyen & Caruana,
    2007, section 6.1), built in one O(n) pass of the compiled core.

    Parameters
    ----------
    labels_a : array-like of shape (n_samples,)
        First labelling (any comparable labels: ints, strings, whole floats).
    labels_b : array-like of shape (n_samples,)
        Second labelling of the same objects.
    sparse : bool, default=False
        Return a ``scipy.sparse.csr_array`` holding only the non-empty cells (use it when both
        labellings have very many clusters).

    Returns
    -------
    table : ndarray of shape (n_clusters_a, n_clusters_b), int64, or csr_array

    Raises
    ------
    ValidationError
        If a labelling is not 1-D, is empty, holds NaN, or the lengths differ.
    MemoryBudgetError
        If the dense table would exceed the memory budget (``cclust.validation.memory_budget``);
        pass ``sparse=True``.

    Examples
    --------
    >>> from cclust.metrics import contingency_table
    >>> contingency_table([0, 0, 1, 1, 2], ["a", "a", "a", "b", "b"]).tolist()
    [[2, 0], [1, 1], [0, 1]]
    """
    a, ka, b, kb = _codes(labels_a, labels_b, "labels_a", "labels_b")
    if not sparse:
        from cclust.validation import require_memory

        require_memory(ka * kb * 8, f"the dense {ka} x {kb} contingency table", "pass sparse=True")
    return _table_from_codes(a, ka, b, kb, sparse=bool(sparse))


# -- reading a table (dense ndarray or CSR) ----------------------------------------------------

def _marginals(table):
    """Row and column sums, int64 (zeros kept)."""
    rows = np.asarray(table.sum(axis=1), dtype=np.int64).reshape(-1)
    cols = np.asarray(table.sum(axis=0), dtype=np.int64).reshape(-1)
    return rows, cols


def _cells(table):
    """Non-zero cells in row-major order: (row, column, count)."""
    if sp.issparse(table):
        coo = sp.coo_array(table)
        order = np.lexsort((coo.col, coo.row))
        rows, cols, vals = coo.row[order], coo.col[order], coo.data[order].astype(np.int64)
        keep = vals != 0
        return rows[keep], cols[keep], vals[keep]
    table = np.asarray(table)
    flat = table.reshape(-1)
    where = np.flatnonzero(flat)
    rows, cols = np.divmod(where, table.shape[1])
    return rows, cols, flat[where].astype(np.int64, copy=False)


def _max_per(table, axis):
    """Largest cell of every row (axis=1) or column (axis=0)."""
    if not sp.issparse(table):
        return np.asarray(table).max(axis=axis)
    rows, cols, vals = _cells(table)
    out = np.zeros(table.shape[1 - axis], dtype=np.int64)
    np.maximum.at(out, rows if axis == 1 else cols, vals)
    return out


def _sum_of_squares(counts):
    """Exact sum of squared counts (Python int); int64 is exact while the total is < 3e9."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.sum() < 3_037_000_499:
        return int(np.dot(counts, counts))
    return sum(int(c) * int(c) for c in counts)
