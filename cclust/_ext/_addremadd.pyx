"""Thin wrappers over the least-squares consensus core (include/cclust/addremadd.hpp).

Callers (cclust.consensus_functions.least_squares) validate; these functions assume C-contiguous arrays
of the right dtype and shape. Memoryviews in, NumPy arrays out, the GIL released.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t

from cclust._ext.core cimport (
    addremadd_cluster as _addremadd_cluster,
    addremadd_partition as _addremadd_partition,
    addremadd_partition_groups as _addremadd_partition_groups,
    addremadd_partition_plain as _addremadd_partition_plain,
    ls_agglomerate as _ls_agglomerate,
)


def cluster(const float[:, ::1] similarity, int64_t seed, double tol, int64_t max_steps,
            int64_t max_trace):
    """One AddRemAdd(seed) run: (membership bool, contribution, lambda, steps, trace)."""
    cdef int64_t n = similarity.shape[0]
    membership = np.zeros(n, dtype=np.uint8)
    trace = np.empty(max(max_trace, 1), dtype=np.float64)
    cdef uint8_t[::1] mem_view = membership
    cdef double[::1] trace_view = trace
    cdef double contribution = 0.0
    cdef double lam = 0.0
    cdef int64_t n_trace = 0
    cdef int64_t steps
    with nogil:
        steps = _addremadd_cluster(&similarity[0, 0], n, seed, tol, max_steps, &mem_view[0],
                                   &contribution, &lam, &trace_view[0], max_trace, &n_trace)
    return membership.astype(bool), contribution, lam, steps, trace[:n_trace].copy()


cdef object _extract(const float[:, ::1] similarity, const int64_t[::1] group_of, int route, double tol,
                     int64_t max_steps, int n_threads):
    """The extraction by `route`: 0 grouped where exact (full matrix), 1 plain (full matrix),
    2 from the matrix of groups (None if its sums are not exact)."""
    cdef int64_t g = similarity.shape[0]
    cdef int64_t n = group_of.shape[0] if route == 2 else g
    labels = np.empty(n, dtype=np.int32)
    contributions = np.empty(n, dtype=np.float64)
    lambdas = np.empty(n, dtype=np.float64)
    seeds = np.empty(n, dtype=np.int64)
    cdef int32_t[::1] lab_view = labels
    cdef double[::1] con_view = contributions
    cdef double[::1] lam_view = lambdas
    cdef int64_t[::1] seed_view = seeds
    cdef int64_t n_updates = 0
    cdef int64_t k
    with nogil:
        if route == 0:
            k = _addremadd_partition(&similarity[0, 0], n, tol, max_steps, n_threads, &lab_view[0],
                                     &con_view[0], &lam_view[0], &seed_view[0], &n_updates)
        elif route == 1:
            k = _addremadd_partition_plain(&similarity[0, 0], n, tol, max_steps, n_threads, &lab_view[0],
                                           &con_view[0], &lam_view[0], &seed_view[0], &n_updates)
        else:
            k = _addremadd_partition_groups(&similarity[0, 0], g, &group_of[0], n, tol, max_steps, n_threads,
                                            &lab_view[0], &con_view[0], &lam_view[0], &seed_view[0], &n_updates)
    if k < 0:
        return None
    return (labels.astype(np.int64), contributions[:k].copy(), lambdas[:k].copy(),
            seeds[:k].copy(), int(n_updates))


def partition(const float[:, ::1] similarity, double tol, int64_t max_steps, int n_threads, bint grouped=True):
    """Repeated AddRemAdd extraction: (labels int64, contributions, lambdas, seeds, n_updates).

    ``grouped=False`` runs every seed on the full matrix even where the grouped extraction
    (identical rows, exact sums) would apply; the results are the same."""
    return _extract(similarity, None, 0 if grouped else 1, tol, max_steps, n_threads)


def partition_groups(const float[:, ::1] similarity, const int64_t[::1] group_of, double tol,
                     int64_t max_steps, int n_threads):
    """Repeated AddRemAdd extraction from the matrix of groups of identical objects
    (``similarity[g, h]`` the similarity of any object of group g to any of group h, group_of
    the group of each object): the same result as ``partition`` on the full matrix, or None if
    its sums would not be exact in float64 (then use ``partition`` on the full matrix)."""
    return _extract(similarity, group_of, 2, tol, max_steps, n_threads)


def agglomerate(const double[:, ::1] gains, int64_t target_k):
    """Greedy merging on the gains: (labels int64 naming the lowest member, merges, merge gains)."""
    cdef int64_t n = gains.shape[0]
    labels = np.empty(n, dtype=np.int32)
    merges = np.empty((max(n - 1, 1), 2), dtype=np.int64)
    merge_gains = np.empty(max(n - 1, 1), dtype=np.float64)
    cdef int32_t[::1] lab_view = labels
    cdef int64_t[:, ::1] merge_view = merges
    cdef double[::1] gain_view = merge_gains
    cdef int64_t m
    with nogil:
        m = _ls_agglomerate(&gains[0, 0], n, target_k, &lab_view[0], &merge_view[0, 0],
                            &gain_view[0])
    return labels.astype(np.int64), merges[:m].copy(), merge_gains[:m].copy()
