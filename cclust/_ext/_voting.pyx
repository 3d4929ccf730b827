"""Thin wrappers over the voting lookup core: memoryviews in, NumPy arrays out, GIL released.

Callers (cclust.consensus_functions.voting, cclust.consensus_functions.mixture) validate; these functions assume
C-contiguous arrays of the right dtype and raise ValueError (from the C++ core) only on labels
out of range. ``labels`` is an (n, r) C-contiguous int32 (-1 = missing), uint16 or uint8 (the
type's largest value = missing; at most 32767 / 127 clusters a partition) array, such as
``Ensemble.compact_labels()``, read in place.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t

from cclust._ext.core cimport (
    first_appearance as _first_appearance,
    label_sums as _label_sums,
    mode_argmax as _mode_argmax,
    vote_argmax as _vote_argmax,
    vote_argmax_sparse as _vote_argmax_sparse,
    vote_scores as _vote_scores,
)


include "label_codes.pxi"


def scores(labels, const int64_t[::1] offsets, const double[:, ::1] table,
           int n_threads):
    """(n, n_clusters) sums over partitions of ``table[offsets[j] + labels[x, j]]``."""
    cdef _Codes codes = _Codes(labels)
    cdef int64_t n = codes.n
    cdef int64_t r = codes.r
    cdef int32_t k = table.shape[1]
    if table.shape[0] != offsets[r]:
        raise ValueError(f"table has {table.shape[0]} rows, expected {offsets[r]}")
    out = np.zeros((n, k), dtype=np.float64)
    cdef double[:, ::1] out_view = out
    cdef const double* tab_ptr = &table[0, 0] if table.size else NULL
    cdef double* out_ptr = &out_view[0, 0] if out.size else NULL
    if n == 0:
        return out
    with nogil:
        _vote_scores(codes.ptr, codes.width, n, r, &offsets[0], tab_ptr, k, out_ptr, n_threads)
    return out


def label_sums(labels, const int64_t[::1] offsets, const double[:, ::1] values, int n_threads):
    """(offsets[r], k) sums of the rows of ``values`` by label: row ``offsets[j] + l`` sums
    ``values[x]`` over the objects with label l in partition j, in object order (``B.T @ values``
    for the one-hot B, bitwise, without forming B)."""
    cdef _Codes codes = _Codes(labels)
    cdef int64_t n = codes.n
    cdef int64_t r = codes.r
    cdef int32_t k = values.shape[1]
    codes.check_offsets(offsets)
    if values.shape[0] != n:
        raise ValueError(f"values has {values.shape[0]} rows, expected {n}")
    out = np.zeros((offsets[r], k), dtype=np.float64)
    if n == 0 or k == 0 or out.size == 0:
        return out
    cdef double[:, ::1] out_view = out
    with nogil:
        _label_sums(codes.ptr, codes.width, n, r, &offsets[0], &values[0, 0], k, &out_view[0, 0], n_threads)
    return out


def argmax(labels, const int64_t[::1] offsets, const double[:, ::1] table,
           const uint8_t[::1] allowed, int n_threads):
    """Best allowed cluster of every object (lowest index on ties) and its score."""
    cdef _Codes codes = _Codes(labels)
    cdef int64_t n = codes.n
    cdef int64_t r = codes.r
    cdef int32_t k = table.shape[1]
    if table.shape[0] != offsets[r]:
        raise ValueError(f"table has {table.shape[0]} rows, expected {offsets[r]}")
    if allowed.shape[0] != k:
        raise ValueError(f"allowed has {allowed.shape[0]} entries, expected {k}")
    assignment = np.empty(n, dtype=np.int32)
    best = np.empty(n, dtype=np.float64)
    cdef int32_t[::1] a_view = assignment
    cdef double[::1] b_view = best
    cdef const double* tab_ptr = &table[0, 0] if table.size else NULL
    if n == 0:
        return assignment, best
    with nogil:
        _vote_argmax(codes.ptr, codes.width, n, r, &offsets[0], tab_ptr, k, &allowed[0], &a_view[0], &b_view[0],
                     n_threads)
    return assignment, best


def first_appearance(labels, const int64_t[::1] offsets):
    """Every partition's clusters renumbered in order of first appearance (missing kept), in the
    dtype of ``labels``."""
    cdef _Codes codes = _Codes(labels)
    cdef int64_t n = codes.n
    cdef int64_t r = codes.r
    out = np.empty((n, r), dtype=labels.dtype)
    if n == 0 or r == 0:
        return out
    cdef _Codes written = _Codes(out)
    cdef void* out_ptr = <void*> written.ptr
    with nogil:
        _first_appearance(codes.ptr, codes.width, n, r, &offsets[0], out_ptr)
    return out


def argmax_sparse(labels, const int64_t[::1] offsets, const int64_t[::1] indptr,
                  const int32_t[::1] indices, const double[::1] values, int n_clusters,
                  const uint8_t[::1] allowed, int n_threads):
    """:func:`argmax` with the (offsets[-1], n_clusters) table in CSR form (bitwise equal)."""
    cdef _Codes codes = _Codes(labels)
    cdef int64_t n = codes.n
    cdef int64_t r = codes.r
    if indptr.shape[0] != offsets[r] + 1:
        raise ValueError(f"indptr has {indptr.shape[0]} entries, expected {offsets[r] + 1}")
    if indices.shape[0] != values.shape[0] or indices.shape[0] < indptr[offsets[r]]:
        raise ValueError("indices and values must hold indptr[-1] entries each")
    if allowed.shape[0] != n_clusters:
        raise ValueError(f"allowed has {allowed.shape[0]} entries, expected {n_clusters}")
    assignment = np.empty(n, dtype=np.int32)
    best = np.empty(n, dtype=np.float64)
    if n == 0:
        return assignment, best
    cdef int32_t[::1] a_view = assignment
    cdef double[::1] b_view = best
    cdef const int32_t* idx_ptr = &indices[0] if indices.shape[0] else NULL
    cdef const double* val_ptr = &values[0] if values.shape[0] else NULL
    with nogil:
        _vote_argmax_sparse(codes.ptr, codes.width, n, r, &offsets[0], &indptr[0], idx_ptr, val_ptr,
                            n_clusters, &allowed[0], &a_view[0], &b_view[0], n_threads)
    return assignment, best


def mode_argmax(labels, const int32_t[:, ::1] modes, const uint8_t[::1] allowed,
                int n_threads):
    """Cluster whose mode vector agrees with each object on most partitions, and the count."""
    cdef _Codes codes = _Codes(labels)
    cdef int64_t n = codes.n
    cdef int64_t r = codes.r
    cdef int32_t k = modes.shape[0]
    if modes.shape[1] != r:
        raise ValueError(f"modes have {modes.shape[1]} columns, expected {r}")
    if allowed.shape[0] != k:
        raise ValueError(f"allowed has {allowed.shape[0]} entries, expected {k}")
    assignment = np.empty(n, dtype=np.int32)
    matches = np.empty(n, dtype=np.int32)
    if n == 0:
        return assignment, matches
    cdef int32_t[::1] a_view = assignment
    cdef int32_t[::1] m_view = matches
    with nogil:
        _mode_argmax(codes.ptr, codes.width, n, r, &modes[0, 0], k, &allowed[0], &a_view[0], &m_view[0],
                     n_threads)
    return assignment, matches
