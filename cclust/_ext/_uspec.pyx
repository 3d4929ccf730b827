"""Thin wrapper over U-SPEC's compiled neighbour search: memoryviews in, NumPy arrays out, GIL
released. cclust.uspec validates and builds the inputs; the C++ core raises ValueError on
inconsistent sizes or indices."""
import numpy as np

from libc.stdint cimport int64_t


cdef extern from "cclust/uspec.hpp" namespace "cclust" nogil:
    void _nearest "cclust::nearest_representatives"(
        const double* X, int64_t n, int64_t d, const double* R, int64_t p,
        const double* centres, int64_t z, const int64_t* member_start, const int64_t* members,
        const int64_t* neighborhood, int64_t width, int64_t k, int64_t* neighbors,
        double* distances, int n_threads) except +
    void _cross_sums "cclust::cross_sums"(
        const int64_t* indptr, const int64_t* indices, const double* values, const double* row_scale,
        int64_t n_rows, int64_t p, double* W, double* col_degree, double* row_degree) except +


def nearest_representatives(const double[:, ::1] X, const double[:, ::1] R, const double[:, ::1] centres,
                            const int64_t[::1] member_start, const int64_t[::1] members,
                            const int64_t[:, ::1] neighborhood, int64_t k, int n_threads):
    """(neighbors, distances), each (n, k): the coarse-to-fine K nearest representatives."""
    cdef int64_t n = X.shape[0], d = X.shape[1], p = R.shape[0], z = centres.shape[0]
    cdef int64_t width = neighborhood.shape[1]
    if R.shape[1] != d or centres.shape[1] != d or neighborhood.shape[0] != p or member_start.shape[0] != z + 1:
        raise ValueError("nearest_representatives: inconsistent shapes")
    if members.shape[0] < 1 or member_start[z] > members.shape[0] or member_start[0] != 0:
        raise ValueError("nearest_representatives: inconsistent member lists")
    neighbors = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k), dtype=np.float64)
    if n == 0:
        return neighbors, distances
    cdef int64_t[:, ::1] nb = neighbors
    cdef double[:, ::1] ds = distances
    with nogil:
        _nearest(&X[0, 0], n, d, &R[0, 0], p, &centres[0, 0], z, &member_start[0], &members[0],
                 &neighborhood[0, 0], width, k, &nb[0, 0], &ds[0, 0], n_threads)
    return neighbors, distances


def cross_sums(const int64_t[::1] indptr, const int64_t[::1] indices, const double[::1] values,
               double[:, ::1] W, double[::1] col_degree, const double[::1] row_scale=None):
    """Add the CSR rows' transfer-cut sums to W and col_degree (in place); returns the rows'
    degrees (see uspec.hpp). ``row_scale`` (n_rows,) replaces 1 / degree."""
    cdef int64_t n_rows = indptr.shape[0] - 1, p = W.shape[0]
    if n_rows < 0 or W.shape[1] != p or col_degree.shape[0] != p or indices.shape[0] != values.shape[0]:
        raise ValueError("cross_sums: inconsistent shapes")
    if indptr[n_rows] > indices.shape[0]:
        raise ValueError("cross_sums: indptr reaches past the entries")
    if row_scale is not None and row_scale.shape[0] != n_rows:
        raise ValueError("cross_sums: row_scale must have one entry per row")
    row_degree = np.empty(n_rows, dtype=np.float64)
    if n_rows == 0:
        return row_degree
    cdef double[::1] rd = row_degree
    cdef const int64_t* ind = &indices[0] if indices.shape[0] else NULL
    cdef const double* val = &values[0] if values.shape[0] else NULL
    cdef const double* scale = NULL
    if row_scale is not None:
        scale = &row_scale[0]
    with nogil:
        _cross_sums(&indptr[0], ind, val, scale, n_rows, p, &W[0, 0], &col_degree[0], &rd[0])
    return row_degree
