"""Thin wrappers over the contingency core: memoryviews in, NumPy arrays out, GIL released.

Callers (cclust.ensemble, cclust.metrics) validate; these functions assume C-contiguous arrays
of the right dtype and raise ValueError (from the C++ core) only on labels out of range.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t

from libcpp cimport bool as cbool

from cclust._ext.core cimport (
    contingency_pair as _contingency_pair,
    label_range as _label_range,
    max_threads as _max_threads,
    openmp_enabled as _openmp_enabled,
    relabel_dense as _relabel_dense,
)


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
