"""Thin wrapper over the Hartigan-Wong k-means core (include/cclust/hartigan_wong.hpp): arrays in,
NumPy arrays out, GIL released. Callers validate; the arrays must be C-contiguous float64."""
import numpy as np

from libc.stdint cimport int32_t, int64_t


cdef extern from "cclust/hartigan_wong.hpp" namespace "cclust" nogil:
    int32_t c_hartigan_wong "cclust::hartigan_wong"(
        const double* x, int64_t m, int64_t n, double* centres, int32_t k, int32_t max_iter,
        int64_t max_qtran, int32_t* labels, double* wss, int32_t* n_iter)


def hartigan_wong(const double[:, ::1] X, centres, int max_iter, int64_t max_qtran):
    """AS 136 k-means of the rows of X from ``centres`` (k x d, copied).

    Returns ``(labels int32 0-based, final centres, within sums of squares, n_iter, status)``;
    status is R's ifault (0 converged, 1 empty cluster, 2 not converged in max_iter, 3 k not in
    [2, m - 1], 4 quick-transfer steps exceeded).
    """
    cdef double[:, ::1] c = np.array(centres, dtype=np.float64, order="C", copy=True)
    cdef int64_t m = X.shape[0]
    cdef int64_t d = X.shape[1]
    cdef int32_t k = c.shape[0]
    if c.shape[1] != d:
        raise ValueError(f"centres have {c.shape[1]} columns, X has {d}")
    labels = np.zeros(m, dtype=np.int32)
    wss = np.zeros(max(k, 1), dtype=np.float64)
    cdef int32_t[::1] lab = labels
    cdef double[::1] w = wss
    cdef int32_t n_iter = 0
    cdef int32_t status
    if m == 0 or d == 0 or k < 2:
        return labels, np.asarray(c), wss[:k], 0, 3
    with nogil:
        status = c_hartigan_wong(&X[0, 0], m, d, &c[0, 0], k, max_iter, max_qtran, &lab[0], &w[0],
                                 &n_iter)
    return labels, np.asarray(c), wss[:k], n_iter, status
