"""Thin wrapper over the compiled E-step of Bayesian cluster ensembles: memoryviews in, NumPy
arrays out, GIL released.

The caller (cclust.consensus_functions.bayesian) validates; this function assumes C-contiguous
arrays of the right dtype and shapes, and raises ValueError (from the C++ core) only on a label
outside its partition's clusters.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t


cdef extern from "cclust/bayesian.hpp" namespace "cclust" nogil:
    cdef cppclass BceEStep:
        double log_z
        int64_t n_updates

    double digamma(double x)
    BceEStep bce_e_step(const void* labels, int32_t label_bytes, const int64_t* offsets, int64_t m, int64_t r,
                        const double* counts, const double* times, const double* alpha, int32_t K,
                        const double* beta, double* gamma, double tol, int64_t max_iter,
                        double* label_counts, int n_threads) except +


include "label_codes.pxi"


def e_step(labels, const int64_t[::1] offsets, const double[::1] counts,
           const double[::1] times, const double[::1] alpha, const double[:, ::1] beta,
           double[:, ::1] gamma, double tol, int64_t max_iter, int n_threads):
    """Runs the E-step on ``gamma`` in place; returns (label_counts (W, K), log_z, n_updates).
    ``labels`` are (m, r) label codes of any of the three widths, read in place."""
    cdef _Codes codes = _Codes(labels)
    cdef int64_t m = codes.n
    cdef int64_t r = codes.r
    cdef int32_t K = alpha.shape[0]
    codes.check_offsets(offsets)
    cdef int64_t W = offsets[r]
    if beta.shape[0] != W:
        raise ValueError(f"beta must have offsets[-1] = {W} rows, got {beta.shape[0]}")
    if counts.shape[0] != m or gamma.shape[0] != m or gamma.shape[1] != K:
        raise ValueError("counts and gamma must have one row per label row")
    if times.shape[0] != r or beta.shape[1] != K:
        raise ValueError("times must have one entry per partition and beta K columns")
    label_counts = np.zeros((W, K), dtype=np.float64)
    if m == 0:
        return label_counts, 0.0, 0
    cdef double[:, ::1] lc = label_counts
    cdef const double* times_ptr = &times[0] if times.size else NULL
    cdef const double* beta_ptr = &beta[0, 0] if beta.size else NULL
    cdef double* lc_ptr = &lc[0, 0] if label_counts.size else NULL
    cdef BceEStep out
    with nogil:
        out = bce_e_step(codes.ptr, codes.width, &offsets[0], m, r, &counts[0], times_ptr, &alpha[0], K,
                         beta_ptr, &gamma[0, 0], tol, max_iter, lc_ptr, n_threads)
    return label_counts, out.log_z, out.n_updates


def psi(double x):
    """The compiled digamma, for tests against scipy.special.digamma."""
    return digamma(x)
