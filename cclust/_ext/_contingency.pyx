"""Thin wrappers over the contingency core: memoryviews in, NumPy arrays out, GIL released.

Callers (cclust.ensemble, cclust.metrics) validate; these functions assume C-contiguous arrays
of the right dtype and raise ValueError (from the C++ core) only on labels out of range.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t

from libcpp cimport bool as cbool

from cclust._ext.core cimport (
    OverlapTable,
    cluster_overlap_table as _cluster_overlap_table,
    cluster_overlaps as _cluster_overlaps,
    contingency_pair as _contingency_pair,
    label_range as _label_range,
    max_threads as _max_threads,
    openmp_enabled as _openmp_enabled,
    relabel_dense as _relabel_dense,
)

include "label_codes.pxi"


def openmp_enabled():
    """Whether the cores were compiled with OpenMP."""
    return bool(_openmp_enabled())


def max_threads():
    """Threads OpenMP would use by default (1 for a serial build)."""
    return int(_max_threads())


def pair_table(const int64_t[::1] a, const int64_t[::1] b, int64_t ka, int64_t kb,
               int n_threads):
    """(ka, kb) int64 table of two labellings of the same objects."""
    out = np.empty((ka, kb), dtype=np.int64)
    cdef int64_t[:, ::1] out_view = out
    cdef int64_t n = a.shape[0]
    with nogil:
        _contingency_pair(&a[0], &b[0], n, ka, kb, &out_view[0, 0], n_threads)
    return out


def label_range(const int64_t[::1] labels):
    """(min, max) of a non-empty int64 labelling in one pass."""
    cdef int64_t low = 0, high = 0
    with nogil:
        _label_range(&labels[0], labels.shape[0], &low, &high)
    return int(low), int(high)


def relabel_dense(labels, int64_t max_value, int n_threads):
    """Codes 0..k-1 (increasing with the value) of non-negative labels bounded by max_value.

    ``labels`` must be a C-contiguous int64 array; when its values already are 0..k-1 it is
    returned itself (no copy).
    """
    cdef const int64_t[::1] view = labels
    out = np.empty(view.shape[0], dtype=np.int64)
    cdef int64_t[::1] out_view = out
    cdef int64_t k
    cdef cbool identity = False
    with nogil:
        k = _relabel_dense(&view[0], view.shape[0], max_value, &out_view[0], &identity, n_threads)
    return (labels if identity else out), int(k)


def cluster_overlaps(labels, const int64_t[::1] offsets, weights, int64_t stride, int n_threads):
    """Entries of B^T B (B the one-hot of the n x r label codes ``labels``: int32 with -1
    missing, or uint16 / uint8 with the largest value missing, read in place) over the objects
    0, stride, 2 stride, ...; with ``weights`` (r float64) also every object's
    ``sum_j A_xj`` and ``sum_j A_xj^2`` for the weighted co-association A (no missing label).

    Returns (entries, row_sum, row_sq); the sums are None without weights."""
    cdef _Codes codes = _Codes(labels)
    cdef const void* ptr = codes.ptr
    cdef int32_t width = codes.width
    cdef int64_t n = codes.n
    cdef int64_t r = codes.r
    if offsets.shape[0] != r + 1:
        raise ValueError(f"offsets has {offsets.shape[0]} entries, expected {r + 1}")
    cdef const double[::1] w_view
    cdef double[::1] sum_view
    cdef double[::1] sq_view
    cdef const double* w_ptr = NULL
    cdef double* sum_ptr = NULL
    cdef double* sq_ptr = NULL
    row_sum = row_sq = None
    if weights is not None:
        w_view = weights
        if w_view.shape[0] != r:
            raise ValueError(f"weights has {w_view.shape[0]} entries, expected {r}")
        row_sum = np.zeros(n, dtype=np.float64)
        row_sq = np.zeros(n, dtype=np.float64)
        sum_view = row_sum
        sq_view = row_sq
        if n > 0 and r > 0:
            w_ptr = &w_view[0]
            sum_ptr = &sum_view[0]
            sq_ptr = &sq_view[0]
    cdef int64_t entries
    with nogil:
        entries = _cluster_overlaps(ptr, width, n, r, &offsets[0], stride, w_ptr, sum_ptr, sq_ptr, n_threads)
    return int(entries), row_sum, row_sq


def overlap_table(labels, const int64_t[::1] offsets, object_weights, const int64_t[::1] rank,
                  int64_t capacity, int n_threads):
    """G = B^T diag(w) B in both triangles (B the one-hot of the label codes ``labels``, read as
    :func:`cluster_overlaps` reads them; w = ``object_weights``, n float64, or None for 1), its
    rows and columns in the order ``rank`` gives (cluster c goes to ``rank[c]``), as CSR arrays
    (indptr int64, indices int32 sorted within each row, data float64). ``capacity``: at least
    the entries (:func:`cluster_overlaps` counts them); an upper bound costs no resident memory
    (the arrays' cells past the entries are never written), and the arrays returned are views of
    the entries."""
    cdef _Codes codes = _Codes(labels)
    codes.check_offsets(offsets)
    cdef int64_t n_c = offsets[codes.r]
    if rank.shape[0] != n_c:
        raise ValueError(f"rank has {rank.shape[0]} entries, expected {n_c}")
    if capacity < 0:
        raise ValueError(f"capacity must be non-negative, got {capacity}")
    indptr = np.zeros(n_c + 1, dtype=np.int64)
    indices = np.empty(capacity, dtype=np.int32)
    data = np.empty(capacity, dtype=np.float64)
    cdef int64_t[::1] indptr_view = indptr
    cdef int32_t[::1] indices_view = indices
    cdef double[::1] data_view = data
    cdef const double[::1] w_view
    cdef OverlapTable table
    table.object_weights = NULL
    table.rank = &rank[0] if n_c > 0 else NULL
    table.capacity = capacity
    table.indptr = &indptr_view[0]
    table.indices = &indices_view[0] if capacity > 0 else NULL
    table.data = &data_view[0] if capacity > 0 else NULL
    if object_weights is not None:
        w_view = object_weights
        if w_view.shape[0] != codes.n:
            raise ValueError(f"object_weights has {w_view.shape[0]} entries, expected {codes.n}")
        if codes.n > 0:
            table.object_weights = &w_view[0]
    cdef int64_t entries
    with nogil:
        entries = _cluster_overlap_table(codes.ptr, codes.width, codes.n, codes.r, &offsets[0], table, n_threads)
    return indptr, indices[:entries], data[:entries]
