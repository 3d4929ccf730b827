"""Thin wrappers over the compiled similarities of WEAC and GP-MGLA: memoryviews in, NumPy arrays
out, GIL released.

The caller (cclust.consensus_functions.crowd_agreement) validates; these functions assume
C-contiguous arrays of the right dtype and raise ValueError (from the C++ core) only on indices
or labels out of range.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t

include "label_codes.pxi"


cdef extern from "cclust/crowd_agreement.hpp" namespace "cclust" nogil:
    void sact_sums(const int64_t* indptr, const int32_t* indices, const double* data, int64_t n_c,
                   const double* weight, double* out, int n_threads) except +
    void weighted_coassociation_rows(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                                     const int64_t* rows, int64_t m, const int64_t* sizes, const double* share,
                                     double* out, int n_threads) except +


def sact(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
         const double[::1] weight, int n_threads):
    """(n_c, n_c) sums ``sum_k weight[k] min(J[k, a], J[k, b])`` of a symmetric CSR matrix J."""
    cdef int64_t n_c = indptr.shape[0] - 1
    if weight.shape[0] != n_c:
        raise ValueError(f"weight has {weight.shape[0]} entries, expected {n_c}")
    if indices.shape[0] != data.shape[0] or indptr[n_c] != data.shape[0]:
        raise ValueError("indices and data must hold indptr[-1] entries")
    out = np.empty((n_c, n_c), dtype=np.float64)
    if n_c == 0:
        return out
    cdef double[:, ::1] out_view = out
    cdef const int32_t* idx_ptr = &indices[0] if indices.shape[0] else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] else NULL
    with nogil:
        sact_sums(&indptr[0], idx_ptr, data_ptr, n_c, &weight[0], &out_view[0, 0], n_threads)
    return out


def weighted_coassociation(labels, const int64_t[::1] rows, const int64_t[::1] sizes, const double[::1] share,
                           int n_threads):
    """(m, m) sums ``sum_j share[j] [L[x, j] == L[y, j]]`` over the rows ``rows`` of the stored
    label codes ``labels`` (n x r: int32 with -1 missing, or uint16 / uint8 with the largest
    value missing; read in place, none missing)."""
    cdef _Codes codes = _Codes(labels)
    cdef const void* ptr = codes.ptr
    cdef int32_t width = codes.width
    cdef int64_t n = codes.n
    cdef int64_t r = codes.r
    cdef int64_t m = rows.shape[0]
    if sizes.shape[0] != r or share.shape[0] != r:
        raise ValueError("sizes and share need one entry per partition")
    out = np.empty((m, m), dtype=np.float64)
    if m == 0:
        return out
    cdef double[:, ::1] out_view = out
    if r == 0:
        out[...] = 0.0
        return out
    with nogil:
        weighted_coassociation_rows(ptr, width, n, r, &rows[0], m, &sizes[0], &share[0], &out_view[0, 0], n_threads)
    return out
