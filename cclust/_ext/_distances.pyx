"""Thin wrapper over the pairwise-distance core: a C-contiguous float64 matrix in, a float out,
GIL released. The caller (cclust._reference) validates."""
from libc.stdint cimport int64_t

from cclust._ext.core cimport pair_distance_sum as _pair_distance_sum


def pair_distance_sum(const double[:, ::1] X, double power, int n_threads):
    """sum over i < j of ||x_i - x_j||^power over the rows of X, each pair once; the same for any
    n_threads."""
    cdef int64_t m = X.shape[0], d = X.shape[1]
    cdef double total = 0.0
    if m < 2:
        return 0.0
    with nogil:
        total = _pair_distance_sum(&X[0, 0], m, d, power, n_threads)
    return total
