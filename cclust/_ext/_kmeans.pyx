"""Thin wrappers over the K-means engine (include/cclust/kmeans.hpp): memoryviews in, NumPy out.

Every function takes the same leading "rows" arguments, so a caller can build them once and
splat them::

    rows = (X, dense_weight, labels, offsets, weights, distance, p)
    assignment, trace, n_iter, converged, objective, dense, cat = lloyd(*rows, init, k, ...)

* ``X`` -- float64 C-contiguous (n, d); an (n, 0) array when there is no dense block.
* ``dense_weight`` -- multiplies the squared Euclidean part.
* ``labels`` -- C-contiguous (n, r) label codes 0..K_i-1: int32 with -1 for missing, or uint16 /
  uint8 with the type's largest value for missing and at most 32767 / 127 clusters a partition
  (``Ensemble.compact_labels``; read in place, never cast); (n, 0) when there is none.
* ``offsets`` -- int64 (r + 1,): partition i's labels are the one-hot columns
  offsets[i]..offsets[i+1]-1.
* ``weights`` -- float64 (r,), effective (already normalised) partition weights.
* ``distance`` -- 0 uc, 1 uh, 2 ucos, 3 ulp; ``p`` -- the exponent of ulp (> 1).

Callers validate (dtypes, finiteness, ranges). These wrappers only check that array sizes agree,
so nothing is read out of bounds; the C++ core checks values and labels. Both raise ValueError.
No input array is written to; the GIL is released around each call.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t

from cclust._ext.core cimport (
    LloydResult,
    MixedRows,
    assign as _assign,
    candidate_costs as _candidate_costs,
    centres_from_tally as _centres_from_tally,
    centroids as _centroids,
    costliest_movable as _costliest_movable,
    reseed as _reseed,
    first_above as _first_above,
    kChunk,
    kStopMaxIter,
    kStopRose,
    kmeanspp as _kmeanspp,
    kmeans_force_simd as _kmeans_force_simd,
    kmeans_group_rows as _kmeans_group_rows,
    kmeans_simd_supported as _kmeans_simd_supported,
    kmeans_simd_variant as _kmeans_simd_variant,
    last_positive as _last_positive,
    lloyd as _lloyd,
    lloyd_pass as _lloyd_pass,
    lloyd_verdict as _lloyd_verdict,
    objective as _objective,
    running_sum as _running_sum,
    tally as _tally,
)

include "label_codes.pxi"

#: objects per chunk of every pass; per-chunk partials are sums over runs of this many rows
CHUNK = kChunk
#: lloyd_verdict's reasons to stop that a driver acts on (the others only end the run)
STOP_MAX_ITER = kStopMaxIter
STOP_ROSE = kStopRose

#: the lookup kernel's instruction-set variants (kmeans.hpp), by their codes
_SIMD_NAMES = ("baseline", "avx2", "avx512")


def simd_variants():
    """The lookup-kernel variants this build and CPU can run, narrowest first. Every variant gives
    bitwise the same results; they differ in speed only."""
    return [name for code, name in enumerate(_SIMD_NAMES) if _kmeans_simd_supported(code)]


def simd_variant():
    """The variant the next call runs: the widest supported, unless the environment variable
    ``CCLUST_KMEANS_SIMD`` (read once) or :func:`_force_simd` chose another."""
    return _SIMD_NAMES[_kmeans_simd_variant()]


def _force_simd(name):
    """Run every later call in variant ``name`` (ValueError if unsupported); None restores the
    automatic choice. Process-wide, for tests and benchmarks."""
    if name is None:
        _kmeans_force_simd(-1)
        return
    if name not in _SIMD_NAMES:
        raise ValueError(f"unknown SIMD variant {name!r}; expected one of {_SIMD_NAMES}")
    _kmeans_force_simd(_SIMD_NAMES.index(name))


def _group_rows(on):
    """Let later calls share one cost computation among objects with identical label rows (the
    default, True) or not (False). The results are the same either way; for tests and benchmarks."""
    _kmeans_group_rows(bool(on))


cdef int _fill_rows(MixedRows* rows, const double[:, ::1] X, double dense_weight,
                    labels, const int64_t[::1] offsets,
                    const double[::1] weights, int distance, double p,
                    const double[::1] object_weights=None, const double[::1] row_scale=None) except -1:
    # The labels' own buffer is read in place: the caller holds the array for the whole call.
    cdef _Codes codes = _Codes(labels)
    rows.label_bytes = codes.width
    shape = (codes.n, codes.r)
    cdef Py_ssize_t r = shape[1]
    if X.shape[0] != shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but labels has {shape[0]}")
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
    rows.labels = codes.ptr
    rows.offsets = &offsets[0]
    rows.weights = &weights[0] if r > 0 else NULL
    rows.distance = distance
    rows.p = p
    rows.object_weights = NULL
    rows.row_scale = NULL
    if object_weights is not None:
        if object_weights.shape[0] != rows.n:
            raise ValueError(f"object_weights must have n = {rows.n} entries, got {object_weights.shape[0]}")
        if rows.n > 0:
            rows.object_weights = &object_weights[0]
    if row_scale is not None:
        if row_scale.shape[0] != rows.n:
            raise ValueError(f"row_scale must have n = {rows.n} entries, got {row_scale.shape[0]}")
        if rows.n > 0:
            rows.row_scale = &row_scale[0]
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
          labels not None, const int64_t[::1] offsets not None,
          const double[::1] weights not None, int distance, double p,
          const int32_t[::1] assignment not None, int n_clusters, Py_ssize_t max_iter,
          double tol, int n_threads,
          const double[::1] object_weights=None, const double[::1] row_scale=None):
    """Lloyd iterations from ``assignment`` (copied, never written).

    Returns ``(assignment, trace, n_iter, converged, objective, dense_centers, cat_centers)``:
    int32 (n,) labels, the non-increasing objective per accepted labelling (n_iter + 1 values),
    and the (n_clusters, d) / (n_clusters, offsets[-1]) centroids of the returned labels.
    """
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p, object_weights, row_scale)
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
           labels not None, const int64_t[::1] offsets not None,
           const double[::1] weights not None, int distance, double p,
           const double[:, ::1] dense_centers not None,
           const double[:, ::1] cat_centers not None, int n_threads,
           const double[::1] object_weights=None, const double[::1] row_scale=None):
    """One assignment step: ``(assignment int32 (n,), costs float64 (n,), objective)``."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p, object_weights, row_scale)
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
              labels not None, const int64_t[::1] offsets not None,
              const double[::1] weights not None, int distance, double p,
              const double[:, ::1] dense_centers not None,
              const double[:, ::1] cat_centers not None,
              const int32_t[::1] assignment not None, int n_threads,
              const double[::1] object_weights=None, const double[::1] row_scale=None):
    """Cost of ``assignment`` under given centres: ``(costs float64 (n,), objective)``."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p, object_weights, row_scale)
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
              labels not None, const int64_t[::1] offsets not None,
              const double[::1] weights not None, int distance, double p,
              const int32_t[::1] assignment not None, int n_clusters, int n_threads,
              const double[::1] object_weights=None, const double[::1] row_scale=None):
    """Centroids of ``assignment`` (-1 = in no cluster): ``(dense_centers, cat_centers)``."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p, object_weights, row_scale)
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
             labels not None, const int64_t[::1] offsets not None,
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


