"""Thin wrappers over the K-means engine (include/cclust/kmeans.hpp): memoryviews in, NumPy out.

Every function takes the same leading "rows" arguments, so a caller can build them once and
splat them::

    rows = (X, dense_weight, labels, offsets, weights, distance, p)
    assignment, trace, n_iter, converged, objective, dense, cat = lloyd(*rows, init, k, ...)

* ``X`` -- float64 C-contiguous (n, d); an (n, 0) array when there is no dense block.
* ``dense_weight`` -- multiplies the squared Euclidean part.
* ``labels`` -- int32 C-contiguous (n, r), 0..K_i-1 or -1 for missing; (n, 0) when there is none.
* ``offsets`` -- int64 (r + 1,): partition i's labels are the one-hot columns
  offsets[i]..offsets[i+1]-1.
* ``weights`` -- float64 (r,), effective (already normalised) partition weights.
* ``distance`` -- 0 uc, 1 uh, 2 ucos, 3 ulp; ``p`` -- the exponent of ulp (> 1).

Callers validate (dtypes, finiteness, ranges). These wrappers only check that array sizes agree,
so nothing is read out of bounds; the C++ core checks values and labels. Both raise ValueError.
No input array is written to; the GIL is released around each call.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t

from cclust._ext.core cimport (
    LloydResult,
    MixedRows,
    assign as _assign,
    centroids as _centroids,
    kmeanspp as _kmeanspp,
    lloyd as _lloyd,
    objective as _objective,
)


cdef int _fill_rows(MixedRows* rows, const double[:, ::1] X, double dense_weight,
                    const int32_t[:, ::1] labels, const int64_t[::1] offsets,
                    const double[::1] weights, int distance, double p) except -1:
    cdef Py_ssize_t r = labels.shape[1]
    if X.shape[0] != labels.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but labels has {labels.shape[0]}")
    if offsets.shape[0] != r + 1:
        raise ValueError(f"offsets must have r + 1 = {r + 1} entries, got {offsets.shape[0]}")
    if weights.shape[0] != r:
        raise ValueError(f"weights must have r = {r} entries, got {weights.shape[0]}")
    if offsets[r] < 0:
        raise ValueError(f"offsets[-1] must be >= 0, got {offsets[r]}")
    rows.n = X.shape[0]
    rows.d = X.shape[1]
    rows.X = &X[0, 0] if X.shape[0] > 0 and X.shape[1] > 0 else NULL
    rows.dense_weight = dense_weight
    rows.r = r
    rows.labels = &labels[0, 0] if labels.shape[0] > 0 and r > 0 else NULL
    rows.offsets = &offsets[0]
    rows.weights = &weights[0] if r > 0 else NULL
    rows.distance = distance
    rows.p = p
    return 0


cdef int _check_n_clusters(int n_clusters) except -1:
    if n_clusters < 1:
        raise ValueError(f"n_clusters must be >= 1, got {n_clusters}")
    return 0


cdef int _check_centers(const MixedRows* rows, int n_clusters, const double[:, ::1] dense,
                        const double[:, ::1] cat) except -1:
    cdef int64_t width = rows.offsets[rows.r]
    if dense.shape[0] != n_clusters or dense.shape[1] != rows.d:
        raise ValueError(f"dense_centers must have shape ({n_clusters}, {rows.d}), "
                         f"got ({dense.shape[0]}, {dense.shape[1]})")
    if cat.shape[0] != n_clusters or cat.shape[1] != width:
        raise ValueError(f"cat_centers must have shape ({n_clusters}, {width}), "
                         f"got ({cat.shape[0]}, {cat.shape[1]})")
    return 0


cdef inline const double* _cptr(const double[:, ::1] a) noexcept:
    return &a[0, 0] if a.shape[0] > 0 and a.shape[1] > 0 else NULL


cdef inline double* _mptr(double[:, ::1] a) noexcept:
    return &a[0, 0] if a.shape[0] > 0 and a.shape[1] > 0 else NULL


def lloyd(const double[:, ::1] X not None, double dense_weight,
          const int32_t[:, ::1] labels not None, const int64_t[::1] offsets not None,
          const double[::1] weights not None, int distance, double p,
          const int32_t[::1] assignment not None, int n_clusters, Py_ssize_t max_iter,
          double tol, int n_threads):
    """Lloyd iterations from ``assignment`` (copied, never written).

    Returns ``(assignment, trace, n_iter, converged, objective, dense_centers, cat_centers)``:
    int32 (n,) labels, the non-increasing objective per accepted labelling (n_iter + 1 values),
    and the (n_clusters, d) / (n_clusters, offsets[-1]) centroids of the returned labels.
    """
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    _check_n_clusters(n_clusters)
    if assignment.shape[0] != rows.n:
        raise ValueError(f"assignment must have n = {rows.n} entries, got {assignment.shape[0]}")
    if max_iter < 0:
        raise ValueError(f"max_iter must be >= 0, got {max_iter}")
    out = np.array(assignment, dtype=np.int32, copy=True)
    trace = np.empty(max_iter + 1, dtype=np.float64)
    dense = np.empty((n_clusters, rows.d), dtype=np.float64)
    cat = np.empty((n_clusters, offsets[rows.r]), dtype=np.float64)
    cdef int32_t[::1] out_view = out
    cdef double[::1] trace_view = trace
    cdef int32_t* out_ptr = &out_view[0] if rows.n > 0 else NULL
    cdef double* dense_ptr = _mptr(dense)
    cdef double* cat_ptr = _mptr(cat)
    cdef LloydResult res
    with nogil:
        res = _lloyd(rows, n_clusters, out_ptr, max_iter, tol, n_threads, &trace_view[0],
                     dense_ptr, cat_ptr)
    return (out, trace[:res.n_trace].copy(), int(res.n_iter), bool(res.converged),
            float(res.objective), dense, cat)


def assign(const double[:, ::1] X not None, double dense_weight,
           const int32_t[:, ::1] labels not None, const int64_t[::1] offsets not None,
           const double[::1] weights not None, int distance, double p,
           const double[:, ::1] dense_centers not None,
           const double[:, ::1] cat_centers not None, int n_threads):
    """One assignment step: ``(assignment int32 (n,), costs float64 (n,), objective)``."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    cdef int n_clusters = dense_centers.shape[0]
    _check_n_clusters(n_clusters)
    _check_centers(&rows, n_clusters, dense_centers, cat_centers)
    out = np.empty(rows.n, dtype=np.int32)
    costs = np.empty(rows.n, dtype=np.float64)
    cdef int32_t[::1] out_view = out
    cdef double[::1] costs_view = costs
    cdef int32_t* out_ptr = &out_view[0] if rows.n > 0 else NULL
    cdef double* costs_ptr = &costs_view[0] if rows.n > 0 else NULL
    cdef const double* dense_ptr = _cptr(dense_centers)
    cdef const double* cat_ptr = _cptr(cat_centers)
    cdef double total
    with nogil:
        total = _assign(rows, n_clusters, dense_ptr, cat_ptr, out_ptr, costs_ptr, n_threads)
    return out, costs, float(total)


