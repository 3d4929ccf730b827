"""Thin wrappers over the pairwise cores: C-contiguous arrays in, a number (or labels) out, GIL
released. The callers (cclust._reference, cclust._monti, cclust._engine) validate."""
from libc.stdint cimport int32_t, int64_t

import numpy as np


cdef extern from "cclust/distances.hpp" namespace "cclust" nogil:
    void _nearest_centres "cclust::nearest_centres"(const double* X, int64_t n, int64_t d, const double* centres,
                                                     int64_t k, int32_t* labels, int n_threads,
                                                     int variant) except +

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


def nearest_centres(const double[:, ::1] X, const double[:, ::1] centres, int n_threads, simd=None):
    """int32 labels (n,): each row's nearest centre, the engine's assignment bit for bit (see
    distances.hpp); the same for any n_threads and any ``simd`` ("baseline", "avx2", "avx512":
    the instruction set of the ranking sums, where the CPU has it; None: CCLUST_KMEANS_SIMD or
    the widest the CPU has)."""
    cdef int variant = -1 if simd is None else ("baseline", "avx2", "avx512").index(simd)
    cdef int64_t n = X.shape[0], d = X.shape[1], k = centres.shape[0]
    if k < 1 or centres.shape[1] != d:
        raise ValueError(f"centres must be (k >= 1, {d}), got {(centres.shape[0], centres.shape[1])}")
    labels = np.zeros(n, dtype=np.int32)
    cdef int32_t[::1] out = labels
    if n == 0 or d == 0 or k == 1:
        return labels
    with nogil:
        _nearest_centres(&X[0, 0], n, d, &centres[0, 0], k, &out[0], n_threads, variant)
    return labels
