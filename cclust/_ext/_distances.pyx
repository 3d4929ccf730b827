"""Thin wrappers over the pairwise cores: C-contiguous arrays in, a number out, GIL released.
The callers (cclust._reference, cclust._monti) validate."""
from libc.stdint cimport int32_t, int64_t

from cclust._ext.core cimport consensus_pairs_in as _consensus_pairs_in
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


def consensus_pairs_in(const int32_t[:, ::1] L, double low, double high, int n_threads):
    """Pairs i < j whose consensus entry (together / sampled over the resamples, the columns of
    L; -1 = not drawn; 0 for pairs never drawn together) lies in (low, high]; the same for any
    n_threads."""
    cdef int64_t n = L.shape[0], H = L.shape[1]
    cdef int64_t total = 0
    if n < 2 or H < 1:
        return 0
    with nogil:
        total = _consensus_pairs_in(&L[0, 0], n, H, low, high, n_threads)
    return total