# -- the pieces of lloyd and kmeanspp, for an executor that holds the rows in blocks ----------

def lloyd_verdict(Py_ssize_t it, double objective, double previous_objective,
                  Py_ssize_t changed, Py_ssize_t max_iter, double tol):
    """What lloyd decides after pass ``it``: -1 to go on, else why it stops (kmeans.hpp)."""
    return int(_lloyd_verdict(it, objective, previous_objective, changed, max_iter, tol))


def tally(const double[:, ::1] X not None, double dense_weight,
          labels not None, const int64_t[::1] offsets not None,
          const double[::1] weights not None, int distance, double p,
          const int32_t[::1] assignment not None, int n_clusters, int n_threads):
    """Members and label counts per cluster, a last row for -1: ``(counts, sizes)`` int64 of
    shapes (n_clusters + 1, offsets[-1]) and (n_clusters + 1,)."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    _check_n_clusters(n_clusters)
    if assignment.shape[0] != rows.n:
        raise ValueError(f"assignment must have n = {rows.n} entries, got {assignment.shape[0]}")
    counts = np.empty((n_clusters + 1, offsets[rows.r]), dtype=np.int64)
    sizes = np.empty(n_clusters + 1, dtype=np.int64)
    cdef int64_t[:, ::1] counts_view = counts
    cdef int64_t[::1] sizes_view = sizes
    cdef int64_t* counts_ptr = &counts_view[0, 0] if counts.shape[1] > 0 else NULL
    cdef const int32_t* assignment_ptr = &assignment[0] if rows.n > 0 else NULL
    with nogil:
        _tally(rows, n_clusters, assignment_ptr, counts_ptr, &sizes_view[0], n_threads)
    return counts, sizes


def centres_from_tally(const int64_t[::1] offsets not None, const int64_t[:, ::1] counts not None):
    """Categorical centroids (n_clusters, offsets[-1]) of a tally of n_clusters + 1 rows."""
    cdef int64_t r = offsets.shape[0] - 1
    if r < 0:
        raise ValueError("offsets must have at least one entry")
    cdef int n_clusters = counts.shape[0] - 1
    _check_n_clusters(n_clusters)
    if counts.shape[1] != offsets[r]:
        raise ValueError(f"counts must have offsets[-1] = {offsets[r]} columns, got {counts.shape[1]}")
    cat = np.zeros((n_clusters, offsets[r]), dtype=np.float64)
    cdef double* cat_ptr = _mptr(cat)
    cdef const int64_t* counts_ptr = &counts[0, 0] if counts.shape[1] > 0 else NULL
    with nogil:
        _centres_from_tally(&offsets[0], r, n_clusters, counts_ptr, cat_ptr)
    return cat


def lloyd_pass(const double[:, ::1] X not None, double dense_weight,
               labels not None, const int64_t[::1] offsets not None,
               const double[::1] weights not None, int distance, double p,
               const double[:, ::1] cat_centers not None,
               const int32_t[::1] assignment not None, int n_threads):
    """One lloyd pass (categorical rows): ``(best, best_cost, chunk_objective, moved,
    delta_counts, delta_sizes, objective)``; see kmeans.hpp."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    cdef int n_clusters = cat_centers.shape[0]
    _check_n_clusters(n_clusters)
    if cat_centers.shape[1] != offsets[rows.r]:
        raise ValueError(f"cat_centers must have offsets[-1] = {offsets[rows.r]} columns, "
                         f"got {cat_centers.shape[1]}")
    if assignment.shape[0] != rows.n:
        raise ValueError(f"assignment must have n = {rows.n} entries, got {assignment.shape[0]}")
    best = np.empty(rows.n, dtype=np.int32)
    best_cost = np.empty(rows.n, dtype=np.float64)
    chunk_objective = np.empty((rows.n + kChunk - 1) // kChunk, dtype=np.float64)
    delta_counts = np.empty((n_clusters + 1, offsets[rows.r]), dtype=np.int64)
    delta_sizes = np.empty(n_clusters + 1, dtype=np.int64)
    cdef int32_t[::1] best_view = best
    cdef double[::1] cost_view = best_cost
    cdef double[::1] chunk_view = chunk_objective
    cdef int64_t[:, ::1] counts_view = delta_counts
    cdef int64_t[::1] sizes_view = delta_sizes
    cdef int32_t* best_ptr = &best_view[0] if rows.n > 0 else NULL
    cdef double* cost_ptr = &cost_view[0] if rows.n > 0 else NULL
    cdef double* chunk_ptr = &chunk_view[0] if rows.n > 0 else NULL
    cdef int64_t* counts_ptr = &counts_view[0, 0] if delta_counts.shape[1] > 0 else NULL
    cdef const int32_t* assignment_ptr = &assignment[0] if rows.n > 0 else NULL
    cdef const double* cat_ptr = _cptr(cat_centers)
    cdef int64_t moved = 0
    cdef double total
    with nogil:
        total = _lloyd_pass(rows, n_clusters, cat_ptr, assignment_ptr, best_ptr, cost_ptr,
                            chunk_ptr, &moved, counts_ptr, &sizes_view[0], n_threads)
    return best, best_cost, chunk_objective, int(moved), delta_counts, delta_sizes, float(total)


def costliest_movable(const int32_t[::1] assignment not None, const double[::1] costs not None,
                      const int64_t[::1] sizes not None):
    """lloyd's reseed pick: ``(index, cost)`` of the costliest object whose cluster has at least
    two members, index -1 when none has; assignment must index into sizes."""
    cdef Py_ssize_t n = assignment.shape[0], x
    if costs.shape[0] != n:
        raise ValueError(f"costs must have n = {n} entries, got {costs.shape[0]}")
    for x in range(n):
        if assignment[x] < 0 or assignment[x] >= sizes.shape[0]:
            raise ValueError(f"assignment {assignment[x]} at {x} is outside 0..{sizes.shape[0] - 1}")
    cdef double cost = 0.0
    cdef int64_t pick
    cdef const int32_t* assignment_ptr = &assignment[0] if n > 0 else NULL
    cdef const double* costs_ptr = &costs[0] if n > 0 else NULL
    cdef const int64_t* sizes_ptr = &sizes[0] if sizes.shape[0] > 0 else NULL
    with nogil:
        pick = _costliest_movable(assignment_ptr, costs_ptr, n, sizes_ptr, &cost)
    return int(pick), float(cost)


def reseed(const int32_t[::1] labels not None, const double[::1] costs not None, int n_clusters):
    """lloyd's empty-cluster rule on a labelling: ``labels`` with every empty cluster filled
    (int32, a new array). Raises ValueError if n_clusters exceeds the objects."""
    cdef Py_ssize_t n = labels.shape[0], x
    if costs.shape[0] != n:
        raise ValueError(f"costs must have n = {n} entries, got {costs.shape[0]}")
    _check_n_clusters(n_clusters)
    out = np.array(labels, dtype=np.int32, copy=True)
    sizes = np.zeros(n_clusters, dtype=np.int64)
    cdef int32_t[::1] out_view = out
    cdef int64_t[::1] sizes_view = sizes
    for x in range(n):
        if out_view[x] < 0 or out_view[x] >= n_clusters:
            raise ValueError(f"labels[{x}] = {out_view[x]} is outside 0..{n_clusters - 1}")
        sizes_view[out_view[x]] += 1
    with nogil:
        _reseed(&out_view[0] if n > 0 else NULL, &costs[0] if n > 0 else NULL, n, &sizes_view[0],
                n_clusters)
    return out


def _candidate_buffers(Py_ssize_t n, Py_ssize_t n_candidates, closest):
    """A candidate pass's ``closest`` (checked: float64 (n,) or None) and its outputs ``dist``
    (n_candidates, n) and ``chunk_potentials`` (n_chunks, n_candidates)."""
    if closest is not None:
        closest = np.asarray(closest)
        if closest.dtype != np.float64 or closest.ndim != 1 or not closest.flags.c_contiguous:
            raise ValueError("closest must be a C-contiguous float64 vector")
        if closest.shape[0] != n:
            raise ValueError(f"closest must have n = {n} entries, got {closest.shape[0]}")
    return (closest, np.empty((n_candidates, n), dtype=np.float64),
            np.empty(((n + kChunk - 1) // kChunk, n_candidates), dtype=np.float64))


cdef const double* _optional_ptr(const double[::1] v):
    """The first element of a vector that the caller keeps alive; NULL for None or empty."""
    return &v[0] if v is not None and v.shape[0] > 0 else NULL


def candidate_costs(const double[:, ::1] X not None, double dense_weight,
                    labels not None, const int64_t[::1] offsets not None,
                    const double[::1] weights not None, int distance, double p,
                    const int32_t[:, ::1] candidate_labels not None, closest, int n_threads):
    """One k-means++ candidate pass (categorical rows): ``(dist, chunk_potentials)`` of shapes
    (n_candidates, n) and (n_chunks, n_candidates); ``closest`` is float64 (n,) or None."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    cdef int64_t n_candidates = candidate_labels.shape[0]
    if n_candidates < 1:
        raise ValueError("candidate_labels must hold at least one candidate")
    if candidate_labels.shape[1] != rows.r:
        raise ValueError(f"candidate_labels must have r = {rows.r} columns, "
                         f"got {candidate_labels.shape[1]}")
    closest, dist, chunk_potentials = _candidate_buffers(rows.n, n_candidates, closest)
    cdef const double* closest_ptr = _optional_ptr(closest)
    cdef double* dist_ptr = _mptr(dist)
    cdef double* chunk_ptr = _mptr(chunk_potentials)
    cdef const int32_t* cand_ptr = &candidate_labels[0, 0] if rows.r > 0 else NULL
    with nogil:
        _candidate_costs(rows, n_candidates, cand_ptr, closest_ptr, dist_ptr, chunk_ptr, n_threads)
    return dist, chunk_potentials


def draw_positions(const double[::1] values not None, double start, const double[::1] targets not None):
    """The k-means++ draw over a block that continues a running sum at ``start``: ``(end,
    positions, last_positive)`` with end the running sum after the block, positions[t] the first
    x with start + values[0] + ... + values[x] > targets[t] (len(values) if none) and
    last_positive the last x with values[x] > 0 (-1 if none)."""
    cdef Py_ssize_t n = values.shape[0], t
    cum = np.empty(n, dtype=np.float64)
    positions = np.empty(targets.shape[0], dtype=np.int64)
    cdef double[::1] cum_view = cum
    cdef int64_t[::1] pos_view = positions
    cdef double* cum_ptr = &cum_view[0] if n > 0 else NULL
    cdef const double* values_ptr = &values[0] if n > 0 else NULL
    cdef double end
    cdef int64_t last
    with nogil:
        end = _running_sum(values_ptr, n, start, cum_ptr)
        for t in range(targets.shape[0]):
            pos_view[t] = _first_above(cum_ptr, n, targets[t])
        last = _last_positive(values_ptr, n)
    return float(end), positions, int(last)


# -- GKCC's candidate runs of one greedy step -----------------------------------------------------
from cclust._ext.core cimport candidate_runs as _candidate_runs


def candidate_runs(const double[:, ::1] X not None, double dense_weight,
                   labels not None, const int64_t[::1] offsets not None,
                   const double[::1] weights not None, int distance, double p,
                   const double[:, ::1] shared_dense not None, const double[:, ::1] shared_cat not None,
                   const double[:, ::1] seed_dense not None, const double[:, ::1] seed_cat not None,
                   Py_ssize_t max_iter, double tol, int n_threads, Py_ssize_t memo_bytes,
                   label_dtype=np.int32, Py_ssize_t seed_batch=4):
    """Every candidate of a GKCC step: ``assign`` to the shared centres plus seed ``j``, then
    ``lloyd`` (kmeans.hpp). Returns ``(labels (n_candidates, n), objectives, n_iter, stats)``;
    the labels are codes of ``label_dtype`` (uint8, uint16 or int32; it must hold the
    n_shared + 1 clusters: at most 127 in uint8, 32767 in uint16); stats = costs computed, costs
    skipped by a bound, Lloyd passes, passes from the memo (of at most ``memo_bytes``), costs
    of a full pass. The seed centres' cost columns are computed ``seed_batch`` candidates at a
    time (>= 1; the result does not depend on it)."""
    cdef MixedRows rows
    _fill_rows(&rows, X, dense_weight, labels, offsets, weights, distance, p)
    cdef int n_shared = shared_dense.shape[0]
    cdef int64_t n_candidates = seed_dense.shape[0]
    _check_centers(&rows, n_shared, shared_dense, shared_cat) if n_shared > 0 else None
    if n_candidates > 0:
        if seed_dense.shape[1] != rows.d or seed_cat.shape[0] != n_candidates or seed_cat.shape[1] != offsets[rows.r]:
            raise ValueError(f"seed centres must have shapes ({n_candidates}, {rows.d}) and "
                             f"({n_candidates}, {offsets[rows.r]})")
    if shared_cat.shape[0] != n_shared:
        raise ValueError(f"shared_cat must have {n_shared} rows, got {shared_cat.shape[0]}")
    label_dtype = np.dtype(label_dtype)
    if label_dtype not in (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.int32)):
        raise ValueError(f"label_dtype must be uint8, uint16 or int32, got {label_dtype}")
    cdef int32_t label_bytes = label_dtype.itemsize
    out = np.empty((n_candidates, rows.n), dtype=label_dtype)
    objectives = np.empty(n_candidates, dtype=np.float64)
    n_iter = np.empty(n_candidates, dtype=np.int64)
    stats = np.zeros(5, dtype=np.int64)
    cdef uint8_t[:, ::1] out_view = out.view(np.uint8)
    cdef double[::1] obj_view = objectives
    cdef int64_t[::1] iter_view = n_iter
    cdef int64_t[::1] stats_view = stats
    cdef void* out_ptr = &out_view[0, 0] if n_candidates > 0 and rows.n > 0 else NULL
    cdef double* obj_ptr = &obj_view[0] if n_candidates > 0 else NULL
    cdef int64_t* iter_ptr = &iter_view[0] if n_candidates > 0 else NULL
    cdef const double* sd = _cptr(shared_dense)
    cdef const double* sc = _cptr(shared_cat)
    cdef const double* cd = _cptr(seed_dense)
    cdef const double* cc = _cptr(seed_cat)
    with nogil:
        _candidate_runs(rows, n_shared, sd, sc, n_candidates, cd, cc, max_iter, tol, n_threads,
                        memo_bytes, seed_batch, out_ptr, label_bytes, obj_ptr, iter_ptr, &stats_view[0])
    return out, objectives, n_iter, stats


# -- dense rows held in row blocks (the transfer-cut k-means of a row-block executor) ------------
from cclust._ext.core cimport dense_block_pass as _dense_block_pass
from cclust._ext.core cimport dense_block_sums as _dense_block_sums
from cclust._ext.core cimport dense_candidate_costs as _dense_candidate_costs


cdef int _fill_dense(MixedRows* rows, const double[:, ::1] X) except -1:
    """Rows of a plain dense k-means (weight 1, no partitions), as ``MixedSpace.dense`` gives."""
    return _fill_rows(rows, X, 1.0, np.empty((X.shape[0], 0), dtype=np.int32), np.zeros(1, dtype=np.int64),
                      np.empty(0), 0, 0.0)


def dense_block_pass(const double[:, ::1] X not None, const double[:, ::1] dense_centers not None,
                     assignment, int n_threads):
    """One pass of a dense block (kmeans.hpp): a ``lloyd`` pass from ``assignment`` (int32 (n,)),
    or ``assign`` when it is None. Returns ``(best, best_cost, chunk_objective, moved, chunk_sums,
    sizes)``; chunk_sums is (n_chunks, n_clusters, d), each chunk's row sums per best cluster."""
    cdef MixedRows rows
    _fill_dense(&rows, X)
    cdef int n_clusters = dense_centers.shape[0]
    _check_n_clusters(n_clusters)
    if dense_centers.shape[1] != rows.d:
        raise ValueError(f"dense_centers must have d = {rows.d} columns, got {dense_centers.shape[1]}")
    cdef const int32_t[::1] given
    cdef const int32_t* given_ptr = NULL
    if assignment is not None:
        given = assignment
        if given.shape[0] != rows.n:
            raise ValueError(f"assignment must have n = {rows.n} entries, got {given.shape[0]}")
        given_ptr = &given[0] if rows.n > 0 else NULL
    cdef int64_t chunks = (rows.n + kChunk - 1) // kChunk
    best = np.empty(rows.n, dtype=np.int32)
    best_cost = np.empty(rows.n, dtype=np.float64)
    chunk_objective = np.empty(chunks, dtype=np.float64)
    chunk_sums = np.empty((chunks, n_clusters, rows.d), dtype=np.float64)
    sizes = np.empty(n_clusters, dtype=np.int64)
    cdef int32_t[::1] best_view = best
    cdef double[::1] cost_view = best_cost
    cdef double[::1] objective_view = chunk_objective
    cdef double[:, :, ::1] sums_view = chunk_sums
    cdef int64_t[::1] sizes_view = sizes
    cdef int32_t* best_ptr = &best_view[0] if rows.n > 0 else NULL
    cdef double* cost_ptr = &cost_view[0] if rows.n > 0 else NULL
    cdef double* objective_ptr = &objective_view[0] if rows.n > 0 else NULL
    cdef double* sums_ptr = &sums_view[0, 0, 0] if rows.n > 0 and rows.d > 0 else NULL
    cdef const double* centres_ptr = _cptr(dense_centers)
    cdef int64_t moved = 0
    cdef double total
    with nogil:
        total = _dense_block_pass(rows, n_clusters, centres_ptr, given_ptr, best_ptr, cost_ptr, objective_ptr,
                                  &moved, sums_ptr, &sizes_view[0], n_threads)
    return best, best_cost, chunk_objective, int(moved), chunk_sums, sizes


def dense_block_sums(const double[:, ::1] X not None, const int32_t[::1] assignment not None, int n_clusters,
                     int n_threads):
    """``(chunk_sums, sizes)`` of ``dense_block_pass`` for the labels ``assignment`` (no pass)."""
    cdef MixedRows rows
    _fill_dense(&rows, X)
    _check_n_clusters(n_clusters)
    if assignment.shape[0] != rows.n:
        raise ValueError(f"assignment must have n = {rows.n} entries, got {assignment.shape[0]}")
    chunk_sums = np.empty(((rows.n + kChunk - 1) // kChunk, n_clusters, rows.d), dtype=np.float64)
    sizes = np.empty(n_clusters, dtype=np.int64)
    cdef double[:, :, ::1] sums_view = chunk_sums
    cdef int64_t[::1] sizes_view = sizes
    cdef double* sums_ptr = &sums_view[0, 0, 0] if rows.n > 0 and rows.d > 0 else NULL
    cdef const int32_t* assignment_ptr = &assignment[0] if rows.n > 0 else NULL
    with nogil:
        _dense_block_sums(rows, n_clusters, assignment_ptr, sums_ptr, &sizes_view[0], n_threads)
    return chunk_sums, sizes


def dense_candidate_costs(const double[:, ::1] X not None, const double[:, ::1] candidates not None, closest,
                          int n_threads):
    """One k-means++ candidate pass of a dense block (kmeans.hpp): ``(dist, chunk_potentials)``
    of shapes (n_candidates, n) and (n_chunks, n_candidates); ``closest`` is float64 (n,) or None."""
    cdef MixedRows rows
    _fill_dense(&rows, X)
    cdef int64_t n_candidates = candidates.shape[0]
    if n_candidates < 1:
        raise ValueError("candidates must hold at least one row")
    if candidates.shape[1] != rows.d:
        raise ValueError(f"candidates must have d = {rows.d} columns, got {candidates.shape[1]}")
    closest, dist, chunk_potentials = _candidate_buffers(rows.n, n_candidates, closest)
    cdef const double* closest_ptr = _optional_ptr(closest)
    cdef double* dist_ptr = _mptr(dist)
    cdef double* chunk_ptr = _mptr(chunk_potentials)
    cdef const double* cand_ptr = _cptr(candidates)
    with nogil:
        _dense_candidate_costs(rows, n_candidates, cand_ptr, closest_ptr, dist_ptr, chunk_ptr, n_threads)
    return dist, chunk_potentials


# -- Dense k-means with exact bounds, U-SPEC's representatives ----------------------------------
cdef extern from "cclust/kmeans.hpp" namespace "cclust" nogil:
    LloydResult _dense_lloyd_bounded "cclust::dense_lloyd_bounded"(
        const double* X, int64_t n, int64_t d, int32_t n_clusters, const int64_t* seeds,
        int64_t max_iter, double tol, int n_threads, int32_t* assignment, double* centers,
        int64_t* stats) except +


def dense_lloyd_bounded(const double[:, ::1] X not None, const int64_t[::1] seeds not None,
                        Py_ssize_t max_iter, double tol, int n_threads):
    """``assign`` to the seed rows ``X[seeds]``, then ``lloyd`` (dense rows, no partitions, no
    weights), bit for bit, with exact bounds (kmeans.hpp). Returns ``(assignment int32 (n,),
    n_iter, converged, objective, centers (k, d), stats)``; stats = objects whose costs were all
    computed, objects settled by a bound (over all passes)."""
    cdef int64_t n = X.shape[0], d = X.shape[1]
    cdef int k = seeds.shape[0]
    if n < 1 or d < 1 or k < 1:
        raise ValueError(f"dense_lloyd_bounded needs n, d and the seeds >= 1, got {n}, {d}, {k}")
    out = np.empty(n, dtype=np.int32)
    centers = np.empty((k, d), dtype=np.float64)
    stats = np.zeros(2, dtype=np.int64)
    cdef int32_t[::1] out_view = out
    cdef double[:, ::1] c_view = centers
    cdef int64_t[::1] stats_view = stats
    cdef LloydResult res
    with nogil:
        res = _dense_lloyd_bounded(&X[0, 0], n, d, k, &seeds[0], max_iter, tol, n_threads, &out_view[0],
                                   &c_view[0, 0], &stats_view[0])
    return out, int(res.n_iter), bool(res.converged), float(res.objective), centers, stats