def objective(const double[:, ::1] X not None, double dense_weight,
              const int32_t[:, ::1] labels not None, const int64_t[::1] offsets not None,
              const double[::1] weights not None, int distance, double p,
              const double[:, ::1] dense_centers not None,
              const double[:, ::1] cat_centers not None,
              const int32_t[::1] assignment not None, int n_threads):
    """Cost of ``assignment`` under given centres: ``(costs float64 (n,), objective)``."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    cdef int n_clusters = dense_centers.shape[0]
    _check_n_clusters(n_clusters)
    _check_centers(&rows, n_clusters, dense_centers, cat_centers)
    if assignment.shape[0] != rows.n:
        raise ValueError(f"assignment must have n = {rows.n} entries, got {assignment.shape[0]}")
    costs = np.empty(rows.n, dtype=np.float64)
    cdef double[::1] costs_view = costs
    cdef double* costs_ptr = &costs_view[0] if rows.n > 0 else NULL
    cdef const int32_t* assignment_ptr = &assignment[0] if rows.n > 0 else NULL
    cdef const double* dense_ptr = _cptr(dense_centers)
    cdef const double* cat_ptr = _cptr(cat_centers)
    cdef double total
    with nogil:
        total = _objective(rows, n_clusters, dense_ptr, cat_ptr, assignment_ptr, costs_ptr,
                           n_threads)
    return costs, float(total)


def centroids(const double[:, ::1] X not None, double dense_weight,
              const int32_t[:, ::1] labels not None, const int64_t[::1] offsets not None,
              const double[::1] weights not None, int distance, double p,
              const int32_t[::1] assignment not None, int n_clusters, int n_threads):
    """Centroids of ``assignment`` (-1 = in no cluster): ``(dense_centers, cat_centers)``."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    _check_n_clusters(n_clusters)
    if assignment.shape[0] != rows.n:
        raise ValueError(f"assignment must have n = {rows.n} entries, got {assignment.shape[0]}")
    dense = np.empty((n_clusters, rows.d), dtype=np.float64)
    cat = np.empty((n_clusters, offsets[rows.r]), dtype=np.float64)
    cdef double* dense_ptr = _mptr(dense)
    cdef double* cat_ptr = _mptr(cat)
    cdef const int32_t* assignment_ptr = &assignment[0] if rows.n > 0 else NULL
    with nogil:
        _centroids(rows, n_clusters, assignment_ptr, dense_ptr, cat_ptr, n_threads)
    return dense, cat


def kmeanspp(const double[:, ::1] X not None, double dense_weight,
             const int32_t[:, ::1] labels not None, const int64_t[::1] offsets not None,
             const double[::1] weights not None, int distance, double p, int n_clusters,
             Py_ssize_t first, const double[:, ::1] uniforms not None, int n_threads):
    """Greedy k-means++ seeds, int64 (n_clusters,); ``uniforms`` is (n_clusters - 1, n_trials)."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    _check_n_clusters(n_clusters)
    if uniforms.shape[0] != n_clusters - 1:
        raise ValueError(f"uniforms must have n_clusters - 1 = {n_clusters - 1} rows, "
                         f"got {uniforms.shape[0]}")
    cdef int64_t n_trials = uniforms.shape[1]
    if n_trials < 1:
        raise ValueError(f"uniforms must have at least one column (trial), got {n_trials}")
    seeds = np.empty(n_clusters, dtype=np.int64)
    cdef int64_t[::1] seeds_view = seeds
    cdef const double* uniforms_ptr = _cptr(uniforms)
    with nogil:
        _kmeanspp(rows, n_clusters, first, uniforms_ptr, n_trials, n_threads, &seeds_view[0])
    return seeds
